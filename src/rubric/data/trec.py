"""TREC qrels and runs, read with trec_eval 9.x semantics.

* Columns are separated by any whitespace; lines starting with ``#`` are comments; doc ids may
  contain ``#`` (TREC RAG segment ids).
* Qrels: ``qid iter docid rel`` (``iter`` is ignored: ``0``, ``Q0``, ``1`` ...).
* Runs: ``qid Q0 docid rank score tag``; text after the tag is ignored (as trec_eval 9.x does,
  see its test file ``results.trunc``). The rank column is ignored; scores are read as doubles
  and stored as 32-bit floats, exactly as trec_eval 9.x (and NIST) do, so that near-equal scores
  tie; ties are ranked by docid descending (:func:`ranked`).
* A line with the wrong number of columns, a bad number or a duplicate document is an error
  naming ``file:line``; so is a qrels line for a (query, document) already judged (trec_eval
  stops there too) and a run score that is not finite as a 32-bit float (``nan``, ``inf``,
  ``1e39``): it cannot be ranked, and written to JSON it would become ``null``.
* Files are read by the input rule of :mod:`rubric.data.files`: ``-``, pipes, gzip by content, a
  UTF-8 byte-order mark dropped.

Runs are parsed column-wise from one ``str.split`` of the whole file when it is well formed
(several times faster than a loop over lines); the line loop only runs to locate an error.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Container, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from rubric.data.files import is_stdio, open_output, read_text, text_lines
from rubric.data.irds import irds_id, irds_qrels
from rubric.errors import UserError

Qrels = dict[str, dict[str, int]]
RunScores = dict[str, dict[str, float]]


@dataclass
class Run:
    """A run file: per-query document scores (float32 values) and its run tag."""

    name: str
    scores: RunScores
    path: Path | None = None
    tags: set[str] = field(default_factory=set)

    def ranking(self, query_id: str) -> list[tuple[str, float]]:
        """Documents of one query in trec_eval order (score desc, docid desc)."""
        return ranked(self.scores.get(query_id, {}))


def to_float32(values: list[str] | list[float]) -> list[float]:
    """Round to the nearest 32-bit float via double, as C's ``float x = atof(s)``.

    A value that is not finite as a 32-bit float (``nan``, ``inf``, beyond +-3.4e38) is a
    ``ValueError``.
    """
    doubles = np.array(values, dtype=np.float64)
    with np.errstate(over="ignore"):
        singles = doubles.astype(np.float32)
    if not np.isfinite(singles).all():
        raise ValueError("not finite as a 32-bit float")
    return singles.astype(np.float64).tolist()


def _score_problem(text: str) -> str | None:
    """Why a run score is refused (None: it is fine)."""
    try:
        to_float32([text])
    except ValueError:
        try:
            float(text)
        except ValueError:
            return f"score must be a number, found {text!r}"
        return f"score must be a finite number (32-bit float, within +-3.4e38), found {text!r}"
    return None


def ranked(doc_scores: dict[str, float]) -> list[tuple[str, float]]:
    """Sort by score descending, ties by docid descending (trec_eval 9.x / NIST)."""
    return sorted(doc_scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)


def _content_lines(text: str) -> Iterator[tuple[int, list[str]]]:
    for line_no, line in text_lines(text):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            yield line_no, stripped.split()


_COMMENT_LINE = re.compile(r"^[ \t]*#.*$", re.MULTILINE)


# --- qrels -------------------------------------------------------------------------------------


RELEVANCE_LIMIT = 2**31  # trec_eval and pytrec_eval keep relevance in a C int
#: The highest grade read: trec_eval keeps a counter for every grade from 0 to a query's highest
#: (8 bytes each, cleared and scanned for every query of every run), so a grade of 2^31 - 1 asks for
#: 16 GB and minutes per query. Real qrels grade 0-4 (-2 for junk); LLM labels 0-5.
MAX_GRADE = 2**16 - 1


def read_qrels(path: str | Path) -> Qrels:
    """Read a qrels file into ``{qid: {docid: relevance}}`` (the pytrec_eval layout); ``irds:ID``
    reads the qrels of an ir_datasets dataset (:mod:`rubric.data.irds`)."""
    dataset = irds_id(path)
    if dataset is not None:
        return irds_qrels(dataset)
    qrels: Qrels = {}
    text = read_text(path)
    for line_no, cols in _content_lines(text):
        if len(cols) != 4:
            raise UserError(
                f"{path}:{line_no}: a qrels line has 4 columns (qid iter docid relevance), found {len(cols)}"
            )
        qid, _, docid, rel = cols
        try:
            level = int(rel)
        except ValueError:
            try:
                as_float = float(rel)
            except ValueError:
                as_float = None
            if as_float is None or not as_float.is_integer():
                raise UserError(f"{path}:{line_no}: relevance must be an integer, found {rel!r}") from None
            level = int(as_float)
        if not -RELEVANCE_LIMIT <= level < RELEVANCE_LIMIT:
            raise UserError(f"{path}:{line_no}: relevance {rel} is out of range (a 32-bit integer)")
        if level > MAX_GRADE:
            raise UserError(
                f"{path}:{line_no}: relevance {rel} is above {MAX_GRADE}: trec_eval keeps a counter for "
                "every grade up to the highest, so it would need gigabytes"
            )
        docs = qrels.setdefault(qid, {})
        if docid in docs:
            first = next(n for n, c in _content_lines(text) if len(c) == 4 and c[0] == qid and c[2] == docid)
            raise UserError(
                f"{path}:{line_no}: query {qid} document {docid} is judged again (first on line {first})"
            )
        docs[docid] = level
    if not qrels:  # trec_eval stops too: "No queries with both results and relevance info"
        raise UserError(f"{path}: holds no judgments (an empty qrels file)")
    return qrels


def write_qrels(path: str | Path, rows: Iterable[tuple[str, str, str, int]] | Qrels) -> int:
    """Write qrels atomically; ``rows`` is a qrels dict or ``(qid, iter, docid, rel)`` tuples."""
    if isinstance(rows, dict):
        rows = ((q, "0", d, r) for q, docs in rows.items() for d, r in docs.items())
    n = 0
    with open_output(path) as f:
        for qid, it, docid, rel in rows:
            f.write(f"{qid} {it} {docid} {rel}\n")
            n += 1
    return n


# --- runs --------------------------------------------------------------------------------------


def _fail_run_line(path: str | Path, text: str, seen_note: str = "") -> UserError:
    """Find the first bad line of a run file to report it (slow path, only on errors)."""
    seen: dict[tuple[str, str], int] = {}
    for line_no, cols in _content_lines(text):
        if len(cols) < 6:
            return UserError(
                f"{path}:{line_no}: a run line has 6 columns (qid Q0 docid rank score tag), found {len(cols)}"
            )
        problem = _score_problem(cols[4])
        if problem:
            return UserError(f"{path}:{line_no}: {problem}")
        key = (cols[0], cols[2])
        if key in seen:
            return UserError(
                f"{path}:{line_no}: document {cols[2]} appears twice for query {cols[0]} "
                f"(first on line {seen[key]})"
            )
        seen[key] = line_no
    return UserError(f"{path}: could not parse run file{seen_note}")


def _query_blocks(qids: list[str]) -> list[tuple[str, int, int]]:
    """``(query, first, end)`` of each stretch of equal query ids.

    Runs list a query's lines together, so each stretch end is found by galloping and binary
    search and then checked in C (``list.count``): a Python loop over every line would cost as
    much as the parsing. A query split over several stretches is merged by the caller.
    """
    n, a, blocks = len(qids), 0, []
    while a < n:
        q, lo, step = qids[a], a, 1
        hi = a + 1
        while hi < n and qids[hi] == q:
            lo, step = hi, step * 2
            hi = a + step
        hi = min(hi, n)
        while hi - lo > 1:  # qids[lo] == q, and qids[hi] != q or hi == n
            mid = (lo + hi) // 2
            if qids[mid] == q:
                lo = mid
            else:
                hi = mid
        if qids[a:hi].count(q) != hi - a:  # not one stretch after all: walk it
            hi = a + 1
            while hi < n and qids[hi] == q:
                hi += 1
        blocks.append((q, a, hi))
        a = hi
    return blocks


def _read_judged(text: str, queries: Container[str]) -> tuple[RunScores, str, set[str]] | None:
    """Fast path of :func:`read_run` for the queries that are evaluated (None: use the full path).

    TREC DL runs cover 200 queries of which 43 are judged: splitting only their lines into
    columns halves the time of reading a run. The query id of every line is found with numpy
    (line starts, first whitespace, a byte window compared with the previous line), so stretches
    of lines of one query are found exactly without a Python loop over the lines. Files with
    comments, CR line ends, blank or indented lines, or extra columns take the full path.
    """
    data = text.encode()
    if not data or b"#" in data or b"\r" in data:
        return None
    arr = np.frombuffer(data, np.uint8)
    ends = np.flatnonzero(arr == 10)
    if data[-1] != 10:
        ends = np.append(ends, len(data))
    starts = np.concatenate(([0], ends[:-1] + 1))
    if np.any(ends == starts) or np.any((arr[starts] == 32) | (arr[starts] == 9)):
        return None
    spaces = np.flatnonzero((arr == 32) | (arr == 9))
    at = np.searchsorted(spaces, starts)
    if at.size and at[-1] >= spaces.size:
        return None
    qend = spaces[at]
    if np.any(qend >= ends):
        return None
    lengths = qend - starts
    width = int(lengths.max())
    if width > 64:
        return None
    columns = np.arange(width)
    window = arr[np.minimum(starts[:, None] + columns, len(arr) - 1)]
    window = np.where(columns < lengths[:, None], window, 0)
    cuts = np.flatnonzero(np.any(window[1:] != window[:-1], axis=1)) + 1
    first = data[starts[0] : ends[0]].decode().split()
    if len(first) != 6:
        return None
    run: RunScores = {}
    tags = {first[5]}
    first_line = np.concatenate(([0], cuts))
    last_line = np.concatenate((cuts, [len(starts)])) - 1
    spans = zip(starts[first_line].tolist(), qend[first_line].tolist(), ends[last_line].tolist(), strict=True)
    for (a_byte, q_end, b_byte), a, b in zip(
        spans, first_line.tolist(), (last_line + 1).tolist(), strict=True
    ):
        q = data[a_byte:q_end].decode()
        if q not in queries:
            continue
        tokens = data[a_byte:b_byte].decode().split()
        if len(tokens) != 6 * (b - a):
            return None
        try:
            scores = to_float32(tokens[4::6])
        except ValueError:
            return None
        docs = run.setdefault(q, {})
        n_before = len(docs)
        docs.update(zip(tokens[2::6], scores, strict=True))
        if len(docs) - n_before != b - a:
            return None
        tags.update(tokens[5::6])
    return run, first[5], tags


def read_run(path: str | Path, name: str | None = None, queries: Container[str] | None = None) -> Run:
    """Read a run file (plain or gzip). ``name`` defaults to the run tag of its first line.

    ``queries`` keeps only those queries: an evaluation against qrels never looks at the others,
    so only their query ids are read (see :func:`_read_judged`); their other columns are not
    checked (trec_eval reads a bad number as 0 and does not check them either).
    """
    return run_from_text(path, read_text(path), name=name, queries=queries)


def run_from_text(
    path: str | Path, original: str, name: str | None = None, queries: Container[str] | None = None
) -> Run:
    """:func:`read_run` on the text of ``path`` already read (errors name ``path``)."""
    if queries is not None:
        fast = _read_judged(original, queries)
        if fast is not None:
            run, first_tag, tag_set = fast
            return Run(name=name or first_tag, scores=run, path=Path(path), tags=tag_set)
    text = _COMMENT_LINE.sub("", original) if "#" in original else original
    tokens = text.split()
    n_lines = text.count("\n") + (not text.endswith("\n"))
    if len(tokens) != 6 * n_lines:  # blank lines, or a bad line: count exactly
        n_lines = sum(1 for ln in text.split("\n") if ln and not ln.isspace())
    if len(tokens) != 6 * n_lines:  # trailing text after the tag (trec_eval ignores it), or a bad line
        rows = [cols[:6] for _, cols in _content_lines(text) if len(cols) >= 6]
        if len(rows) != n_lines:
            raise _fail_run_line(path, original)
        tokens = [t for row in rows for t in row]
    qids, docids, score_strs, tags = tokens[0::6], tokens[2::6], tokens[4::6], tokens[5::6]
    blocks = [(q, a, b) for q, a, b in _query_blocks(qids) if queries is None or q in queries]
    kept = score_strs if queries is None else [s for _, a, b in blocks for s in score_strs[a:b]]
    try:
        scores = to_float32(kept)
    except ValueError:
        raise _fail_run_line(path, original) from None
    run: RunScores = {}
    offset = 0
    for q, a, b in blocks:
        docs = run.setdefault(q, {})
        n_before = len(docs)
        docs.update(zip(docids[a:b], scores[offset : offset + b - a], strict=True))
        offset += b - a
        if len(docs) - n_before != b - a:  # a document listed twice
            raise _fail_run_line(path, original)
    tag_set = set(tags)
    run_name = name or (tags[0] if tags else Path(path).name)
    return Run(name=run_name, scores=run, path=Path(path), tags=tag_set)


def write_run(path: str | Path, run: Run | RunScores, tag: str | None = None) -> int:
    """Write a run atomically, ranks renumbered in trec_eval order."""
    scores = run.scores if isinstance(run, Run) else run
    tag = tag or (run.name if isinstance(run, Run) else "run")
    n = 0
    with open_output(path) as f:
        for qid, docs in scores.items():
            for rank, (docid, score) in enumerate(ranked(docs), start=1):
                f.write(f"{qid} Q0 {docid} {rank} {score:.9g} {tag}\n")
                n += 1
    return n


def expand_paths(paths: Iterable[str | Path]) -> list[Path]:
    """Files as given, directories replaced by their (non-hidden) files in name order; ``-`` is
    standard input."""
    out: list[Path] = []
    for p in map(Path, paths):
        if is_stdio(p):
            out.append(p)
        elif p.is_dir():
            files = sorted(
                Path(root) / f for root, _, names in os.walk(p) for f in names if not f.startswith(".")
            )
            if not files:
                raise UserError(f"{p}: directory holds no files")
            out.extend(files)
        elif not p.exists():
            raise UserError(f"{p}: no such file")
        else:
            out.append(p)
    return out


def _read_one(args: tuple[Path, str | None, frozenset[str] | None]) -> Run:
    path, name, queries = args
    return read_run(path, name=name, queries=queries)


def is_regular_file(path: Path) -> bool:
    """A file that a worker process can open by name (not ``-``, a pipe or ``<(...)``)."""
    try:
        return not is_stdio(path) and stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # the worker reports the error with the file's name


def quiet_worker() -> None:
    """Ctrl-C is the parent's to handle: workers print no traceback of their own."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)


NAME_FROM = ("tag", "file")
"""Where a run's name comes from (``--name-from``): its tag (column 6) or its file name."""


def run_name_from_file(path: str | Path) -> str:
    """``input.UNH_bm25.gz`` -> ``UNH_bm25`` (TREC's submission file naming; also drops .txt/.run/.trec)."""
    name = Path(path).name
    for suffix in (".gz", ".txt", ".run", ".trec"):
        name = name.removesuffix(suffix)
    return name.removeprefix("input.")


RunSource = tuple[Path, str | None]
"""A run file and the name given to it (``None``: its tag)."""


def run_sources(args: Iterable[str | Path | RunSource], name_from: str = "tag") -> list[RunSource]:
    """The run files that ``--run`` arguments stand for, each with its name.

    An argument is a file, a directory (its files, in name order) or ``NAME=FILE``
    (:func:`~rubric.data.named.split_named`), which names that run whatever its tag or file name;
    other runs are named by ``name_from``: ``tag`` (column 6) or ``file``
    (:func:`run_name_from_file`). Sources already made pass through.
    """
    from rubric.data.named import split_named

    out: list[RunSource] = []
    for arg in args:
        if isinstance(arg, tuple):
            out.append(arg)
            continue
        name, path = split_named(arg)
        if name is not None:
            if Path(path).is_dir():
                raise UserError(f"{arg}: NAME=PATH names one run file, and {path} is a directory")
            out.extend((p, name) for p in expand_paths([path]))
            continue
        out.extend((p, run_name_from_file(p) if name_from == "file" else None) for p in expand_paths([arg]))
    return out


def read_runs(
    paths: Iterable[str | Path | RunSource],
    queries: Iterable[str] | None = None,
    name_from: str = "tag",
    workers: int | None = None,
) -> list[Run]:
    """Read many runs, in parallel processes when there are several (parsing is CPU bound).

    ``paths`` are files, directories or ``NAME=FILE`` (:func:`run_sources`); two runs with the
    same name are an error, since every report keys runs by name.
    """
    keep = frozenset(queries) if queries is not None else None
    jobs = [(p, name, keep) for p, name in run_sources(paths, name_from)]
    # pipes and standard input are read here: they are open in this process only
    streams = {i: _read_one(job) for i, job in enumerate(jobs) if not is_regular_file(job[0])}
    files = [job for i, job in enumerate(jobs) if i not in streams]
    workers = min(workers or os.cpu_count() or 1, len(files))
    if workers > 1 and len(files) >= 4:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers, initializer=quiet_worker) as pool:
            read = iter(pool.map(_read_one, files, chunksize=max(1, len(files) // (4 * workers))))
            runs = [streams[i] if i in streams else next(read) for i in range(len(jobs))]
    else:
        read = iter(map(_read_one, files))
        runs = [streams[i] if i in streams else next(read) for i in range(len(jobs))]
    check_run_names([(run.name, run.path) for run in runs], name_from)
    return runs


def check_run_names(named: Iterable[tuple[str, Path | None]], name_from: str = "tag") -> None:
    """Two runs with the same name are an error (every report keys runs by name); the message
    names both files and how to name them apart."""
    seen: dict[str, Path | None] = {}
    for name, path in named:
        if name in seen:
            other = "{name_from} file or " if name_from == "tag" else ""
            raise UserError(
                f"{path}: run name {name!r} is also the name of {seen[name]} "
                f"(name them apart: {other}{{runs}} NAME=PATH)",
                "name_from",
                "runs",
            )
        seen[name] = path
