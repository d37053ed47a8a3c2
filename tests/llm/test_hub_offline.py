"""A model that is not on this machine: HF_HUB_OFFLINE read as huggingface_hub reads it, and an
unreachable hub said in one line at once instead of a minute of retries."""

from __future__ import annotations

import time

import pytest

from rubric.errors import UserError
from rubric.llm.hf_common import check_hub_reachable, hub_offline, load_pretrained


@pytest.mark.parametrize(
    ("value", "offline"),
    [("1", True), ("true", True), ("ON", True), ("yes", True), ("0", False), ("", False), ("false", False)],
)
def test_hf_hub_offline_is_read_by_its_value(monkeypatch, value, offline):
    monkeypatch.setenv("HF_HUB_OFFLINE", value)
    assert hub_offline() is offline


def test_unreachable_hub_fails_at_once_naming_the_model(monkeypatch):
    pytest.importorskip("transformers")
    from transformers import AutoConfig

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # the discard port: nothing listens
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    start = time.monotonic()
    with pytest.raises(UserError) as e:
        load_pretrained(AutoConfig, "no-such-org/no-such-model")
    assert time.monotonic() - start < 30
    message = str(e.value)
    assert message.startswith("model no-such-org/no-such-model: not on this machine")
    assert "127.0.0.1 cannot be reached" in message and "HF_HUB_OFFLINE is set" not in message


def test_offline_hint_only_when_offline(monkeypatch):
    pytest.importorskip("transformers")
    from transformers import AutoConfig

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match=r"\(offline: HF_HUB_OFFLINE is set\)"):
        load_pretrained(AutoConfig, "no-such-org/no-such-model")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    with pytest.raises(UserError) as e:
        check_hub_reachable("m", timeout=1)
    assert "offline" not in str(e.value)


def test_ct2_a_model_not_here_fails_at_once_and_names_offline_only_when_set(monkeypatch, tmp_path):
    pytest.importorskip("huggingface_hub")
    from rubric.llm.ct2_models import source_folder

    monkeypatch.setenv("HF_HOME", str(tmp_path))  # an empty Hugging Face cache
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    for var in ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    start = time.monotonic()
    with pytest.raises(UserError) as e:
        source_folder("no-such-org/no-such-model")
    assert time.monotonic() - start < 30
    assert "127.0.0.1 cannot be reached" in str(e.value) and "offline" not in str(e.value)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(UserError, match=r"cannot download it \(offline: HF_HUB_OFFLINE is set\)"):
        source_folder("no-such-org/no-such-model")
