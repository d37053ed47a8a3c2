"""The public Python API, one verb per step of the pipeline, each returning data or a report.

``import rubric`` exposes these names lazily (see :mod:`rubric`); every one takes paths or loaded
objects, with the defaults of the matching command, so a notebook can go from runs to a
leaderboard without files in between::

    passages = rubric.pool("topics.json", ["runs/"], ["collection.tsv"], qrels="qrels.txt")
    graded = rubric.grade(passages, "nuggets.jsonl", prompts="NuggetSelfRatedPrompt", backend="embedding")
    board = rubric.leaderboard(rubric.qrels(graded), ["runs/"], "nDCG@10")
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from rubric.data.grade_filter import GradeFilter
from rubric.data.grade_table import GradedLike, as_graded
from rubric.data.labels import LabelRule
from rubric.data.models import QueryWithFullParagraphList
from rubric.data.query_selection import QuerySelection
from rubric.errors import UserError, expected, renamed
from rubric.evaluate.qrels import QrelsResult, build_qrels


def paths(value: object, parameter: str) -> list[Path]:
    """One path or several, as a list; anything else is a one-line error naming ``parameter``."""
    if isinstance(value, str | os.PathLike):
        return [Path(value)]
    items = list(value) if isinstance(value, Iterable) else None
    if items is not None and all(isinstance(v, str | os.PathLike) for v in items):
        return [Path(v) for v in items]
    raise expected(parameter, "a path or a list of paths", value)


def pool(
    topics: str | Path | dict[str, str] | None = None,
    runs: Iterable[str | Path] = (),
    collection: str | Path | Iterable[str | Path] | None = None,
    *,
    qrels: str | Path | None = None,
    top_k: int = 20,
    name_from: str = "tag",
    allow_missing: bool = False,
    queries: str | Path | dict[str, str] | None = None,
) -> list[QueryWithFullParagraphList]:
    """The passages to grade, as ``rubric convert runs`` pools them: the top ``top_k`` of every
    run (files or directories) plus every judged passage, texts from ``collection``.

    ``topics`` are the query texts: a queries file (``--topics``) or ``{qid: text}``
    (``queries=`` is its deprecated old name)."""
    from rubric.convert.pool import pool_inputs

    topics = renamed("queries", "topics", queries, topics)
    if topics is None or collection is None:
        raise UserError(
            "{topics}, {collection}: give the query texts and the passage texts", "topics", "collection"
        )
    if not isinstance(topics, dict | str | os.PathLike):
        raise expected("topics", "a queries file or {qid: text}", topics)
    source = dict(topics) if isinstance(topics, dict) else Path(topics)
    passages, _ = pool_inputs(
        source,
        paths(runs, "runs"),
        paths(collection, "collection"),
        qrels=None if qrels is None else Path(qrels),
        top_k=top_k,
        name_from=name_from,
        allow_missing=allow_missing,
    )
    return passages


def qrels(
    graded: GradedLike,
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
        as_graded(graded, "graded"),
        selection=GradeFilter(prompt_class, llm, prompt_type),
        rule=LabelRule.parse(label, min_grade),
        per_item=per_item,
        queries=queries,
        prefer=prefer,
    )
