"""Job arrays: ``--shard i/n`` splits the queries, ``rubric grade merge`` joins the graded parts.

A query belongs to shard ``md5(query_id) mod n + 1``: deterministic, independent of the file's
order and stable when queries are added, so every job of an array (SLURM, k8s) picks its share
without coordination. Merging keeps the parts' order, or the order of the original passages file
(``--order``), in which case the merged file equals the file one unsharded run writes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from rubric.data.files import atomic_write
from rubric.data.jsonl import iter_json_lines, read_passages
from rubric.errors import UserError


def parse_shard(spec: str | None) -> tuple[int, int] | None:
    """``"i/n"`` (1 <= i <= n) -> (i, n); ``None`` -> no sharding."""
    if spec is None:
        return None
    try:
        i, n = (int(x) for x in spec.split("/"))
    except ValueError:
        i = n = 0
    if not (n >= 1 and 1 <= i <= n):
        raise UserError(f"--shard: expected i/n with 1 <= i <= n (e.g. 2/8), got {spec!r}")
    return i, n


def shard_of(query_id: str, n: int) -> int:
    """The shard (1..n) of a query."""
    return int(hashlib.md5(query_id.encode("utf-8")).hexdigest(), 16) % n + 1


def merge_parts(parts: Sequence[Path], output: Path, order: Path | None = None) -> int:
    """Join graded parts into ``output``; a query in two parts is an error. Returns the query count."""
    lines: dict[str, str] = {}
    origin: dict[str, Path] = {}
    for part in parts:
        for line_no, obj in iter_json_lines(part):
            if not (isinstance(obj, list) and len(obj) == 2):
                raise UserError(f'{part}:{line_no}: expected a JSON array ["query_id", [passage, ...]]')
            qid = str(obj[0])
            if qid in lines:
                raise UserError(f"{part}:{line_no}: query {qid} is also in {origin[qid]} (overlapping parts)")
            lines[qid] = json.dumps(obj, ensure_ascii=False)
            origin[qid] = part
    ids = list(lines)
    if order is not None:
        wanted = [q.queryId for q in read_passages(order)]
        missing = [q for q in wanted if q not in lines]
        if missing:
            raise UserError(
                f"--order {order}: {len(missing)} of its queries are in no part (first: {missing[0]}); "
                "is a shard missing?"
            )
        extra = set(ids) - set(wanted)
        ids = wanted + [q for q in ids if q in extra]
    with atomic_write(output) as f:
        for qid in ids:
            f.write(lines[qid])
            f.write("\n")
    return len(ids)
