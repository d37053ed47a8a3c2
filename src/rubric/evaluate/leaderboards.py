"""Leaderboards (module named in the plural so that ``rubric.evaluate.leaderboard`` is the
function): many runs x many measures against one qrels, exactly as trec_eval 9.0.8 scores them.

The qrels are prepared once (one :class:`~rubric.evaluate.treceval.Evaluator`) and every run is
evaluated against them; runs are read as columns (:mod:`rubric.data.run_columns`) and scored in
parallel worker processes, one run at a time each, keeping only their judged queries and sending
back only the per-query values, so memory does not grow with the number of runs. trec_eval's
options are keyword arguments (:class:`TrecEvalOptions`) or one
:class:`~rubric.evaluate.treceval.TrecEvalSettings`. The result is a
:class:`~rubric.evaluate.report.Report`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from rubric.data.query_selection import Queries, QuerySelection, absent_note
from rubric.data.run_columns import RunColumns, read_run_columns
from rubric.data.table import check_format, counted
from rubric.data.trec import (
    NAME_FROM,
    Qrels,
    Run,
    RunScores,
    RunSource,
    check_run_names,
    is_regular_file,
    read_qrels,
    run_sources,
)
from rubric.errors import UserError, expected, one_of
from rubric.evaluate.alpha_ndcg import ItemQrels, max_qrels, read_item_qrels
from rubric.evaluate.measures import Measure, parse_measures, relstring_request, wants_runid
from rubric.evaluate.report import Rendered, Report, Score
from rubric.evaluate.treceval import Evaluator, QueryValues, TrecEvalSettings, trec_eval_lines
from rubric.evaluate.zscores import ZScores, read_zscores

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from rubric.evaluate.qrels import QrelsResult
    from rubric.evaluate.wide import Marks

RunsLike = Iterable[Run | str | Path | RunSource] | Mapping[str, RunScores]


def load_qrels(qrels: Qrels | QrelsResult | str | Path) -> Qrels:
    """Qrels from a dict, the result of :func:`~rubric.evaluate.qrels.build_qrels` or a file."""
    if isinstance(qrels, dict):
        return qrels
    if isinstance(qrels, str | os.PathLike):
        return read_qrels(qrels)
    from rubric.evaluate.qrels import QrelsResult  # here: it loads pydantic, which scoring never needs

    if isinstance(qrels, QrelsResult):
        return qrels.to_dict()
    raise expected("qrels", "a qrels file, rubric.qrels's result or {qid: {docid: label}}", qrels)


def as_runs(runs: object) -> list[Run | str | Path | RunSource]:
    """Runs given as one path or a list of paths, :class:`Run` objects and run sources;
    anything else is a one-line error naming ``runs``."""
    if isinstance(runs, str | os.PathLike):
        return [runs if isinstance(runs, str) else Path(runs)]
    items = list(runs) if isinstance(runs, Iterable) else None
    if items is not None and all(isinstance(r, Run | str | os.PathLike | tuple) for r in items):
        return items
    raise expected("runs", "run files or folders, Run objects or {name: {qid: {docid: score}}}", runs)


def _size(path: Path) -> int:
    """A run file's size in bytes (0 if it cannot be read: its reader then says why)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _read_columns(job: tuple[Path, str | None, frozenset[str] | None]) -> RunColumns:
    path, name, queries = job
    return read_run_columns(path, name=name, queries=queries)


def load_run_columns(
    runs: RunsLike, queries: Iterable[str] | None = None, name_from: str = "tag", workers: int | None = None
) -> list[RunColumns]:
    """Runs as columns (:mod:`rubric.data.run_columns`), for scoring against several qrels: files
    read in worker processes (one per core), only ``queries`` kept; two runs of one name are an
    error, as in :func:`~rubric.data.trec.read_runs`."""
    keep = frozenset(queries) if queries is not None else None
    expanded = expand_runs(runs, name_from)
    if isinstance(expanded, Mapping):
        return [RunColumns.from_scores(name, scores) for name, scores in expanded.items()]
    jobs = {i: (r[0], r[1], keep) for i, r in enumerate(expanded) if not isinstance(r, Run)}
    files = [i for i, job in jobs.items() if is_regular_file(job[0])]
    workers = min(workers or os.cpu_count() or 1, len(files))
    read: dict[int, RunColumns] = {}
    if workers > 1 and len(files) >= 4:
        from concurrent.futures import ProcessPoolExecutor

        from rubric.data.trec import quiet_worker

        files.sort(key=lambda i: -_size(jobs[i][0]))  # largest first: no long run left for last
        with ProcessPoolExecutor(workers, initializer=quiet_worker) as pool:
            read.update(zip(files, pool.map(_read_columns, [jobs[i] for i in files]), strict=True))
    out = []
    for i, r in enumerate(expanded):
        if isinstance(r, Run):
            out.append(RunColumns.from_scores(r.name, r.scores, r.path))
        else:
            out.append(read[i] if i in read else _read_columns(jobs[i]))
    check_run_names([(r.name, r.path) for r in out], name_from)
    return out


def as_measures(measures: Iterable[str | Measure] | str) -> list[Measure]:
    """Measures given as names (``-m`` values) or :class:`Measure` objects, in order."""
    return parse_measures(measures)


class TrecEvalOptions(TypedDict, total=False):
    """trec_eval's options as keyword arguments of the library's functions (the CLI's flags):
    ``level`` (-l), ``complete`` (-c), ``judged_only`` (-J), ``max_docs`` (-M), ``num_docs`` (-N),
    ``zscores`` (-Z: a z-score file or its contents). See
    :class:`~rubric.evaluate.treceval.TrecEvalSettings`."""

    level: int
    complete: bool
    judged_only: bool
    max_docs: int | None
    num_docs: int | None
    zscores: ZScores | str | Path | None


@dataclass
class Evaluation:
    """Per-query values of every run, and what a reader should know about the queries."""

    results: list[QueryValues]
    notes: list[str] = field(default_factory=list)


def check_options(options: TrecEvalOptions) -> None:
    """Refuse impossible trec_eval options, naming the CLI's option (before any file is read)."""
    unknown = sorted(set(options) - set(TrecEvalOptions.__annotations__))
    if unknown:
        raise TypeError(f"unknown trec_eval option(s): {', '.join(unknown)}")
    max_docs, num_docs = options.get("max_docs"), options.get("num_docs")
    if max_docs is not None and max_docs < 1:
        raise UserError(f"{{max_docs}}: must be at least 1, got {max_docs}", "max_docs")
    if num_docs is not None and num_docs < 0:
        raise UserError(f"{{num_docs}}: must be at least 0, got {num_docs}", "num_docs")
    if options.get("zscores") is not None and options.get("complete"):
        raise UserError(
            "{zscores}: not with -c/{complete} (trec_eval -Z -c mixes z-scores and raw values)",
            "zscores",
            "complete",
        )


def settings_of(options: TrecEvalOptions) -> TrecEvalSettings:
    """The settings of these options, a z-score file read."""
    zscores = options.get("zscores")
    if zscores is not None and not isinstance(zscores, dict):
        zscores = read_zscores(zscores)
    return TrecEvalSettings(
        level=options.get("level", 1),
        complete=options.get("complete", False),
        judged_only=options.get("judged_only", False),
        max_docs=options.get("max_docs"),
        num_docs=options.get("num_docs"),
        zscores=zscores,
    )


def evaluate(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    *,
    name_from: str = "tag",
    queries: Queries = None,
    relstring: tuple[str, int] | None = None,
    **options: Unpack[TrecEvalOptions],
) -> Evaluation:
    """Per-query values of every run (trec_eval ``-q`` output as data), with notes.

    Runs given as directories stand for the files in them. ``queries`` restricts the qrels (and
    so the runs) to these query ids, as trec_eval would see a qrels file holding only them; the
    notes list selected ids the qrels lack and runs that rank nothing for some qrels queries
    (trec_eval says nothing about either). Options are checked first, then the queries are read
    (``queries`` may be a function that reads them), then the runs and qrels. ``options`` are
    trec_eval's (:class:`TrecEvalOptions`): ``max_docs`` cuts every ranking to its first
    documents (``-M``), ``num_docs`` is the collection's size for ``utility`` (``-N``),
    ``zscores`` a z-score file or its contents (``-Z``: values as z-scores,
    :mod:`rubric.evaluate.zscores`; not with ``complete``). ``relstring`` is trec_eval's
    relstring (printed name, length), kept per query in each result's ``relstrings``.
    """
    one_of("name_from", name_from, NAME_FROM)
    check_options(options)
    ms = as_measures(measures)  # every name checked before any file is read
    chosen = QuerySelection.of(queries)
    runs = expand_runs(runs, name_from)
    items = None
    if any(m.needs_items for m in ms) and not isinstance(qrels, dict):
        items = chosen.restrict(read_item_qrels(qrels))  # per-item; trec_eval measures see the best grade
        qrels = max_qrels(items)
    where = "the qrels" if isinstance(qrels, dict) else str(qrels)
    settings = settings_of(options)
    loaded = load_qrels(qrels)
    absent = chosen.check_present(loaded, where)
    qrels = chosen.restrict(loaded)
    results = score_runs(Scoring(qrels, ms, settings, items, relstring), runs, name_from)
    notes = [absent_note(absent, where, "selected"), unranked_note(results, complete=settings.complete)]
    return Evaluation(results, [n for n in notes if n])


@dataclass
class Scoring:
    """What an :class:`Evaluator` is made of (pickled to worker processes, which make their own:
    pytrec_eval's evaluators cannot be pickled)."""

    qrels: Qrels
    measures: list[Measure]
    settings: TrecEvalSettings
    items: ItemQrels | None = None
    relstring: tuple[str, int] | None = None  # trec_eval's relstring (printed name, length)

    def evaluator(self) -> Evaluator:
        return Evaluator(self.qrels, self.measures, self.settings, items=self.items, relstring=self.relstring)


_worker_evaluator: Evaluator | None = None


def _start_worker(scoring: Scoring) -> None:
    """A worker process builds its own evaluator once."""
    global _worker_evaluator
    from rubric.data.trec import quiet_worker

    quiet_worker()
    _worker_evaluator = scoring.evaluator()


def _score_file(job: tuple[Path, str | None, frozenset[str]]) -> tuple[QueryValues, Path | None]:
    path, name, queries = job
    run = read_run_columns(path, name=name, queries=queries)
    assert _worker_evaluator is not None
    return _worker_evaluator.evaluate(run), run.path


def score_runs(
    scoring: Scoring, runs: RunsLike, name_from: str = "tag", workers: int | None = None
) -> list[QueryValues]:
    """Per-query values of every run, each run read and scored in turn and then dropped.

    Memory holds one run per process, however many runs: run files are read and scored in a
    pool of worker processes (one per core) that send back only the per-query values; runs
    given as objects, standard input and pipes are scored here. Runs are objects, ``--run``
    arguments (files, directories, ``NAME=FILE``) or their :func:`~rubric.data.trec.run_sources`.
    Two runs of one name are an error, as in :func:`~rubric.data.trec.read_runs`.
    """
    evaluator = scoring.evaluator()  # checks the measures before any run is read
    if isinstance(runs, Mapping):
        return [evaluator.evaluate(scores, name) for name, scores in runs.items()]
    queries = frozenset(scoring.qrels)
    sources = expand_runs(runs, name_from)
    assert not isinstance(sources, Mapping)  # only a Mapping of runs expands to one (returned above)
    items = list(sources)
    found: dict[int, tuple[QueryValues, Path | None]] = {}
    files: list[tuple[int, tuple[Path, str | None, frozenset[str]]]] = []
    for i, r in enumerate(items):
        if isinstance(r, Run):
            found[i] = (evaluator.evaluate(r.scores, r.name), r.path)
            continue
        path, name = r
        job = (path, name, queries)
        if is_regular_file(path):
            files.append((i, job))
        else:  # a pipe is open in this process only
            run = read_run_columns(path, name, queries=queries)
            found[i] = (evaluator.evaluate(run), run.path)
    workers = min(workers or os.cpu_count() or 1, len(files))
    if workers > 1 and len(files) >= 4:
        from concurrent.futures import ProcessPoolExecutor

        files.sort(key=lambda item: -_size(item[1][0]))  # largest first: no long run left for last
        with ProcessPoolExecutor(workers, initializer=_start_worker, initargs=(scoring,)) as pool:
            for (i, _), result in zip(files, pool.map(_score_file, [job for _, job in files]), strict=True):
                found[i] = result
    else:
        for i, (path, name, keep) in files:
            run = read_run_columns(path, name=name, queries=keep)
            found[i] = (evaluator.evaluate(run), run.path)
    results = [found[i] for i in range(len(items))]
    check_run_names([(values.run, path) for values, path in results], name_from)
    return [values for values, _ in results]


def evaluate_runs(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    *,
    name_from: str = "tag",
    queries: QuerySelection | Iterable[str] | None = None,
    **options: Unpack[TrecEvalOptions],
) -> list[QueryValues]:
    """Per-query values of every run (:func:`evaluate` without the notes)."""
    return evaluate(qrels, runs, measures, name_from=name_from, queries=queries, **options).results


def unranked_note(results: list[QueryValues], *, complete: bool) -> str | None:
    """One line about runs without a ranking for some qrels queries (trec_eval says nothing)."""
    short = [r for r in results if r.unranked]
    if not short:
        return None
    n_qrels = len(short[0].unranked) + len(short[0].retrieved)
    what = "each counted as 0, as -c asks" if complete else "left out of their means; -c counts them as 0"
    runs = ", ".join(f"{r.run} ({len(r.unranked)})" for r in short[:10])
    more = f" and {len(short) - 10} more" if len(short) > 10 else ""
    return (
        f"{len(short)} of {len(results)} runs rank no passage for some of the {n_qrels} qrels queries "
        f"({what}): {runs}{more}"
    )


def report_from(
    results: list[QueryValues], title: str = "leaderboard", notes: list[str] | None = None
) -> Report:
    scores = []
    for res in results:
        for m, column in res.values.items():
            scores.append(
                Score(
                    run=res.run,
                    measure=m.label,
                    value=res.summary(m),
                    per_query={q: column[q] for q in res.queries},
                    mean_aggregate=m.aggregate == "mean",
                )
            )
    return Report(scores, title=title, notes=list(notes or []))


def leaderboard(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: Iterable[str | Measure] | str,
    *,
    name_from: str = "tag",
    queries: QuerySelection | Iterable[str] | None = None,
    **options: Unpack[TrecEvalOptions],
) -> Report:
    """Score runs with trec_eval measures; the report is sorted by the first measure.

    ``qrels`` and ``runs`` are paths (runs: files or directories) or loaded objects; ``options``
    are trec_eval's (:class:`TrecEvalOptions`: ``level`` -l, ``complete`` -c, ``judged_only``
    -J, ``max_docs`` -M, ``num_docs`` -N, ``zscores`` -Z), with the CLI's defaults (``-l 1``,
    none of the others); run names come from the run tag.

    >>> report = leaderboard("qrels.txt", ["runs/"], ["nDCG@10", "AP(rel=2)"], level=1)  # doctest: +SKIP
    >>> print(report.to_tsv())  # doctest: +SKIP
    """
    done = evaluate(qrels, runs, measures, name_from=name_from, queries=queries, **options)
    return report_from(done.results, notes=done.notes)


FORMATS = ("tsv", "csv", "json", "latex", "trec_eval")
"""What `evaluate leaderboard` writes: a :class:`Report` (TSV, CSV, JSON, LaTeX) or trec_eval's own text."""


def leaderboard_output(
    qrels: Qrels | str | Path,
    runs: RunsLike,
    measures: list[str],
    *,
    per_query: bool = False,
    fmt: str = "tsv",
    digits: int = 4,
    name_from: str = "tag",
    queries: Queries = None,
    wide: bool = False,
    marks: Marks | None = None,
    **options: Unpack[TrecEvalOptions],
) -> Rendered:
    """The leaderboard as ``rubric evaluate leaderboard`` writes it, in ``fmt`` (one of
    :data:`FORMATS`; ``trec_eval``: exactly trec_eval's output, run after run, with the ``runid``
    line where trec_eval prints it for these ``measures``), and the notes for stderr. ``wide``
    writes runs x measures (TSV or CSV) with ``marks`` of significance against a baseline
    (:mod:`rubric.evaluate.wide`); ``options`` are trec_eval's (:class:`TrecEvalOptions`).

    Every option is checked before any file is read (``queries`` may be a function that reads
    them, called after the checks).
    """
    check_format(fmt, FORMATS)
    if wide and fmt not in ("tsv", "csv"):
        raise UserError(f"{{wide}}: a TSV or CSV table (-f tsv or csv), not -f {fmt}", "wide")
    if wide and per_query:
        raise UserError("{wide}: one value per run and measure; not with {per_query}", "wide", "per_query")
    if marks is not None and not wide:
        raise UserError("{baseline}: marks the cells of the wide table; add {wide}", "baseline", "wide")
    numbers, relstring = measures, None
    if fmt == "trec_eval":  # trec_eval's relevance strings: per query, in its own output only
        numbers, relstring = relstring_request(measures)
        relstring = relstring if per_query else None
    done = evaluate(
        qrels, runs, numbers, name_from=name_from, queries=queries, relstring=relstring, **options
    )
    notes = [*done.notes, f"scored {counted(len(done.results), 'run')}"]
    if fmt == "trec_eval":
        runid = wants_runid(measures)
        text = "".join(
            line + "\n" for r in done.results for line in trec_eval_lines(r, per_query=per_query, runid=runid)
        )
    elif wide:
        from rubric.evaluate.wide import wide_table

        made = wide_table(report_from(done.results), digits, marks)
        text = made.table.render(fmt)
        notes += made.notes
    else:
        text = report_from(done.results).render(fmt, digits=digits, per_query=per_query)
    return Rendered(text, notes)


def expand_runs(runs: RunsLike, name_from: str = "tag") -> list[Run | RunSource] | Mapping[str, RunScores]:
    """Runs as objects or :func:`~rubric.data.trec.run_sources` (directories stand for the
    files in them, ``NAME=FILE`` names a run); already expanded sources pass through."""
    if isinstance(runs, Mapping):
        return runs
    out: list[Run | RunSource] = []
    for r in as_runs(runs):
        if isinstance(r, Run | tuple):
            out.append(r)
        else:
            out.extend(run_sources([r], name_from))
    return out
