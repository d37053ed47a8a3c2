"""The CTranslate2 backends grade exactly like the transformers backends in float32.

Real CTranslate2 runs models converted from tiny random T5, GPT-2 and Llama models built offline
(grader-like: several different grades, some answers run past the first steps so the fallback to
full generation is exercised); each grade, each answer text and each choice probability is
compared with ``hf-seq2seq`` / ``hf-causal`` on the same prompts.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter

import pytest
import torch

from helpers.tiny_models import PROMPT_HEAD, rating_prompts
from rubric.errors import UserError
from rubric.llm.base import Answer, ChoiceRater, Request, TextGenerator, TokenCounter
from rubric.llm.cache_dir import models_dir
from rubric.llm.registry import make_backend
from rubric.prompting.parse import get_parser

pytest.importorskip("ctranslate2")
pytestmark = pytest.mark.usefixtures("private_models")  # conversions of throwaway models stay here

PAIRS = 2000
HEAD = PROMPT_HEAD
prompts = rating_prompts


def rated(backend, texts: list[str]) -> list[Answer]:
    got = backend.rate([Request(t) for t in texts], get_parser("self_rating").choices)
    assert all(isinstance(r, Answer) for r in got), [r for r in got if not isinstance(r, Answer)][:3]
    return got


def assert_same_grades(reference: list[Answer], got: list[Answer]) -> None:
    """Same answer text (hence grade) for every prompt; the choice probabilities agree to 1e-4."""
    parse = get_parser("self_rating").parse
    assert [parse(r.text) for r in got] == [parse(r.text) for r in reference]
    assert [r.text for r in got] == [r.text for r in reference]
    worst = max(
        abs(a.probabilities[c] - b.probabilities[c])
        for a, b in zip(reference, got, strict=True)
        for c in a.probabilities
    )
    assert worst < 1e-4, worst


@pytest.fixture(scope="module")
def grader_t5(tmp_path_factory, hf_tiny):
    return hf_tiny.build_t5(tmp_path_factory.mktemp("grader-t5"), grader_like=True, seed=1)


@pytest.fixture(scope="module")
def llama_dir(tmp_path_factory, hf_tiny):
    return hf_tiny.build_llama(tmp_path_factory.mktemp("llama"))


def test_ct2_seq2seq_grades_like_transformers_on_2000_pairs(grader_t5, words):
    texts = prompts(words, PAIRS, 5)
    options = {"max_new_tokens": 6, "batch_size": 16, "device": "cpu"}
    hf = make_backend("hf-seq2seq", str(grader_t5), **options)
    ct2 = make_backend("ct2-seq2seq", str(grader_t5), threads=2, **options)  # 2 batches at once
    assert ct2.replicas == 2
    reference = rated(hf, texts)
    counts = Counter(r.text for r in reference)
    assert len(counts) >= 3 and counts.most_common(1)[0][1] < 0.8 * PAIRS, counts  # answers vary
    assert hf.stats.fallbacks > 50  # some answers are generated to the end
    assert_same_grades(reference, rated(ct2, texts))
    assert ct2.stats.fallbacks == hf.stats.fallbacks
    # free generation too (longer answers, no first-step shortcut)
    free = [Request(t) for t in texts[:300]]
    assert [r.text for r in ct2.generate(free)] == [r.text for r in hf.generate(free)]


def test_ct2_causal_grades_like_transformers_on_2000_pairs(gpt2_dir, llama_dir, words):
    """GPT-2 (raw prompts) and Llama (a chat template), 1,000 pairs each."""
    texts = prompts(words, PAIRS // 4, 6, head=HEAD) + prompts(words, PAIRS // 4, 7)
    for folder in (gpt2_dir, llama_dir):
        options = {"max_new_tokens": 6, "batch_size": 16, "device": "cpu"}
        hf = make_backend("hf-causal", str(folder), **options)
        ct2 = make_backend("ct2-causal", str(folder), threads=2, **options)
        reference = rated(hf, texts)
        counts = Counter(r.text for r in reference)
        assert len(counts) >= 2 and counts.most_common(1)[0][1] < 0.85 * len(texts), (folder, counts)
        assert hf.stats.fallbacks > 50
        assert_same_grades(reference, rated(ct2, texts))
        assert ct2.options()["chat_template"] == hf.options()["chat_template"]
        free = [Request(t, system="answer with a digit") for t in texts[:200]]
        assert [r.text for r in ct2.generate(free)] == [r.text for r in hf.generate(free)]


def test_ct2_contract_options_and_token_counts(t5_dir, words):
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        ct2 = make_backend("ct2-seq2seq", str(t5_dir), device="cpu", threads=2)
        assert torch.get_num_threads() == 3  # CTranslate2's load set it to 1 (its intra_threads)
    finally:
        torch.set_num_threads(before)
    hf = make_backend("hf-seq2seq", str(t5_dir), device="cpu")
    assert isinstance(ct2, ChoiceRater) and isinstance(ct2, TextGenerator) and isinstance(ct2, TokenCounter)
    assert ct2.options() == hf.options() | {"compute_type": "float32"}
    assert ct2.kernel_summary() == "CTranslate2 float32 on cpu, 2 thread(s), 2 batches at once"
    one = make_backend("ct2-seq2seq", str(t5_dir), device="cpu", threads=1)
    assert one.kernel_summary() == "CTranslate2 float32 on cpu, 1 thread(s)"
    # results arrive from the calling thread, batch by batch, each prompt once
    batches: list[list[int]] = []
    threads: set[int] = set()

    def arrived(batch):
        batches.append([i for i, _ in batch])
        threads.add(threading.get_ident())

    got = ct2.generate([Request(t) for t in prompts(words, 40, 3)], arrived)
    assert sorted(i for b in batches for i in b) == list(range(40)) and len(batches) >= 5
    assert threads == {threading.get_ident()}
    alone = one.generate([Request(t) for t in prompts(words, 40, 3)])
    assert [r.text for r in got] == [r.text for r in alone]
    texts = prompts(words, 20, 9)
    requests = [Request(t) for t in texts]
    assert ct2.token_lengths(requests) == hf.token_lengths(requests)
    assert ct2.token_offsets(texts[0]) == hf.token_offsets(texts[0])
    assert ct2.max_input_tokens == 512
    # contexts longer than max_input_tokens are cut as the tokenizer cuts them, in both engines
    long = [Request(" ".join(words * 3))]
    short = {"max_input_tokens": 40, "max_new_tokens": 4, "device": "cpu"}
    assert [r.text for r in make_backend("ct2-seq2seq", str(t5_dir), **short).generate(long)] == [
        r.text for r in make_backend("hf-seq2seq", str(t5_dir), **short).generate(long)
    ]


def test_converted_once_per_compute_type_and_nothing_half_written(t5_dir, caplog):
    caplog.set_level(logging.INFO, logger="rubric")  # the "converting" note is the rubric logger's
    ct2_models = models_dir() / "ct2"
    make_backend("ct2-seq2seq", str(t5_dir), device="cpu")
    caplog.clear()
    make_backend("ct2-seq2seq", str(t5_dir), device="cpu")  # the cached conversion: no new one
    assert "converting" not in caplog.text
    int8 = make_backend("ct2-seq2seq", str(t5_dir), device="cpu", compute_type="int8")
    assert "converting" in caplog.text
    assert int8.options()["compute_type"] == "int8"
    names = sorted(p.name for p in ct2_models.iterdir())
    assert [n.rsplit("-", 1)[1] for n in names] == ["float32", "int8"]
    assert all(n.startswith(t5_dir.name) for n in names)
    assert not [p for p in ct2_models.iterdir() if p.name.startswith(".")]  # no temporary folder left


def test_option_errors(t5_dir, gpt2_dir):
    with pytest.raises(UserError, match=r"^compute_type float16: this CPU does not support it \(it supports"):
        make_backend("ct2-seq2seq", str(t5_dir), device="cpu", compute_type="float16")
    with pytest.raises(UserError, match="compute_type: expected one of auto, float32, int8"):
        make_backend("ct2-seq2seq", str(t5_dir), device="cpu", compute_type="int4")
    with pytest.raises(
        UserError, match="^attention: applies to the transformers backends, not to ct2-seq2seq"
    ):
        make_backend("ct2-seq2seq", str(t5_dir), attention="sdpa")
    with pytest.raises(UserError, match="^dtype: ct2-causal takes compute_type"):
        make_backend("ct2-causal", str(gpt2_dir), dtype="bfloat16")
    with pytest.raises(UserError, match="^compute_type: applies to the ct2 backends, not to hf-seq2seq"):
        make_backend("hf-seq2seq", str(t5_dir), compute_type="int8")
    with pytest.raises(UserError, match="a model for backend ct2-causal, not ct2-seq2seq"):
        make_backend("ct2-seq2seq", str(gpt2_dir))
    import ctranslate2

    if ctranslate2.get_cuda_device_count() == 0:
        with pytest.raises(UserError, match="^device cuda: CTranslate2 sees 0 CUDA device"):
            make_backend("ct2-seq2seq", str(t5_dir), device="cuda")


def test_cuda_without_its_libraries_is_one_line_and_auto_takes_the_cpu(caplog):
    """The CTranslate2 wheels want CUDA 12's cuBLAS; a machine with a GPU but other CUDA libraries
    (seen on an H200 with CUDA 13 only) failed at the first matrix product, mid-run. A GPU machine
    is a stand-in here (one device counted); the library check itself is real (a name no loader has)."""
    from types import SimpleNamespace

    from rubric.llm.ct2_models import missing_cuda_library, resolve_ct2_device

    one_gpu = SimpleNamespace(get_cuda_device_count=lambda: 1)
    absent = ("librubric-no-such-cublas.so.12",)
    assert missing_cuda_library(absent).startswith("librubric-no-such-cublas.so.12: ")
    assert missing_cuda_library(("libc.so.6",)) is None
    with pytest.raises(UserError, match=r"^device cuda: CTranslate2's CUDA libraries do not load") as e:
        resolve_ct2_device(one_gpu, "cuda", absent)
    assert "\n" not in str(e.value) and "nvidia-cublas-cu12" in str(e.value)
    assert resolve_ct2_device(one_gpu, "auto", absent) == ("cpu", 0)
    assert [r.getMessage()[:28] for r in caplog.records] == ["CTranslate2 runs on the CPU:"]  # logged
    assert resolve_ct2_device(one_gpu, "cuda:0", ("libc.so.6",)) == ("cuda", 0)
    assert resolve_ct2_device(one_gpu, "cpu", absent) == ("cpu", 0)
