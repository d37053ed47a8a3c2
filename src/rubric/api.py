"""The public Python API, one verb per step of the pipeline, each returning data or a report.

``import rubric`` exposes these names lazily (see :mod:`rubric`); every one takes paths or loaded
objects, with the defaults of the matching command, so a notebook can go from runs to a
leaderboard without files in between::

    passages = rubric.pool("queries.json", ["runs/"], ["collection.tsv"], qrels="qrels.txt")
    graded = rubric.grade(passages, "nuggets.jsonl", prompts="NuggetSelfRatedPrompt", backend="embedding")
    board = rubric.leaderboard(rubric.qrels(graded), ["runs/"], "nDCG@10")
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rubric.data.labels import LabelRule
from rubric.data.models import QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.data.select import GradeFilter
from rubric.errors import UserError
from rubric.evaluate.qrels import QrelsResult, build_qrels
from rubric.grading.api import Graded

PassagesLike = str | Path | Iterable[QueryWithFullParagraphList] | Graded


def _queries_of(passages: PassagesLike) -> str | Path | list[QueryWithFullParagraphList]:
    if isinstance(passages, Graded):
        return passages.queries
    return passages if isinstance(passages, str | Path) else list(passages)


def pool(
    queries: str | Path | dict[str, str],
    runs: Iterable[str | Path],
    collection: str | Path | Iterable[str | Path],
    *,
    qrels: str | Path | None = None,
    top_k: int = 20,
    name_from: str = "tag",
    allow_missing: bool = False,
) -> list[QueryWithFullParagraphList]:
    """The passages to grade, as ``rubric convert runs`` pools them: the top ``top_k`` of every
    run (files or directories) plus every judged passage, texts from ``collection``."""
    from rubric.convert.pool import pool_inputs

    files = [Path(collection)] if isinstance(collection, str | Path) else [Path(c) for c in collection]
    source = dict(queries) if isinstance(queries, dict) else Path(queries)
    passages, _ = pool_inputs(
        source,
        [Path(r) for r in runs],
        files,
        qrels=None if qrels is None else Path(qrels),
        top_k=top_k,
        name_from=name_from,
        allow_missing=allow_missing,
    )
    return passages


def qrels(
    graded: PassagesLike,
    prompt_class: str | None = None,
    *,
    llm: str | None = None,
    prompt_type: str | None = None,
    label: str = "max",
    min_grade: int = 1,
    per_item: bool = False,
    queries: QuerySelection | Iterable[str] | None = None,
    prefer: str | None = None,
) -> QrelsResult:
    """Rubric-Qrels from grades, as ``rubric evaluate qrels``: one label per graded passage
    (``label``: ``max``, ``count`` or ``nth:M``). The result's :meth:`~QrelsResult.to_dict` feeds
    :func:`leaderboard` (which also takes the result itself); ``write`` saves TREC qrels.

    ``min_grade`` is the threshold of ``label="count"`` only; with ``max`` or ``nth:M`` the
    labels are grades, and what counts as relevant is the ``level`` of :func:`leaderboard`, so
    a ``min_grade`` there would change nothing and is refused."""
    if label != "count" and min_grade != 1:
        raise UserError(
            f"min_grade: used only with label='count' (with label={label!r} the labels are grades; "
            "count grades >= T as relevant with leaderboard(..., level=T))"
        )
    return build_qrels(
        _queries_of(graded),
        selection=GradeFilter(prompt_class, llm, prompt_type),
        rule=LabelRule.parse(label, min_grade),
        per_item=per_item,
        queries=queries,
        prefer=prefer,
    )
