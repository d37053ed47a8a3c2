"""A prompt head shared by every row of a causal batch, computed once.

Grading prompts of one prompt class start with the same instructions (and a chat template adds
the same special tokens), ~100 tokens before the question or passage. In a causal model a token's
keys and values depend only on the tokens before it, so the shared head's cache is the same for
every row: it is computed for one row and repeated, and each row runs only its own tail.

The batch is laid out as ``[head][padding][tail]``: the padding sits between the head and each
row's tail instead of at the left edge. ``generate`` derives positions from the attention mask
(cumulative count of real tokens), so every real token keeps the position it has in a plain
left-padded batch, and masked padding changes no real token's attention: the rows compute the
same function as without sharing (equal up to floating-point summation order).
"""

from __future__ import annotations

from typing import Any

MIN_SHARED_HEAD = 16  # tokens; a shorter head does not pay for the extra forward pass


def common_head(rows: list[list[int]], minimum: int = MIN_SHARED_HEAD) -> int:
    """Length of the head all rows share, leaving every row at least one token of its own
    (``generate`` needs an uncached token per row); 0 when it is shorter than ``minimum``
    or the batch has one row."""
    if len(rows) < 2:
        return 0
    first, shortest = rows[0], min(len(r) for r in rows)
    head = 0
    while head < shortest - 1 and all(r[head] == first[head] for r in rows):
        head += 1
    return head if head >= minimum else 0


def head_layout(rows: list[list[int]], head: int, pad_id: int) -> tuple[Any, Any]:
    """``(input_ids, attention_mask)`` laid out as ``[head][padding][tail]``."""
    import torch

    tail = max(len(r) for r in rows) - head
    ids = torch.full((len(rows), head + tail), pad_id, dtype=torch.long)
    mask = torch.zeros((len(rows), head + tail), dtype=torch.long)
    for r, row in enumerate(rows):
        ids[r, :head] = torch.tensor(row[:head], dtype=torch.long)
        mask[r, :head] = 1
        own = len(row) - head
        ids[r, head + tail - own :] = torch.tensor(row[head:], dtype=torch.long)
        mask[r, head + tail - own :] = 1
    return ids, mask


def head_cache(net: Any, input_ids: Any, head: int) -> Any:
    """The key/value cache of the first ``head`` tokens, computed for one row, repeated per row."""
    out = net(input_ids=input_ids[:1, :head], use_cache=True)
    # transformers 5.x names it `cache` (the old name still works there, with a warning per run)
    cache = out["cache"] if "cache" in out else out.past_key_values
    cache.batch_repeat_interleave(input_ids.shape[0])
    return cache


def cache_keyword(net: Any) -> str:
    """The keyword that hands a computed key/value cache to ``generate``: ``cache`` in
    transformers 5.x, ``past_key_values`` before (5.x still takes it, with a FutureWarning)."""
    import inspect

    return "cache" if "cache" in inspect.signature(net.forward).parameters else "past_key_values"
