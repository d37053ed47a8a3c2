"""The CTranslate2 backends given what they cannot use, through the real CLI: a model CTranslate2
cannot convert, a compute type the CPU lacks, the extra not installed, options of the other
engine. Each is one ``rubric: error:`` line (exit 2), no output file, and nothing converted
half-way in the model cache."""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

import pytest

from helpers import BANKS, faults

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
pytest.importorskip("ctranslate2")
pytestmark = pytest.mark.usefixtures("private_models")


@pytest.fixture(scope="module")
def passages(tmp_path_factory) -> Path:
    from helpers import TINY
    from helpers import cli as root_conftest

    tiny = TINY
    out = tmp_path_factory.mktemp("pool") / "passages.jsonl.gz"
    r = root_conftest.run_cli(
        "convert", "runs", "--queries", tiny / "queries.tsv", "--collection", tiny / "collection.tsv",
        tiny / "run.alpha", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(scope="module")
def openai_gpt(tmp_path_factory, gpt2_dir) -> Path:
    """A tiny original-GPT model (a causal LM transformers runs, CTranslate2 has no converter for)."""
    from transformers import OpenAIGPTConfig, OpenAIGPTLMHeadModel

    folder = tmp_path_factory.mktemp("openai-gpt")
    OpenAIGPTLMHeadModel(OpenAIGPTConfig(vocab_size=120, n_embd=16, n_layer=1, n_head=2)).save_pretrained(
        folder
    )
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(gpt2_dir / name, folder / name)
    return folder


def grade(cli, passages: Path, out: Path, *extra: object):
    return cli("grade", passages, "--bank", BANKS / "questions.jsonl", "-p", SELF, "-o", out, *extra)


def converted(cache: Path) -> list[str]:
    folder = cache / "models" / "ct2"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def test_a_model_ctranslate2_cannot_convert(cli, user_error, tmp_path, passages, openai_gpt, private_models):
    out = tmp_path / "out.jsonl.gz"
    r = grade(cli, passages, out, "--backend", "ct2-causal", "--model", openai_gpt)
    user_error(
        r, f"--model {openai_gpt}: CTranslate2 ", "cannot convert it: no converter for OpenAIGPTConfig"
    )
    assert not out.exists()
    assert converted(private_models) == []  # the temporary folder is gone too


def test_a_compute_type_the_cpu_lacks(cli, user_error, tmp_path, passages, t5_dir, private_models):
    out = tmp_path / "out.jsonl.gz"
    for compute_type in ("float16", "int8_float16"):
        r = grade(cli, passages, out, "--backend", "ct2-seq2seq", "--model", t5_dir, "--device", "cpu",
                  "--compute-type", compute_type)  # fmt: skip
        user_error(r, f"--compute-type {compute_type}: this CPU does not support it (it supports ")
    r = grade(cli, passages, out, "--backend", "ct2-seq2seq", "--model", t5_dir, "--compute-type", "int3")
    user_error(r, "--compute-type': 'int3' is not one of 'auto', 'float32', 'int8', 'int8_float16'")
    assert not out.exists() and converted(private_models) == []


def test_the_extra_not_installed(cli, user_error, tmp_path, passages, t5_dir, gpt2_dir, monkeypatch):
    monkeypatch.setitem(sys.modules, "ctranslate2", None)  # what `import ctranslate2` meets without it
    out = tmp_path / "out.jsonl.gz"
    for backend, model in (("ct2-seq2seq", t5_dir), ("ct2-causal", gpt2_dir)):
        r = grade(cli, passages, out, "--backend", backend, "--model", model)
        user_error(r, f"--backend {backend} needs ctranslate2", "pip install 'rubric-workbench[ct2]'")
    assert not out.exists()


def test_options_of_the_other_engine_and_bad_models(cli, user_error, tmp_path, passages, t5_dir, gpt2_dir):
    out = tmp_path / "out.jsonl.gz"
    ct2 = ["--backend", "ct2-seq2seq", "--model", t5_dir]
    user_error(grade(cli, passages, out, *ct2, "--threads", "-1"), "--threads: must be at least 0, got -1")
    user_error(
        grade(cli, passages, out, *ct2, "--attention", "sdpa"), "--attention: applies to the transformers"
    )
    user_error(
        grade(cli, passages, out, *ct2, "--dtype", "float16"), "--dtype: ct2-seq2seq takes --compute-type"
    )
    user_error(
        grade(cli, passages, out, "--model", t5_dir, "--compute-type", "int8"),
        "--compute-type: applies to the ct2 backends, not to hf-seq2seq",
    )
    user_error(
        grade(cli, passages, out, "--backend", "ct2-seq2seq", "--model", gpt2_dir),
        "a model for --backend ct2-causal, not ct2-seq2seq",
    )
    empty = tmp_path / "empty"
    empty.mkdir()
    user_error(grade(cli, passages, out, "--backend", "ct2-seq2seq", "--model", empty), "holds no model")
    assert not out.exists()


def test_a_read_only_model_cache_is_one_line(cli, user_error, tmp_path, passages, gpt2_dir, private_models):
    """(Was a traceback: OSError creating the conversion folder.)"""
    with faults.read_only_folder(tmp_path) as folder:
        cache = folder / "cache"
        out = tmp_path / "out.jsonl.gz"
        r = cli(
            "grade", passages, "--bank", BANKS / "questions.jsonl", "-p", SELF, "-o", out,
            "--backend", "ct2-causal", "--model", gpt2_dir, "--no-cache",
            env={"RUBRIC_CACHE_DIR": str(cache)},
        )  # fmt: skip
        user_error(
            r, f"--model {gpt2_dir}: cannot convert it into {cache / 'models' / 'ct2'}", "RUBRIC_CACHE_DIR"
        )
        assert not out.exists()


def test_a_truncated_cached_conversion_is_converted_again(cli, tmp_path, passages, gpt2_dir, private_models):
    """(Was a traceback, "invalid payload size", on every later run: it was never converted again.)"""
    first, second = tmp_path / "a.jsonl.gz", tmp_path / "b.jsonl.gz"
    args = ["--backend", "ct2-causal", "--model", gpt2_dir, "--no-cache"]
    r = grade(cli, passages, first, *args)
    assert r.returncode == 0, r.stderr
    [name] = converted(private_models)
    model_bin = private_models / "models" / "ct2" / name / "model.bin"
    whole = model_bin.read_bytes()
    model_bin.write_bytes(whole[: len(whole) // 2])
    r = grade(cli, passages, second, *args)
    assert r.returncode == 0, r.stderr
    assert "is damaged" in r.stderr and "converting it again" in r.stderr
    assert model_bin.read_bytes() == whole and converted(private_models) == [name]
    assert gzip.decompress(first.read_bytes()) == gzip.decompress(second.read_bytes())
