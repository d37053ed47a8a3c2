"""Padding-free (packed) batches, and the padding count every batching path reports.

A padded batch of ``rows x longest`` tokens spends the linear layers' work (nearly all of an
encoder's) on padding too. A *packed* batch lays its prompts end to end in one row of ``width``
tokens; a document mask keeps each prompt's attention inside the prompt, and T5's relative
positions restart per prompt for free (within one prompt, ``key - query`` is the same whether it
is counted from the row start or the prompt start). Only the row's tail is padding.

Widths are powers of two times :data:`BLOCK` (FlexAttention's sparse block), so a compiled
encoder sees a handful of shapes (see :func:`row_width`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

BLOCK = 128  # FlexAttention's default sparse block size; packed widths are multiples of it


def row_width(tokens: int) -> int:
    """The width of a packed row holding ``tokens``: a power of two of :data:`BLOCK` s.

    Packing fills rows up to the full width, so rounding widths up to powers of two costs no
    padding in full rows; only the last rows of a run are narrower. A compiled encoder therefore
    sees the full width and a few halvings of it, however the prompt lengths vary.
    """
    width = BLOCK
    while width < tokens:
        width *= 2
    return width


def row_capacity(budget: int, longest: int) -> int:
    """The full width of packed rows: the widest :func:`row_width` within ``budget`` tokens,
    widened where needed to hold the longest prompt."""
    width = row_width(budget)
    if width > budget and width > BLOCK:
        width //= 2
    return max(width, row_width(longest))


def pack_groups(lengths: Sequence[int], width: int) -> Iterator[list[int]]:
    """Prompt indices for each packed row of ``width`` tokens, longest prompts first.

    A row takes the longest remaining prompts while they fit, then tops up its tail with the
    shortest remaining ones, so a row's padding is smaller than the shortest prompt left. Longest
    first makes an out-of-memory error show up in the first batch, not after an hour.
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    lo, hi = 0, len(order)  # order[lo:hi] are not packed yet, longest at lo
    while lo < hi:
        row, used = [], 0
        while lo < hi and used + lengths[order[lo]] <= width:
            used += lengths[order[lo]]
            row.append(order[lo])
            lo += 1
        while lo < hi and used + lengths[order[hi - 1]] <= width:
            hi -= 1
            used += lengths[order[hi]]
            row.append(order[hi])
        if not row:  # a prompt longer than the width gets a (wider) row of its own
            row.append(order[lo])
            lo += 1
        yield row


@dataclass(frozen=True)
class PackedRow:
    """Prompts laid end to end in one row; ``documents[t]`` is the prompt of token ``t``.

    The padding tail is a document of its own (number ``len(lengths)``), so no real token
    attends to it and its own attention rows stay finite.
    """

    input_ids: Any  # (1, width) long
    documents: Any  # (width,) int32
    lengths: list[int]

    @property
    def width(self) -> int:
        return int(self.input_ids.shape[1])

    @property
    def rows(self) -> int:
        return len(self.lengths)


def pack_row(rows: list[list[int]], width: int, pad_id: int) -> PackedRow:
    """Token id lists -> one packed row of ``width`` tokens (on the host)."""
    import torch

    lengths = [len(r) for r in rows]
    used = sum(lengths)
    if used > width:
        raise ValueError(f"{used} tokens do not fit a packed row of {width}")
    flat = [t for r in rows for t in r] + [pad_id] * (width - used)
    documents = torch.repeat_interleave(
        torch.arange(len(rows) + 1, dtype=torch.int32), torch.tensor([*lengths, width - used])
    )
    return PackedRow(torch.tensor([flat], dtype=torch.long), documents, lengths)


def unpack(hidden: Any, lengths: Sequence[int]) -> tuple[Any, Any]:
    """(1, width, d) packed states -> ((rows, longest, d) right-padded states, (rows, longest) mask).

    The padded slots hold a copy of token 0's state; the mask hides them from cross-attention.
    """
    import torch

    device = hidden.device
    lens = torch.tensor(list(lengths), device=device)
    starts = torch.cumsum(lens, 0) - lens
    longest = int(max(lengths))
    offset = torch.arange(longest, device=device)
    mask = offset[None, :] < lens[:, None]
    index = torch.where(mask, starts[:, None] + offset[None, :], torch.zeros_like(offset)[None, :])
    return hidden[0, index], mask.long()


@dataclass
class PaddingTally:
    """Input token slots the model computed, how many held real tokens, and how many prompt
    tokens a shared head spared (computed once for a batch instead of once per row)."""

    tokens: int = 0
    slots: int = 0
    shared: int = 0

    def add(self, tokens: int, slots: int, shared: int = 0) -> None:
        self.tokens += tokens
        self.slots += slots
        self.shared += shared

    @property
    def ratio(self) -> float:
        """Share of the model's input slots that were padding (0.0 when nothing ran)."""
        return (self.slots - self.tokens) / self.slots if self.slots else 0.0
