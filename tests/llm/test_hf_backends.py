"""HF backends on tiny random models: exact fast rating, span decoding, batching, registry."""

from __future__ import annotations

import random

import pytest

from rubric.errors import UserError
from rubric.llm.base import Answer, ChoiceRater, PairGrader, Request, TokenCounter
from rubric.llm.hf_common import sorted_batches
from rubric.llm.hf_qa import HFQuestionAnswering
from rubric.llm.registry import BACKENDS, make_backend
from rubric.prompting.parse import get_parser


def random_prompts(words: list[str], n: int, seed: int) -> list[Request]:
    rng = random.Random(seed)
    return [
        Request(" ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) + " rating :")
        for _ in range(n)
    ]


def texts(results) -> list[str]:
    assert all(isinstance(r, Answer) for r in results), [r for r in results if not isinstance(r, Answer)]
    return [r.text for r in results]


def check_fast_equals_generation(backend, prompts: list[Request]) -> tuple[int, int]:
    """Fast rating gives exactly greedy generation's answers (hence parses); returns (early, fallbacks)."""
    parser = get_parser("self_rating")
    generated = texts(backend.generate(prompts))
    before = backend.stats.fallbacks
    ratings = backend.rate(prompts, parser.choices)
    fallbacks = backend.stats.fallbacks - before
    assert texts(ratings) == generated
    assert [parser.parse(r.text) for r in ratings] == [parser.parse(a) for a in generated]
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
    # both ran the direct decoder steps (checked against generate on their first batch)
    assert talkative.direct_steps is True and terse.direct_steps is True


def test_seq2seq_direct_steps_only_where_they_equal_generate(tmp_path, hf_tiny, words):
    folder = hf_tiny.build_t5(tmp_path / "t5", grader_like=True, seed=3)
    prompts = random_prompts(words, 200, 4)
    # a generation config that adds a logits processor: generate serves, the grades stay exact
    penalised = make_backend("hf-seq2seq", str(folder), max_new_tokens=6, batch_size=32)
    penalised.net.generation_config.repetition_penalty = 1.5
    penalised.net.generation_config.suppress_tokens = [5]
    check_fast_equals_generation(penalised, prompts)
    assert penalised.direct_steps is None  # never tried

    class Broken(type(penalised)):  # a direct path that decodes otherwise than generate
        def _direct_first_steps(self, batch, steps):
            tokens, scores = super()._direct_first_steps(batch, steps)
            return tokens.flip(0), scores.flip(0)

    broken = make_backend("hf-seq2seq", str(folder), max_new_tokens=6, batch_size=32)
    broken.__class__ = Broken
    check_fast_equals_generation(broken, prompts)
    assert broken.direct_steps is False  # found different on the first batch and turned off


def test_causal_fast_rating_equals_generation_on_2000_pairs(gpt2_dir, words):
    backend = make_backend("hf-causal", str(gpt2_dir), max_new_tokens=6, batch_size=64)
    early, fallbacks = check_fast_equals_generation(backend, random_prompts(words, 2000, 3))
    # both paths are exercised: answers that end after a digit, and answers generated to the end
    assert early > 200 and fallbacks > 200, (early, fallbacks)


def test_causal_chat_template_and_system(gpt2_chat_dir, gpt2_dir):
    backend = make_backend("hf-causal", str(gpt2_chat_dir), max_new_tokens=4)
    assert backend.chat and backend.supports_system and backend.options()["chat_template"] is True
    plain = backend.token_lengths([Request("bees collect nectar")])[0]
    with_system = Request("bees collect nectar", system="rating question")
    assert backend.token_lengths([with_system])[0] == plain + 5  # "system : rating question ;"
    answers = backend.generate([with_system, Request("why is the sky blue")])
    assert len(texts(answers)) == 2
    base = make_backend("hf-causal", str(gpt2_dir), max_new_tokens=4)  # no chat template: no system role
    assert not base.supports_system
    assert base.token_lengths([with_system]) == base.token_lengths(
        [Request("rating question\n\nbees collect nectar")]
    )


def test_capabilities_are_declared_by_type(gpt2_dir, t5_dir, qa_dir):
    t5 = make_backend("hf-seq2seq", str(t5_dir))
    assert isinstance(t5, ChoiceRater) and isinstance(t5, TokenCounter) and not isinstance(t5, PairGrader)
    assert not t5.supports_system  # system text goes before the prompt
    qa = make_backend("hf-qa", str(qa_dir))
    assert isinstance(qa, PairGrader) and not isinstance(qa, ChoiceRater)


def test_beam_search_is_recorded_and_rate_generates(t5_dir, words):
    backend = make_backend("hf-seq2seq", str(t5_dir), num_beams=3, max_new_tokens=4)
    assert backend.options()["decoding"] == "beam" and backend.options()["num_beams"] == 3
    prompts = random_prompts(words, 10, 4)
    assert texts(backend.rate(prompts, list("012345"))) == texts(backend.generate(prompts))


def test_a_batch_that_raises_fails_only_the_prompt_that_breaks_it(t5_dir, words):
    """A prompt that makes the model raise (here: a token id beyond the embedding table, as a
    corrupt tokenizer would) fails alone; every other prompt of its batch is answered, as the
    answers of a batch without it, and reported through on_results."""
    backend = make_backend("hf-seq2seq", str(t5_dir), max_new_tokens=4, batch_size=8)
    prompts = random_prompts(words, 12, 9)
    clean = texts(backend.generate(prompts))
    poison = Request("poison pill rating :")
    backend._ids[poison.text] = [backend.net.config.vocab_size + 1000, 1]  # the memo feeds the batch
    seen = []
    got = backend.generate([*prompts[:5], poison, *prompts[5:]], lambda batch: seen.extend(batch))
    failure = got[5]
    assert not isinstance(failure, Answer) and failure.cause.startswith("IndexError: index out of range")
    assert texts(got[:5] + got[6:]) == clean
    assert sorted(i for i, _ in seen) == list(range(13))


def test_qa_spans_come_from_the_context(qa_dir):
    backend = make_backend("hf-qa", str(qa_dir), max_input_tokens=64)
    pairs = [("why is the sky blue", "light scatters short wavelengths air molecules " * 3)] * 3
    pairs.append(("what causes tides", "moon gravity pulls oceans"))
    for (_, context), r in zip(pairs, backend.grade_pairs(pairs), strict=True):
        assert r.text == "" or r.text in context


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
    with pytest.raises(UserError, match="^backend: unknown backend 'nope'; known: .*hf-seq2seq"):
        make_backend("nope", "x")
    with pytest.raises(UserError, match="^model /nonexistent/model: cannot load it"):
        make_backend("hf-seq2seq", "/nonexistent/model", device="cpu")
    with pytest.raises(UserError, match="^device: expected one of"):
        make_backend("hf-seq2seq", "x", device="tpu")
