"""The T5 encoder with its relative position bias inside one attention kernel per layer.

transformers' T5 computes the bias as a ``(1, heads, L, L)`` tensor in the first layer; its SDPA
path then merges it with the padding mask into a fresh ``(batch, heads, L, L)`` float mask in
*every* layer, which costs more than the fused kernel saves (measured on an H100: 393 prompts/s
against eager's 410). Here the encoder's layers run with the model's own weights and modules, and
the attention of every layer is one of:

``sdpa``
    ``scaled_dot_product_attention`` on a length-sorted padded batch, the bias and the padding
    mask merged into one additive float mask *once per batch* and shared by all layers;
``flex``
    FlexAttention on a packed row (:mod:`rubric.llm.packing`): a ``score_mod`` adds the bias read
    from a ``(heads, 2 * max_distance + 1)`` table, and a block mask built from the prompt
    boundaries keeps attention inside each prompt and skips the blocks between prompts.

T5 does not scale scores by ``1/sqrt(d)`` (``scale=1.0``). The bias depends only on the bucket of
``key - query``; the buckets stop changing at ``relative_attention_max_distance``, so clamping the
relative position there and looking it up in the table is exact. The decoder (one or two steps in
fast rating) stays transformers' own.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rubric.llm.packing import BLOCK, PackedRow

KERNELS = ("sdpa", "flex")
# Model classes whose encoder is the T5 stack this module runs (bias in the first layer only).
FUSED_MODELS = ("T5ForConditionalGeneration", "MT5ForConditionalGeneration")


def supports_fused(net: Any) -> bool:
    """True for a T5 / mT5 encoder-decoder (not UMT5 or LongT5, whose attention differs)."""
    return type(net).__name__ in FUSED_MODELS


def relative_bias_table(attention: Any) -> tuple[Any, int]:
    """``(table, span)``: ``table[h, r + span]`` is head ``h``'s bias for ``key - query = r``.

    Built with the model's own bucketing function and embedding, so every entry is the value
    transformers' ``compute_bias`` gives; ``r`` outside ``[-span, span]`` has the bucket of the
    nearest end (span = ``relative_attention_max_distance``, where the buckets saturate).
    """
    import torch

    span = int(attention.relative_attention_max_distance)
    weight = attention.relative_attention_bias.weight
    rel = torch.arange(-span, span + 1, device=weight.device)
    buckets = attention._relative_position_bucket(
        rel,
        bidirectional=not attention.is_decoder,
        num_buckets=attention.relative_attention_num_buckets,
        max_distance=span,
    )
    return attention.relative_attention_bias(buckets).t().contiguous(), span


def relative_index(queries: int, keys: int, span: int, device: Any) -> Any:
    """``(queries, keys)`` column of the bias table for each query/key pair."""
    import torch

    rel = torch.arange(keys, device=device)[None, :] - torch.arange(queries, device=device)[:, None]
    return rel.clamp(-span, span) + span


def padded_bias_mask(table: Any, span: int, attention_mask: Any, dtype: Any, broadcast: bool = True) -> Any:
    """The additive SDPA mask of a padded batch, built once per batch: ``(B, H, L, L)`` with the
    padded keys at the dtype's minimum, or with ``broadcast`` the bias alone, ``(1, H, L, L)``,
    when no row is padded (a compiled encoder passes ``broadcast=False``: one shape, no data-
    dependent branch)."""
    import torch

    width = attention_mask.shape[1]
    bias = table[:, relative_index(width, width, span, table.device)].to(dtype)[None]
    if broadcast and bool(attention_mask.all()):
        return bias
    keep = attention_mask.bool()[:, None, None, :]
    return bias.masked_fill(~keep, torch.finfo(dtype).min)


def document_block_mask(documents: Any, block: int = BLOCK) -> Any:
    """The FlexAttention block mask of a packed row, built from prompt boundaries.

    ``documents`` is non-decreasing (prompts are contiguous), so a query block and a key block
    share a prompt exactly when their ranges of prompt numbers overlap; the pair is *full* (no
    per-score mask needed) when both lie inside one and the same prompt. This is the mask
    ``create_block_mask`` would compute from the mask function, without evaluating it on all
    ``width x width`` pairs (4 billion for a 64k-token row).
    """
    import torch
    from torch.nn.attention.flex_attention import BlockMask

    width = documents.shape[0]
    blocks = documents.view(width // block, block)
    first, last = blocks[:, 0], blocks[:, -1]
    touch = (first[:, None] <= last[None, :]) & (first[None, :] <= last[:, None])
    single = first == last
    full = touch & single[:, None] & single[None, :] & (first[:, None] == first[None, :])
    partial = touch & ~full

    def ordered(dense: Any) -> tuple[Any, Any]:
        counts = dense.sum(-1, dtype=torch.int32)
        order = torch.argsort(dense.to(torch.int8), dim=-1, descending=True, stable=True)
        return counts[None, None], order.to(torch.int32)[None, None]

    kv_num, kv_idx = ordered(partial)
    full_num, full_idx = ordered(full)

    def same_prompt(b: Any, h: Any, q: Any, k: Any) -> Any:
        return documents[q] == documents[k]

    return BlockMask.from_kv_blocks(
        kv_num, kv_idx, full_num, full_idx, BLOCK_SIZE=block, mask_mod=same_prompt, seq_lengths=(width, width)
    )


@dataclass
class CompileLog:
    """Graphs ``torch.compile`` built for the encoder and the seconds of the calls that built them."""

    graphs: int = 0
    seconds: float = 0.0


def compiled_graphs() -> int:
    """Graphs TorchDynamo has compiled in this process (its own counter)."""
    from torch._dynamo.utils import counters

    return int(counters["stats"]["unique_graphs"])


class FusedT5Encoder:
    """Runs ``net.encoder`` (a T5 stack) with the ``sdpa`` or ``flex`` kernel; returns the final states.

    With ``compile`` the whole layer loop is compiled: packed rows with static shapes (their
    widths are powers of two, see :func:`~rubric.llm.packing.row_width`), padded batches with
    dynamic shapes (one graph for every batch size and width). Calls that compile count as
    warm-up in :attr:`log` (so does compiling the flex kernel alone).
    FlexAttention outside ``torch.compile`` is PyTorch's unfused reference, so without
    ``compile`` the flex kernel alone is compiled where ``compile_kernel`` says (default: on
    CUDA; on CPU the reference is exact and slow, which suits tests).
    """

    def __init__(self, net: Any, kernel: str, compile: bool = False, compile_kernel: bool | None = None):
        import torch

        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
        self.stack = net.encoder
        self.kernel = kernel
        self.compiled = compile
        first = self.stack.block[0].layer[0].SelfAttention
        self.heads, self.d_kv = first.n_heads, first.key_value_proj_dim
        with torch.no_grad():
            self.table, self.span = relative_bias_table(first)
        self.log = CompileLog()
        self._torch = torch
        if compile_kernel is None:
            compile_kernel = self.table.device.type == "cuda"
        self._flex = self._flex_kernel(compile, compile_kernel)
        self._padded = torch.compile(self._padded_layers, dynamic=True) if compile else self._padded_layers
        self._packed = torch.compile(self._packed_layers, dynamic=False) if compile else self._packed_layers

    @staticmethod
    def _flex_kernel(inside_compile: bool, alone: bool) -> Callable[..., Any]:
        """FlexAttention as called per layer: plain inside a compiled encoder (Dynamo fuses it),
        compiled ``alone``, else the reference (with its "not compiled" warning silenced)."""
        import warnings

        import torch
        from torch.nn.attention.flex_attention import flex_attention

        if inside_compile:
            return flex_attention
        if alone:
            return torch.compile(flex_attention, dynamic=False)

        def reference(*args: Any, **kwargs: Any) -> Any:
            with warnings.catch_warnings():  # "called without torch.compile": chosen, see the class doc
                warnings.simplefilter("ignore", UserWarning)
                return flex_attention(*args, **kwargs)

        return reference

    # -- entry points ------------------------------------------------------------------------------
    def padded(self, input_ids: Any, attention_mask: Any) -> Any:
        """(B, L) ids and mask -> (B, L, d) final encoder states (``sdpa``)."""
        return self._timed(self._padded, input_ids, attention_mask)

    def packed(self, row: PackedRow) -> Any:
        """A packed row -> (1, width, d) final encoder states (``flex``)."""
        blocks = document_block_mask(row.documents)
        return self._timed(self._packed, row.input_ids, blocks)

    # -- internals ---------------------------------------------------------------------------------
    @property
    def _dtype(self) -> Any:
        return self.stack.embed_tokens.weight.dtype

    def _timed(self, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(*args)``; a call that compiled (the encoder, or alone the flex kernel on CUDA)
        adds its time to the warm-up."""
        before, start = compiled_graphs(), time.perf_counter()
        out = fn(*args)
        built = compiled_graphs() - before
        if built:
            if out.device.type == "cuda":
                self._torch.cuda.synchronize(out.device)
            self.log.seconds += time.perf_counter() - start
            self.log.graphs += built
        return out

    def _padded_layers(self, input_ids: Any, attention_mask: Any) -> Any:
        import torch.nn.functional as F

        mask = padded_bias_mask(
            self.table, self.span, attention_mask, self._dtype, broadcast=not self.compiled
        )

        def attend(q: Any, k: Any, v: Any) -> Any:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)

        return self._layers(self.stack.embed_tokens(input_ids), attend)

    def _packed_layers(self, input_ids: Any, blocks: Any) -> Any:
        table, span = self.table, self.span

        def add_bias(score: Any, b: Any, h: Any, q: Any, k: Any) -> Any:
            return score + table[h, (k - q).clamp(-span, span) + span]

        def attend(q: Any, k: Any, v: Any) -> Any:
            if q.device.type == "cpu":  # inductor's CPU flex template needs plain buffers, not views
                q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
            return self._flex(q, k, v, score_mod=add_bias, block_mask=blocks, scale=1.0)

        return self._layers(self.stack.embed_tokens(input_ids), attend)

    def _layers(self, hidden: Any, attend: Callable[[Any, Any, Any], Any]) -> Any:
        """T5Block by T5Block, as transformers runs them in eval mode (dropout is the identity)."""
        batch, width = hidden.shape[:2]
        heads = (batch, width, self.heads, self.d_kv)
        for block in self.stack.block:
            layer = block.layer[0]
            attn = layer.SelfAttention
            x = layer.layer_norm(hidden)
            q = attn.q(x).view(heads).transpose(1, 2)
            k = attn.k(x).view(heads).transpose(1, 2)
            v = attn.v(x).view(heads).transpose(1, 2)
            out = attend(q, k, v).transpose(1, 2).reshape(batch, width, -1)
            hidden = self._clamp(hidden + attn.o(out))
            hidden = self._clamp(block.layer[-1](hidden))
        return self.stack.final_layer_norm(hidden)

    def _clamp(self, hidden: Any) -> Any:
        """T5Block's fp16 guard: clamp to the finite range (a no-op in fp32 and bf16)."""
        torch = self._torch
        if hidden.dtype != torch.float16:
            return hidden
        top = torch.finfo(torch.float16).max
        bound = torch.where(torch.isinf(hidden).any(), top - 1000, top)
        return torch.clamp(hidden, min=-bound, max=bound)
