"""HF backends on tiny random models: exact fast rating, span decoding, batching, registry."""

from __future__ import annotations

import random

import pytest

from rubric.errors import UserError
from rubric.grading.parse import get_parser
from rubric.llm.hf_common import sorted_batches
from rubric.llm.hf_qa import HFQuestionAnswering
from rubric.llm.registry import BACKENDS, make_backend


def random_prompts(words: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) + " rating :" for _ in range(n)]


def check_fast_equals_generation(backend, prompts: list[str]) -> tuple[int, int]:
    """Fast rating gives exactly greedy generation's answers (hence parses); returns (early, fallbacks)."""
    parser = get_parser("self_rating")
    generated = backend.generate(prompts)
    before = backend.fallbacks
    ratings = backend.rate(prompts, parser.choices)
    fallbacks = backend.fallbacks - before
    assert [r.answer for r in ratings] == generated
    assert [parser.parse(r.answer) for r in ratings] == [parser.parse(a) for a in generated]
    for r in ratings:
        assert set(r.probabilities) == set(parser.choices)
        assert 0.0 <= sum(r.probabilities.values()) <= 1.0 + 1e-6
    return len(prompts) - fallbacks, fallbacks


def test_seq2seq_fast_rating_equals_generation_on_2000_pairs(tmp_path, t5_dir, hf_tiny, words):
    # Two random T5s: one whose greedy answers keep talking after the first token (fallbacks),
    # one that often stops at once (answers read off the first decoding steps).
    talkative = make_backend("hf-seq2seq", str(t5_dir), max_new_tokens=6, batch_size=64)
    early, fallbacks = check_fast_equals_generation(talkative, random_prompts(words, 1000, 1))
    assert fallbacks > 0
    terse_dir = hf_tiny.build_t5(tmp_path / "terse", grader_like=True, seed=1)
    terse = make_backend("hf-seq2seq", str(terse_dir), max_new_tokens=6, batch_size=64)
    early2, _ = check_fast_equals_generation(terse, random_prompts(words, 1000, 2))
    assert early2 > 500  # a grader-like model: most answers are read off the first two steps


def test_causal_fast_rating_equals_generation_on_2000_pairs(gpt2_dir, words):
    backend = make_backend("hf-causal", str(gpt2_dir), max_new_tokens=6, batch_size=64)
    early, fallbacks = check_fast_equals_generation(backend, random_prompts(words, 2000, 3))
    # both paths are exercised: answers that end after a digit, and answers generated to the end
    assert early > 200 and fallbacks > 200, (early, fallbacks)


def test_causal_chat_template_and_system(gpt2_chat_dir):
    backend = make_backend("hf-causal", str(gpt2_chat_dir), max_new_tokens=4)
    assert backend.chat and backend.options()["chat_template"] is True
    plain = backend.token_lengths(["bees collect nectar"])[0]
    backend.with_system("rating question")
    assert backend.token_lengths(["bees collect nectar"])[0] == plain + 5  # "system : rating question ;"
    assert backend.options()["system"] == "rating question"
    answers = backend.generate(["bees collect nectar", "why is the sky blue"])
    assert len(answers) == 2 and all(isinstance(a, str) for a in answers)


def test_beam_search_is_recorded_and_rate_generates(t5_dir, words):
    backend = make_backend("hf-seq2seq", str(t5_dir), num_beams=3, max_new_tokens=4)
    assert backend.options()["decoding"] == "beam" and backend.options()["num_beams"] == 3
    prompts = random_prompts(words, 10, 4)
    assert [r.answer for r in backend.rate(prompts, list("012345"))] == backend.generate(prompts)


def test_qa_spans_come_from_the_context(qa_dir):
    backend = make_backend("hf-qa", str(qa_dir), max_input_tokens=64)
    pairs = [("why is the sky blue", "light scatters short wavelengths air molecules " * 3)] * 3
    pairs.append(("what causes tides", "moon gravity pulls oceans"))
    for (_, context), r in zip(pairs, backend.grade_pairs(pairs), strict=True):
        assert r.answer == "" or r.answer in context


def test_qa_span_decoding_and_no_answer():
    import torch

    seq_ids = [None, 0, 0, None, 1, 1, 1, None]
    offsets = [(0, 0), (0, 3), (4, 7), (0, 0), (0, 4), (5, 10), (11, 16), (0, 0)]
    context = "moon pulls tides"
    start = torch.tensor([0.0, 9.0, 0, 0, 1.0, 5.0, 0.0, 0])  # a question token scores high: not allowed
    end = torch.tensor([0.0, 0, 0, 0, 0.0, 0.5, 4.0, 9.0])
    assert HFQuestionAnswering._best_span(start, end, seq_ids, offsets, context) == "pulls tides"
    start[0], end[0] = 5.0, 5.0  # no-answer score 10 > best span 9
    assert HFQuestionAnswering._best_span(start, end, seq_ids, offsets, context) == ""


def test_sorted_batches_sort_by_length_and_respect_the_token_budget():
    lengths = [5, 50, 7, 48, 6, 49, 300]
    batches = list(sorted_batches(lengths, batch_size=3, token_budget=120))
    assert sorted(i for b in batches for i in b) == list(range(len(lengths)))
    assert batches[0] == [6]  # longest first, alone when over budget
    for b in batches:
        assert len(b) <= 3 and (len(b) == 1 or len(b) * max(lengths[i] for i in b) <= 120)
    assert [lengths[b[0]] for b in batches] == sorted((lengths[b[0]] for b in batches), reverse=True)


def test_registry_contract():
    assert {"hf-seq2seq", "hf-causal", "hf-qa"} <= set(BACKENDS)
    with pytest.raises(UserError, match="--backend: unknown backend 'nope'; known: .*hf-seq2seq"):
        make_backend("nope", "x")
    with pytest.raises(UserError, match="--model /nonexistent/model: cannot load it"):
        make_backend("hf-seq2seq", "/nonexistent/model", device="cpu")
    with pytest.raises(UserError, match="--device: expected one of"):
        make_backend("hf-seq2seq", "x", device="tpu")
