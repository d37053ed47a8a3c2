"""The two sides that `rubric verify agreement` compares: labels and human judgments per passage.

Labels come from the grades of a graded file (one side per prompt class, the file read once,
query by query) or from imported LLM qrels; judgments from a human qrels file or from the
judgments stored in the graded file. A side is a count of (label, judgment) pairs over the
passages that have both, ready for :class:`~rubric.verify.agreement.Agreement`.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from rubric.data.grade_filter import GradeFilter, resolve_kind
from rubric.data.graded import GradedFile, LoadedGraded
from rubric.data.labels import GradeMap, LabelRule
from rubric.data.query_selection import QuerySelection
from rubric.errors import UserError
from rubric.verify.matrix import query_grades, query_judgments, query_labels

Cell = tuple[str, str]  # (query id, passage id)
Side = tuple[str, Counter[tuple[int, int]]]  # name, counts of (label, judgment)

log = logging.getLogger(__name__)


def qrels_cells(path: str | Path, chosen: QuerySelection) -> tuple[dict[Cell, int], list[str]]:
    """A qrels file's labels of the selected queries, and the selected queries it lacks."""
    from rubric.data.trec import read_qrels

    found = read_qrels(path)
    absent = chosen.check_present(found, str(path))
    return {(q, d): r for q, docs in chosen.restrict(found).items() for d, r in docs.items()}, absent


def stored_judgments(source: GradedFile | LoadedGraded) -> dict[Cell, int]:
    """The human judgments stored in a graded file."""
    human: dict[Cell, int] = {}
    for q in source.queries():
        for p in q.passages:
            if (j := p.judgment(q.query_id)) is not None:
                human[(q.query_id, p.paragraph_id)] = j
    return human


def qrels_side(name: str, labels: dict[Cell, int], human: dict[Cell, int], mapping: GradeMap | None) -> Side:
    """Imported labels against the judgments, on the passages both have."""
    counts: Counter[tuple[int, int]] = Counter(
        (mapping(lab) if mapping else lab, human[key]) for key, lab in labels.items() if key in human
    )
    return name, counts


def graded_sides(
    source: GradedFile | LoadedGraded,
    prompt_classes: Sequence[str | None],
    llm: str | None,
    *,
    prompt_type: str | None,
    rule: LabelRule,
    mapping: GradeMap | None,
    human: dict[Cell, int] | None,
) -> list[Side]:
    """Per prompt class, the (label, judgment) counts of the graded file, read once, query by query.

    Judgments are those of ``human`` (a qrels file) or else of the passages the first prompt
    class grades.
    """
    kinds = [
        resolve_kind(source.survey.kinds, GradeFilter(pc, llm, prompt_type), source.source)
        for pc in prompt_classes
    ]
    counts: list[Counter[tuple[int, int]]] = [Counter() for _ in kinds]
    for q in source.queries():
        judged = human
        for kind, found in zip(kinds, counts, strict=True):
            row, _ = query_grades(q, kind, None)
            if judged is None:
                judged = query_judgments(row) if row is not None else {}
            if row is None:
                continue
            for key, lab in query_labels(row, direct=kind.prompt_type == "direct", rule=rule):
                if key in judged:
                    found[(mapping(lab) if mapping else lab, judged[key])] += 1
    return [(kind.prompt_class, found) for kind, found in zip(kinds, counts, strict=True)]


def agreement_sides(
    graded: Path | None,
    labels: Path | None,
    judgments: Path | None,
    *,
    chosen: QuerySelection,
    prompt_classes: Sequence[str],
    llm: str | None,
    prompt_type: str | None,
    rule: LabelRule,
    mapping: GradeMap | None,
) -> list[Side]:
    """The sides `rubric verify agreement` compares, from the files it was given: imported LLM
    qrels (``labels``) or the grades of ``graded`` against ``judgments`` (a human qrels file) or
    the judgments stored in ``graded``. Selected queries an input lacks are noted."""
    from rubric.data.graded import graded_input
    from rubric.data.query_selection import absent_note

    def cells_of(path: Path) -> dict[Cell, int]:
        found, absent = qrels_cells(path, chosen)
        if line := absent_note(absent, str(path), "selected"):
            log.info(line)
        return found

    human = cells_of(judgments) if judgments is not None else None
    if labels is not None:
        if prompt_classes:
            raise UserError(
                "{prompt_classes}: not used with {labels} (the qrels are the labels)",
                "prompt_classes",
                "labels",
            )
        side = cells_of(labels)
        if human is None:
            if graded is None:
                raise UserError(
                    "{labels}: give GRADED (for its judgments) or {judgments} QRELS", "labels", "judgments"
                )
            with graded_input(graded, chosen) as source:
                human = stored_judgments(source)
        return [qrels_side(labels.name, side, human, mapping)]
    if graded is None:
        raise UserError(
            "GRADED: missing; give a graded passages file (or {labels} and {judgments})",
            "labels",
            "judgments",
        )
    with graded_input(graded, chosen) as source:
        if line := absent_note(source.absent(), str(graded), "selected"):
            log.info(line)
        return graded_sides(
            source,
            prompt_classes or [None],
            llm,
            prompt_type=prompt_type,
            rule=rule,
            mapping=mapping,
            human=human,
        )
