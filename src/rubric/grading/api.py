"""``rubric.grade``: grading from Python (a notebook, a script), the command's job in process.

    import rubric
    graded = rubric.grade("passages.jsonl.gz", "questions.jsonl.gz",
                          prompts="QuestionSelfRatedUnanswerablePromptWithChoices",
                          backend="hf-seq2seq", model="google/flan-t5-small", output="graded.jsonl.gz")
    graded.queries[0].paragraphs[0].exam_grades      # the same records `rubric grade` writes
    graded.outcome.failures; graded.stats.failed     # every pair that failed, as values

It runs what ``rubric grade`` runs (:meth:`rubric.grading.settings.GradeSettings.grade`: the
job, its checks before any model loads, the response cache on by default, the output lock and
the resume from ``OUT.partial``), so an interrupted call, called again, asks the model only
what it had not answered. Without ``output`` the graded file goes to a temporary folder (the
cache still keeps every answer). Bad input raises :class:`~rubric.errors.UserError` naming the
parameter; pairs that failed after every retry are returned, not raised.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import tempfile
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.data.files import Labelled, guarded_outputs
from rubric.data.grade_table import GradedQueries
from rubric.data.models import QueryWithFullParagraphList, TestBank
from rubric.errors import REMOVAL
from rubric.grading.engine import GradeStats
from rubric.grading.runner import CHUNK_PAIRS
from rubric.grading.settings import GradeOutcome, GradeSettings
from rubric.llm.settings import ApiSettings, LocalSettings


@dataclass(repr=False)
class Graded(GradedQueries):
    """The graded queries and what it took (``stats.failed`` lists the pairs without a grade;
    ``outcome`` is what the command prints at its end). ``rows()`` and ``to_dataframe()`` show
    the grades as a flat table (:class:`~rubric.data.grade_table.GradeRow`)."""

    stats: GradeStats
    outcome: GradeOutcome | None = None
    inputs: list[Labelled] = field(default_factory=list)
    """The files grading read besides the passages (bank, topics, prompt files): never written."""

    def write(self, path: str | Path) -> int:
        """Write the graded passages file (atomically: all or nothing); returns the number of
        queries. ``path`` may be the passages file graded (its new version), not another input."""
        from rubric.data.jsonl import write_passages

        with guarded_outputs([("path", path)], self.inputs):
            return write_passages(path, self.queries)


def grade(
    passages: str | Path | Iterable[QueryWithFullParagraphList] | GradedQueries,
    bank: str | Path | Iterable[TestBank] | None = None,
    *,
    prompts: str | Sequence[str],
    backend: str = "hf-seq2seq",
    output: str | Path | None = None,
    topics: str | Path | dict[str, str] | None = None,
    queries: Iterable[str] | str | Path | dict[str, str] | None = None,
    query: Iterable[str] | None = None,
    model: str | None = None,
    cache: str | Path | None = None,
    use_cache: bool = True,
    fast: bool = True,
    prompt_files: Sequence[str | Path] = (),
    checkpoint_pairs: int = CHUNK_PAIRS,
    report: Callable[[str], None] | None = None,
    **settings: Any,
) -> Graded:
    """Grade every (passage, item) pair of ``bank`` -- or, with ``bank=None``, every (passage,
    query) pair with direct prompts and the texts of ``queries`` -- into ``output``, as
    ``rubric grade`` does, and return the graded queries.

    ``passages``, ``bank`` and ``topics`` (the query texts: a queries file or ``{qid: text}``)
    are paths or loaded objects (``passages`` also :func:`rubric.pool`'s or this function's
    result); ``prompts`` names (or TOML paths); ``backend`` a registry name, built for ``model``
    (None: its default model). ``cache`` is the response cache (None: the default one, as the
    command's); ``use_cache`` False asks everything. ``queries`` grades only these query ids,
    as every verb's ``queries=`` (``query=`` is its deprecated old name; ``queries=`` given a
    file or a dict is the deprecated old name of ``topics=``). ``settings`` are the fields of
    :class:`~rubric.llm.settings.LocalSettings` (``device="cpu"``, ``batch_size``, ...),
    :class:`~rubric.llm.settings.ApiSettings` (``base_url``, ``concurrency``, ...) and the
    scale-out fields of :class:`~rubric.grading.settings.GradeSettings` (``shard``,
    ``workers``, ...). Notes and warnings go to the ``rubric`` logger (``report=``, a callback
    that received them, is deprecated).
    """
    from rubric.data.jsonl import read_passages
    from rubric.errors import UserError, renamed

    if isinstance(queries, str | Path | dict):  # the old meaning: the query texts
        topics, queries = renamed("queries", "topics", queries, topics), None
    selected = renamed("query", "queries", query, queries)
    if (bank is None) == (topics is None):
        raise UserError(
            "{bank}, {topics}: give one, a bank (exam grading) or the query texts (direct prompts)",
            "bank",
            "topics",
        )
    if isinstance(passages, GradedQueries):
        passages = passages.queries
    inputs: list[Labelled] = [
        (name, Path(value))
        for name, values in (
            ("bank", [bank]),
            ("topics", [topics]),
            ("cache", [cache]),
            ("prompt_files", prompt_files),
        )
        for value in values
        if isinstance(value, str | Path)
    ]  # the passages file may be the output: grading in place, as `rubric grade` does
    chosen = [prompts] if isinstance(prompts, str) else list(prompts)
    grouped = _split(settings)
    outputs = [] if output is None else [("output", Path(output))]
    with (
        guarded_outputs(outputs, inputs),
        tempfile.TemporaryDirectory(prefix="rubric-grade-api-") as tmp,
        _forwarded(report),
    ):
        files = _files(Path(tmp), passages=passages, bank=bank, queries=topics)
        target = Path(output) if output is not None else Path(tmp) / "graded.jsonl"
        run = GradeSettings(
            target,
            prompt_file=[Path(f) for f in prompt_files],
            backend=backend,
            model=model,
            fast=fast,
            cache=None if cache is None else Path(cache),
            no_cache=not use_cache,
            checkpoint_pairs=checkpoint_pairs,
            query=None if selected is None else list(selected),
            **grouped,
        )
        outcome = run.grade(files.passages, chosen, files.bank, files.queries, given=files.given)
        graded = list(read_passages(target))
    assert outcome.stats is not None  # GradeSettings.grade always counts
    return Graded(graded, outcome.stats, outcome, inputs)


class _Callback(logging.Handler):
    """The messages of the ``rubric`` logger, handed to a callback."""

    def __init__(self, callback: Callable[[str], None]):
        super().__init__(logging.INFO)
        self.callback = callback

    def emit(self, record: logging.LogRecord) -> None:
        self.callback(record.getMessage())


@contextlib.contextmanager
def _forwarded(report: Callable[[str], None] | None) -> Iterator[None]:
    """The deprecated ``report=`` of :func:`grade`: the logger's messages go to it meanwhile."""
    if report is None:
        yield
        return
    warnings.warn(
        f"report= is deprecated and will be removed in rubric-workbench {REMOVAL}; notes go to the "
        "'rubric' logger",
        DeprecationWarning,
        stacklevel=4,
    )
    logger, handler = logging.getLogger("rubric"), _Callback(report)
    level = logger.level
    logger.addHandler(handler)
    if not logger.isEnabledFor(logging.INFO):
        logger.setLevel(logging.INFO)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@dataclass
class _Inputs:
    """The files a grading job reads, and which of them were written from given objects (their
    content, not their new temporary path, goes into the run's fingerprint)."""

    passages: Path
    bank: Path | None
    queries: Path | None
    given: tuple[str, ...]


def _files(
    folder: Path,
    *,
    passages: str | Path | Iterable[QueryWithFullParagraphList],
    bank: str | Path | Iterable[TestBank] | None,
    queries: str | Path | dict[str, str] | None,
) -> _Inputs:
    """The job reads files: inputs given as objects are written to ``folder``."""
    import json

    from rubric.data.jsonl import write_bank, write_passages

    given: list[str] = []
    if not isinstance(passages, (str, Path)):
        write_passages(folder / "passages.jsonl", passages)
        passages, given = folder / "passages.jsonl", [*given, "passages"]
    if bank is not None and not isinstance(bank, (str, Path)):
        write_bank(folder / "bank.jsonl", bank)
        bank, given = folder / "bank.jsonl", [*given, "bank"]
    if isinstance(queries, dict):
        (folder / "queries.json").write_text(json.dumps(queries, ensure_ascii=False), encoding="utf-8")
        queries, given = folder / "queries.json", [*given, "queries"]
    return _Inputs(
        Path(passages),
        None if bank is None else Path(bank),
        None if queries is None else Path(queries),
        tuple(given),
    )


def _split(settings: dict[str, Any]) -> dict[str, Any]:
    """``rubric.grade``'s keyword settings as :class:`GradeSettings` fields: the local-model and
    server settings into their groups, the scale-out ones as they are; others are a TypeError."""
    local = {f.name for f in dataclasses.fields(LocalSettings)}
    api = {f.name for f in dataclasses.fields(ApiSettings)}
    scale = {"shard", "devices", "workers", "ray", "ray_address"}
    unknown = sorted(set(settings) - local - api - scale)
    if unknown:
        raise TypeError(f"rubric.grade() got unexpected keyword arguments: {', '.join(unknown)}")
    return {
        "local": LocalSettings(**{k: v for k, v in settings.items() if k in local}),
        "api": ApiSettings(**{k: v for k, v in settings.items() if k in api}),
        **{k: v for k, v in settings.items() if k in scale},
    }
