"""Attention paths (eager, sdpa, flex, compiled), packed batches and shared prompt heads on CPU.

Every path must grade exactly like transformers' eager attention. The tiny models answer several
different grades (and some answers run on past the first steps), and a deliberately broken bias
changes dozens of them, so these tests can fail.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
import torch

from helpers.tiny_models import PROMPT_HEAD, rating_prompts
from rubric.errors import UserError
from rubric.llm.base import Answer, Failure, Request
from rubric.llm.hf_seq2seq import default_attention
from rubric.llm.packing import BLOCK, PaddingTally, pack_groups, pack_row, row_capacity, row_width, unpack
from rubric.llm.registry import make_backend
from rubric.llm.shared_head import common_head, head_layout
from rubric.llm.t5_attention import (
    FusedT5Encoder,
    document_block_mask,
    relative_bias_table,
    relative_index,
    supports_fused,
)
from rubric.prompting.parse import get_parser

PAIRS = 2000
HEAD = PROMPT_HEAD
prompts = rating_prompts


def grades(backend, texts: list[str]) -> tuple[list, list]:
    parser = get_parser("self_rating")
    ratings = backend.rate([Request(t) for t in texts], parser.choices)
    assert all(isinstance(r, Answer) for r in ratings), [r for r in ratings if not isinstance(r, Answer)][:3]
    return [parser.parse(r.text) for r in ratings], ratings


@pytest.fixture(scope="module")
def grader_t5(tmp_path_factory, hf_tiny):
    """A grader-like T5 whose answers vary: 4, 1, 5 and 2 are all common, some run on."""
    return hf_tiny.build_t5(tmp_path_factory.mktemp("grader-t5"), grader_like=True, seed=1)


@pytest.fixture(scope="module")
def t5_pairs(words):
    return prompts(words, PAIRS, 5)


@pytest.fixture(scope="module")
def eager_grades(grader_t5, t5_pairs):
    backend = make_backend("hf-seq2seq", str(grader_t5), max_new_tokens=6, batch_size=16, attention="eager")
    got, ratings = grades(backend, t5_pairs)
    counts = Counter(got)
    assert len(counts) >= 3 and counts.most_common(1)[0][1] < 0.8 * PAIRS, counts  # answers vary
    assert backend.stats.fallbacks > 50  # some answers are generated to the end
    return got, ratings


# -- the bias table and the kernels ---------------------------------------------------------------
def test_bias_table_is_transformers_bias_beyond_the_max_distance(t5_dir):
    from transformers import AutoModelForSeq2SeqLM

    net = AutoModelForSeq2SeqLM.from_pretrained(t5_dir)
    first = net.encoder.block[0].layer[0].SelfAttention
    table, span = relative_bias_table(first)
    assert span == first.relative_attention_max_distance == 128
    width = 3 * span  # relative positions up to +-383: the clamp at +-128 must be exact
    with torch.no_grad():
        expected = first.compute_bias(width, width)[0]
    assert torch.equal(table[:, relative_index(width, width, span, table.device)], expected)


def test_document_block_mask_equals_create_block_mask():
    from torch.nn.attention.flex_attention import create_block_mask

    rng = random.Random(0)
    for _ in range(5):
        lengths = [rng.randint(1, 300) for _ in range(rng.randint(1, 12))]
        width = row_width(sum(lengths))
        row = pack_row([[7] * n for n in lengths], width, 0)
        mine = document_block_mask(row.documents)

        def same_prompt(b, h, q, k, docs=row.documents):
            return docs[q] == docs[k]

        ref = create_block_mask(same_prompt, None, None, width, width, device="cpu")
        assert torch.equal(mine.to_dense(), ref.to_dense())
        # the full blocks (no per-score mask) are exactly the reference's
        assert torch.equal(mine.full_kv_num_blocks, ref.full_kv_num_blocks)


def test_fused_encoder_logits_match_eager_on_padded_and_packed_batches(tmp_path, hf_tiny, words):
    """First-step logits of whole prompts up to 300 tokens (past T5's 128-token bias buckets)."""
    from transformers import AutoModelForSeq2SeqLM
    from transformers.modeling_outputs import BaseModelOutput

    folder = hf_tiny.build_t5(tmp_path / "t5", d_model=64, heads=4, layers=3, d_ff=128, seed=3)
    net = AutoModelForSeq2SeqLM.from_pretrained(folder, attn_implementation="eager").eval()
    rng = random.Random(1)
    rows = [[rng.randint(3, 100) for _ in range(n)] for n in (300, 17, 129, 250, 1, 64)]
    width = max(map(len, rows))
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    mask = torch.zeros_like(ids)
    for r, row in enumerate(rows):
        ids[r, : len(row)], mask[r, : len(row)] = torch.tensor(row), 1
    start = torch.zeros(len(rows), 1, dtype=torch.long)

    def logits(**encoder):
        return net(decoder_input_ids=start, **encoder).logits[:, 0]

    with torch.inference_mode():
        eager = logits(input_ids=ids, attention_mask=mask)
        padded = FusedT5Encoder(net, "sdpa").padded(ids, mask)
        packed_row = pack_row(rows, row_width(sum(map(len, rows))), 0)
        packed, packed_mask = unpack(FusedT5Encoder(net, "flex").packed(packed_row), packed_row.lengths)
        via_sdpa = logits(encoder_outputs=BaseModelOutput(last_hidden_state=padded), attention_mask=mask)
        via_flex = logits(
            encoder_outputs=BaseModelOutput(last_hidden_state=packed), attention_mask=packed_mask
        )
        broken = FusedT5Encoder(net, "flex")
        broken_out = broken._packed_layers(packed_row.input_ids, None)  # no document mask
        via_broken = logits(
            encoder_outputs=BaseModelOutput(last_hidden_state=unpack(broken_out, packed_row.lengths)[0]),
            attention_mask=packed_mask,
        )
    assert torch.equal(packed_mask, mask)
    scale = eager.abs().max().item()
    assert scale > 1.0
    torch.testing.assert_close(via_sdpa, eager, rtol=1e-5, atol=1e-5 * scale)
    torch.testing.assert_close(via_flex, eager, rtol=1e-5, atol=1e-5 * scale)
    assert (via_broken - eager).abs().max().item() > 1e-2 * scale  # attention across prompts shows


def test_fused_encoder_runs_mt5_and_refuses_other_models():
    from transformers import BartConfig, BartForConditionalGeneration, MT5Config, MT5ForConditionalGeneration

    torch.manual_seed(0)
    cfg = MT5Config(vocab_size=100, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2)
    net = MT5ForConditionalGeneration(cfg).eval()
    net.set_attn_implementation("eager")
    ids = torch.randint(3, 100, (3, 200))
    mask = torch.ones_like(ids)
    mask[1, 150:] = 0
    with torch.inference_mode():
        eager = net.encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        fused = FusedT5Encoder(net, "sdpa").padded(ids, mask)
    torch.testing.assert_close(fused[mask.bool()], eager[mask.bool()], rtol=1e-5, atol=1e-5)
    bart = BartForConditionalGeneration(
        BartConfig(vocab_size=100, d_model=16, encoder_layers=1, decoder_layers=1)
    )
    assert supports_fused(net) and not supports_fused(bart)


@pytest.mark.slow
def test_flex_kernel_compiled_alone_as_on_cuda(t5_dir):
    """On CUDA flex compiles its kernel alone; new prompt layouts reuse its graph."""
    from transformers import AutoModelForSeq2SeqLM

    net = AutoModelForSeq2SeqLM.from_pretrained(t5_dir).eval()
    reference, compiled = FusedT5Encoder(net, "flex"), FusedT5Encoder(net, "flex", compile_kernel=True)
    rng = random.Random(4)
    with torch.inference_mode():
        for _ in range(3):
            lengths = [rng.randint(5, 200) for _ in range(6)]
            row = pack_row([[rng.randint(3, 90) for _ in range(n)] for n in lengths], 1024, 0)
            real = slice(0, sum(lengths))
            torch.testing.assert_close(compiled.packed(row)[0, real], reference.packed(row)[0, real])
    assert compiled.log.graphs == 1 and compiled.log.seconds > 0


# -- packing -------------------------------------------------------------------------------------
def test_packed_rows_hold_every_prompt_once_with_little_padding():
    rng = random.Random(2)
    lengths = [rng.randint(150, 450) for _ in range(1000)]
    full = row_capacity(64 * max(lengths), max(lengths))
    assert full % BLOCK == 0 and (full // BLOCK) & (full // BLOCK - 1) == 0  # a power of two of blocks
    assert 32 * max(lengths) < full <= 64 * max(lengths)  # within the budget, not far below it
    groups = list(pack_groups(lengths, full))
    assert sorted(i for g in groups for i in g) == list(range(len(lengths)))
    tally = PaddingTally()
    for g in groups:
        tokens = sum(lengths[i] for i in g)
        assert tokens <= full
        tally.add(tokens, row_width(tokens))
    assert tally.ratio < 0.05, tally  # the bound; padded batches of the same prompts:
    padded = PaddingTally()
    order = sorted(lengths, reverse=True)
    for s in range(0, len(order), 64):
        padded.add(sum(order[s : s + 64]), len(order[s : s + 64]) * order[s])
    assert tally.ratio < padded.ratio
    assert row_width(1) == BLOCK and row_width(BLOCK + 1) == 2 * BLOCK
    assert row_capacity(3 * BLOCK, 10) == 2 * BLOCK and row_capacity(BLOCK, 5 * BLOCK) == 8 * BLOCK


def test_unpack_restores_each_prompt():
    row = pack_row([[5, 6, 7], [8], [9, 10]], BLOCK, 0)
    hidden = row.input_ids[..., None].float()  # (1, width, 1): each token's state is its id
    states, mask = unpack(hidden, row.lengths)
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0], [1, 1, 0]]
    assert (states[..., 0] * mask).tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0]]
    assert row.documents[:6].tolist() == [0, 0, 0, 1, 2, 2] and set(row.documents[6:].tolist()) == {3}


# -- grades on 2,000 pairs --------------------------------------------------------------------------
@pytest.mark.parametrize("attention", ["sdpa", "flex"])
def test_seq2seq_path_grades_like_eager_on_2000_pairs(attention, grader_t5, t5_pairs, eager_grades):
    backend = make_backend("hf-seq2seq", str(grader_t5), max_new_tokens=6, batch_size=16, attention=attention)
    got, ratings = grades(backend, t5_pairs)
    assert got == eager_grades[0]
    for mine, ref in zip(ratings, eager_grades[1], strict=True):
        assert mine.probabilities == pytest.approx(ref.probabilities, abs=1e-4)
    summary = backend.kernel_summary()
    assert summary.startswith(f"attention {attention}; padding ") and backend.padding.slots > 0
    if attention == "flex":  # packed rows: padding only in each row's tail
        assert backend.padding.ratio < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("attention", ["sdpa", "flex"])
def test_compiled_path_grades_like_eager_on_2000_pairs(attention, grader_t5, t5_pairs, eager_grades):
    backend = make_backend(
        "hf-seq2seq", str(grader_t5), max_new_tokens=6, batch_size=16, attention=attention, compile=True
    )
    assert grades(backend, t5_pairs)[0] == eager_grades[0]
    log = backend.encoder.log
    assert 1 <= log.graphs <= 2 and log.seconds > 0  # few compilations, their time reported
    assert f"compile warm-up {log.seconds:.1f} s ({log.graphs} graphs)" in backend.kernel_summary()


def test_auto_falls_back_to_sdpa_when_flex_fails(monkeypatch, caplog, grader_t5, t5_pairs, eager_grades):
    """A GPU without a working Triton: ``auto`` picked flex, its kernel fails, sdpa takes over."""
    import rubric.llm.hf_seq2seq as seq2seq

    def no_kernel(self, row):
        raise RuntimeError("triton: no kernel for this GPU\nsecond line")

    monkeypatch.setattr(seq2seq, "default_attention", lambda device: "flex")
    monkeypatch.setattr(FusedT5Encoder, "packed", no_kernel)
    backend = make_backend("hf-seq2seq", str(grader_t5), max_new_tokens=6, batch_size=16)
    assert backend.attention == "flex"
    assert grades(backend, t5_pairs[:300])[0] == eager_grades[0][:300]
    assert backend.attention == "sdpa (flex failed)" and backend.encoder.kernel == "sdpa"
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]  # the `rubric` logger's
    assert warned == ["FlexAttention failed (triton: no kernel for this GPU); going on with sdpa"]
    explicit = make_backend("hf-seq2seq", str(grader_t5), max_new_tokens=6, batch_size=16, attention="flex")
    # Asked for by name, flex is not swapped: each prompt fails with the kernel's cause, which the
    # engine retries, records and counts like any other model failure.
    failed = explicit.rate([Request(t) for t in t5_pairs[:20]], get_parser("self_rating").choices)
    assert failed == [Failure("RuntimeError: triton: no kernel for this GPU")] * 20
    assert explicit.attention == "flex"


def test_a_wrong_bias_changes_the_grades(grader_t5, t5_pairs, eager_grades):
    """The negative control: the same path with T5's position bias left out grades differently."""
    backend = make_backend("hf-seq2seq", str(grader_t5), max_new_tokens=6, batch_size=16, attention="sdpa")
    backend.encoder.table.zero_()
    got, _ = grades(backend, t5_pairs)
    assert sum(a != b for a, b in zip(got, eager_grades[0], strict=True)) > 25  # 55 here


def test_causal_paths_and_shared_head_grade_like_eager_on_2000_pairs(gpt2_dir, words):
    texts = prompts(words, PAIRS // 2, 6, head=HEAD) + prompts(words, PAIRS // 2, 7)
    plain = make_backend("hf-causal", str(gpt2_dir), max_new_tokens=6, batch_size=16, attention="eager")
    plain.share_heads = False
    reference, ref_ratings = grades(plain, texts)
    counts = Counter(reference)
    assert len(counts) >= 3 and counts.most_common(1)[0][1] < 0.9 * PAIRS, counts
    for attention in ("eager", "sdpa"):
        backend = make_backend(
            "hf-causal", str(gpt2_dir), max_new_tokens=6, batch_size=16, attention=attention
        )
        got, ratings = grades(backend, texts)
        assert got == reference, attention
        assert [r.text for r in ratings] == [r.text for r in ref_ratings]
        # each batch whose prompts all start with HEAD computed its 20+ tokens once, not per prompt
        assert backend.padding.shared > 10_000
        assert "prompt-head tokens computed once per batch" in backend.kernel_summary()


def test_common_head_and_layout():
    head = list(range(100, 120))
    rows = [head + [1, 2, 3], head + [4], head + [5, 6]]
    assert common_head(rows) == 20
    assert common_head([head + [1], head + [1]]) == 20  # each row keeps a token of its own
    assert common_head([head[:10] + [1], head[:10] + [2]]) == 0  # too short to pay
    assert common_head([head + [1]]) == 0
    ids, mask = head_layout(rows, 20, 0)
    assert ids[:, :20].tolist() == [head] * 3 and mask[:, :20].all()
    assert ids[:, 20:].tolist() == [[1, 2, 3], [0, 0, 4], [0, 5, 6]]
    assert mask[:, 20:].tolist() == [[1, 1, 1], [0, 0, 1], [0, 1, 1]]


# -- choices and errors ----------------------------------------------------------------------------
def test_auto_attention_and_option_errors(t5_dir, gpt2_dir):
    assert default_attention("cpu") == "sdpa"
    assert default_attention("cuda:1") == "sdpa"  # measured faster than flex on an H200
    assert make_backend("hf-seq2seq", str(t5_dir)).attention == "sdpa"
    assert make_backend("hf-causal", str(gpt2_dir)).attention == "sdpa"  # transformers' default
    assert make_backend("hf-seq2seq", str(t5_dir), attention="eager").encoder is None
    with pytest.raises(UserError, match=r"^attention: expected one of auto, eager, sdpa, flex, got 'fast'"):
        make_backend("hf-seq2seq", str(t5_dir), attention="fast")
    with pytest.raises(UserError, match="^attention flex: GPT2LMHeadModel has no FlexAttention path"):
        make_backend("hf-causal", str(gpt2_dir), attention="flex")
    with pytest.raises(UserError, match="^compile_encoder: applies to T5 encoders"):
        make_backend("hf-causal", str(gpt2_dir), compile=True)
    with pytest.raises(UserError, match="^compile_encoder: compiles the sdpa or flex encoder, not eager"):
        make_backend("hf-seq2seq", str(t5_dir), attention="eager", compile=True)
