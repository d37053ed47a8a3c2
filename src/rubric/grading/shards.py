"""Job arrays: ``--shard i/n`` splits the queries, ``rubric grade merge`` joins the graded parts.

A query belongs to shard ``md5(query_id) mod n + 1``: deterministic, independent of the file's
order and stable when queries are added, so every job of an array (SLURM, k8s) picks its share
without coordination. Merging keeps the parts' order, or the order of the original passages file
(``--order``), in which case the merged file equals the file one unsharded run writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from rubric.data.files import PathLike, atomic_write, iter_lines, rereadable
from rubric.data.graded import LINE_SHAPE, peek_query_id, scan_order
from rubric.data.json_line import id_text
from rubric.data.jsonl import encode_line, iter_json_lines, parse_json_line
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
        raise UserError(f"{{shard}}: expected i/n with 1 <= i <= n (e.g. 2/8), got {spec!r}", "shard")
    return i, n


def shard_of(query_id: str, n: int) -> int:
    """The shard (1..n) of a query."""
    return int(hashlib.md5(query_id.encode("utf-8")).hexdigest(), 16) % n + 1


def merge_parts(
    parts: Sequence[Path], output: Path, order: Path | None = None, *, selected: Sequence[str] | None = None
) -> int:
    """Join graded parts into ``output``; a query in two parts is an error. Returns the query count.

    Streams: memory holds one line (one query), not the campaign. Without ``order`` the parts are
    copied line by line. With ``order`` a first pass reads the parts' query ids (and the order
    file's), then the lines are written in that order: read from all parts side by side where
    each part holds its queries in that order (shards of one file do), else gathered through a
    temporary sqlite file on disk. Lines are written as :func:`json.dumps` writes the parsed line.
    ``selected``: the parts hold only these queries of ``order`` (a run with a query selection).
    """
    if order is None:
        return _copy_parts(parts, output)
    with contextlib.ExitStack() as stack:
        copies = [stack.enter_context(rereadable(part)) for part in parts]  # read twice
        wanted = scan_order(order).ids
        if selected is not None:
            chosen = set(selected)
            wanted = [q for q in wanted if q in chosen]
        return _merge_in_order(parts, copies, output, wanted, order)


def _checked(part: Path, line_no: int, obj: Any) -> str:
    """The query id of a parsed line of a part."""
    if not (isinstance(obj, list) and len(obj) == 2):
        raise UserError(f"{part}:{line_no}: {LINE_SHAPE}")
    return id_text(f"{part}:{line_no}", "the query id", obj[0])


def _copy_parts(parts: Sequence[Path], output: Path) -> int:
    origin: dict[str, Path] = {}
    with atomic_write(output) as f:
        for part in parts:
            for line_no, obj in iter_json_lines(part):
                qid = _checked(part, line_no, obj)
                if qid in origin:
                    raise UserError(
                        f"{part}:{line_no}: query {qid} is also in {origin[qid]} (overlapping parts)"
                    )
                origin[qid] = part
                f.write(encode_line(obj))
                f.write("\n")
    return len(origin)


def _merge_in_order(
    parts: Sequence[Path], copies: Sequence[PathLike], output: Path, wanted: list[str], order: Path
) -> int:
    where: dict[str, tuple[int, int]] = {}  # query -> (part, line number)
    for k, (part, copy) in enumerate(zip(parts, copies, strict=True)):
        for line_no, line in iter_lines(copy, part):
            if not line.strip():
                continue
            qid = peek_query_id(line)
            if qid is None:
                qid = _checked(part, line_no, parse_json_line(part, line_no, line))
            if qid in where:
                first = parts[where[qid][0]]
                raise UserError(f"{part}:{line_no}: query {qid} is also in {first} (overlapping parts)")
            where[qid] = (k, line_no)
    missing = [q for q in wanted if q not in where]
    if missing:
        raise UserError(
            f"{{order}} {order}: {len(missing)} of its queries are in no part (first: {missing[0]}); "
            "is a shard missing?",
            "order",
        )
    known = set(wanted)
    ids = [q for q in wanted if q in where] + [q for q in where if q not in known]
    with atomic_write(output) as f:
        for obj in _lines_in(ids, where, parts, copies):
            f.write(encode_line(obj))
            f.write("\n")
    return len(ids)


def _lines_in(
    ids: list[str], where: dict[str, tuple[int, int]], parts: Sequence[Path], copies: Sequence[PathLike]
) -> Iterator[Any]:
    """The parsed lines of the queries ``ids`` in that order."""
    last = [0] * len(parts)
    side_by_side = True
    for q in ids:
        k, line_no = where[q]
        side_by_side = side_by_side and line_no > last[k]
        last[k] = line_no
    if side_by_side:  # each part in the wanted order: read them side by side, one line each
        streams = [iter_json_lines(copy, part) for part, copy in zip(parts, copies, strict=True)]
        for q in ids:
            line_no, obj = next(streams[where[q][0]])
            yield _same_query(parts[where[q][0]], line_no, obj, q)
        return
    rank = {q: i for i, q in enumerate(ids)}
    with tempfile.TemporaryDirectory(prefix="rubric-") as folder:
        db = sqlite3.connect(os.path.join(folder, "lines.sqlite"))
        try:
            db.execute("CREATE TABLE line (rank INTEGER, part INTEGER, line_no INTEGER, text TEXT)")
            for k, (part, copy) in enumerate(zip(parts, copies, strict=True)):
                rows = (
                    (rank[_query_of(part, n, t)], k, n, t) for n, t in iter_lines(copy, part) if t.strip()
                )
                db.executemany("INSERT INTO line VALUES (?, ?, ?, ?)", rows)
            for k, line_no, text in db.execute("SELECT part, line_no, text FROM line ORDER BY rank"):
                yield parse_json_line(parts[k], line_no, text)
        finally:
            db.close()


def _query_of(part: Path, line_no: int, line: str) -> str:
    qid = peek_query_id(line)
    return qid if qid is not None else _checked(part, line_no, parse_json_line(part, line_no, line))


def _same_query(part: Path, line_no: int, obj: Any, qid: str) -> Any:
    if _checked(part, line_no, obj) != qid:
        raise UserError(f"{part}:{line_no}: the file changed while it was merged")
    return obj
