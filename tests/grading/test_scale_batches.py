"""The seq2seq/causal fast path's batching: prefetch thread, padded tensors, token-id memo, exactness."""

from __future__ import annotations

import random
import threading
import time

import pytest

from helpers import tiny_models
from rubric.llm.base import Request
from rubric.llm.prefetch import prefetch
from rubric.llm.registry import make_backend
from rubric.prompting.parse import get_parser

words = list(tiny_models.WORDS)


def prompts_of(words: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice(words) for _ in range(rng.randint(3, 60))) + " rating :" for _ in range(n)]


def test_prefetch_keeps_order_raises_and_stops():
    assert list(prefetch(iter(range(50)), depth=2)) == list(range(50))

    def broken():
        yield 1
        raise ValueError("boom")

    got = []
    with pytest.raises(ValueError, match="boom"):
        for x in prefetch(broken()):
            got.append(x)
    assert got == [1]

    made = []

    def endless():
        i = 0
        while True:
            made.append(i)
            yield i
            i += 1

    before = threading.active_count()
    gen = prefetch(endless(), depth=2)
    assert [next(gen) for _ in range(3)] == [0, 1, 2]
    gen.close()  # the consumer stops: the producer thread ends, a few items ahead at most
    time.sleep(0.05)
    assert threading.active_count() == before and len(made) <= 3 + 2 + 1


@pytest.mark.parametrize("kind", ["t5", "gpt2"])
def test_padded_tensors_match_the_tokenizer(kind, t5_dir, gpt2_dir):
    folder, backend_name = (t5_dir, "hf-seq2seq") if kind == "t5" else (gpt2_dir, "hf-causal")
    backend = make_backend(backend_name, str(folder), device="cpu", pad_multiple=8, batch_size=5)
    texts = prompts_of(words, 23, 3)
    seen = []
    for idx, batch in backend._batches(texts):
        assert batch["input_ids"].shape[1] % 8 == 0
        want = backend.tokenizer.pad(
            {"input_ids": [backend.tokenizer(texts[i])["input_ids"] for i in idx]},
            pad_to_multiple_of=8,
            return_tensors="pt",
        )
        assert batch["input_ids"].tolist() == want["input_ids"].tolist()
        assert batch["attention_mask"].tolist() == want["attention_mask"].tolist()
        seen += idx
    assert sorted(seen) == list(range(len(texts)))


def test_token_ids_are_remembered_and_long_prompts_cut_like_the_tokenizer(t5_dir):
    backend = make_backend("hf-seq2seq", str(t5_dir), device="cpu", max_input_tokens=32, batch_size=4)
    texts = prompts_of(words, 12, 4)
    lengths = backend.token_lengths([Request(t) for t in texts])
    assert set(backend._ids) == set(texts)  # batching these prompts tokenises nothing again
    assert lengths == [len(backend.tokenizer(t)["input_ids"]) for t in texts]
    assert max(lengths) > 32
    for idx, batch in backend._batches(texts):
        for row, i in enumerate(idx):
            want = backend.tokenizer(texts[i], truncation=True, max_length=32)["input_ids"]
            n = int(batch["attention_mask"][row].sum())
            assert batch["input_ids"][row, :n].tolist() == want  # a cut prompt still ends with </s>


@pytest.mark.parametrize("kind", ["t5", "gpt2"])
def test_fast_path_grades_equal_one_prompt_at_a_time(kind, tmp_path, gpt2_dir):
    """Padded (to a multiple of 8), prefetched batches give exactly unbatched greedy generation."""
    if kind == "t5":
        folder, backend_name = tiny_models.build_t5(tmp_path / "t5", grader_like=True, seed=2), "hf-seq2seq"
    else:
        folder, backend_name = gpt2_dir, "hf-causal"
    prompts = [Request(p) for p in prompts_of(words, 240, 5)]
    parser = get_parser("self_rating")
    common = dict(device="cpu", max_new_tokens=6)
    fast = make_backend(backend_name, str(folder), batch_size=32, pad_multiple=8, **common)
    one = make_backend(backend_name, str(folder), batch_size=1, **common)
    ratings = [r.text for r in fast.rate(prompts, parser.choices)]
    alone = [r.text for r in one.generate(prompts)]
    assert ratings == alone
    assert [parser.parse(r) for r in ratings] == [parser.parse(a) for a in alone]


def test_choice_probabilities_equal_the_full_distribution(t5_dir):
    """rate() moves only the choices' columns off the device; values equal the full softmax's."""
    import torch

    backend = make_backend("hf-seq2seq", str(t5_dir), device="cpu", max_new_tokens=2, batch_size=8)
    choices = get_parser("self_rating").choices
    prompts = prompts_of(words, 20, 6)
    got = [r.probabilities for r in backend.rate([Request(p) for p in prompts], choices)]
    vocab = backend.tokenizer.get_vocab()
    with torch.inference_mode():
        for idx, batch in backend._batches(prompts):
            full = torch.softmax(backend._run(batch, 2, 1, scores=True).scores[0].float(), dim=-1)
            for row, i in enumerate(idx):
                want = {}
                for c in choices:  # the per-row lookup rate() used to do
                    ids = [vocab[s] for s in (c, "▁" + c, "Ġ" + c, " " + c) if s in vocab]
                    want[c] = max([0.0] + [float(full[row, t]) for t in ids])
                assert got[i] == want
    assert any(v > 0 for p in got for v in p.values())
