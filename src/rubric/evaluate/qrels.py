"""Rubric-Qrels / EXAM-Qrels: one relevance label per graded passage (RUBRIC eq. 1, EXAM++ eq. 2).

The grades of one (prompt class, LLM) are chosen with a :class:`~rubric.data.grade_filter.GradeFilter`
(an empty or ambiguous choice is an error listing what the file holds) and turned into labels by
a :class:`~rubric.data.labels.LabelRule`. The qrels feed trec_eval measures, with ``-l`` as
the grade threshold. ``per_item`` writes one line per (passage, item) instead, the item id in
column 2, for intent-aware measures. ``prefer`` names a prompt class (``HumanReview``: the grades
of `rubric verify apply`) whose item grades replace the selected grades wherever they exist.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.files import Labelled, check_output, guarded_outputs
from rubric.data.grade_filter import DIRECT, GradeFilter, GradeKind, resolve_kind
from rubric.data.grade_table import GradedLike, as_graded, open_graded
from rubric.data.graded import GradedInput
from rubric.data.labels import GradeMap, LabelRule, direct_label, merge_preferred
from rubric.data.query_selection import Queries, QuerySelection, absent_note
from rubric.errors import UserError
from rubric.evaluate.facets import FacetMap, bank_facets, direct_facet_labels, item_facet_labels

QrelsRow = tuple[str, str, str, int]


@dataclass
class QrelsResult:
    rows: list[QrelsRow] | Iterator[QrelsRow] = field(default_factory=list)
    kind: GradeKind | None = None
    ungraded: int = 0  # passages without a grade of the selected kind (no line written)
    passages: int = 0
    absent: list[str] = field(default_factory=list)  # selected queries the file lacks
    preferred: int = 0  # passages whose label uses a grade of the preferred prompt class
    inputs: list[Labelled] = field(default_factory=list)  # the files read: never overwritten by write()

    def to_dict(self) -> dict[str, dict[str, int]]:
        """``{query: {docid: label}}``, as trec_eval and :func:`~rubric.evaluate.leaderboard` take
        qrels (not for per-item qrels, whose second column names the item)."""
        out: dict[str, dict[str, int]] = {}
        for query, _, doc, label in self.rows:
            out.setdefault(query, {})[doc] = label
        return out

    def summary(self, path: str | Path, lines: int, prefer: str | None = None) -> list[str]:
        """What was written to ``path`` (``lines`` lines), what the preferred grades replaced and
        which passages got no line."""
        graded = self.passages - self.ungraded
        out = [f"wrote {path}: {lines} lines from {graded} graded passages ({self.kind})"]
        if prefer is not None:
            out.append(
                f"{self.preferred} passages have {prefer} grades, which replace the others' on their items"
            )
        if self.ungraded:
            out.append(f"{self.ungraded} of {self.passages} passages have no such grade and got no line")
        return out

    def write(self, path: str | Path) -> int:
        """Write TREC qrels (atomically: all or nothing); returns the number of lines. ``path``
        may not be the graded file the labels come from (:func:`~rubric.data.files.guarded_outputs`)."""
        from rubric.data.trec import write_qrels

        with guarded_outputs([("path", path)], self.inputs):
            return write_qrels(path, self.rows)


def build_qrels(
    passages: GradedLike,
    *,
    selection: GradeFilter = GradeFilter(),
    rule: LabelRule = LabelRule(),
    per_item: bool = False,
    source: str | None = None,
    queries: QuerySelection | Iterable[str] | None = None,
    prefer: str | None = None,
    facets: FacetMap | None = None,
    stream: bool = False,
) -> QrelsResult:
    """Labels for every passage graded by the one kind of grades ``selection`` picks.

    ``passages`` is a graded passages file or its loaded queries; the defaults are the CLI's
    (``--label max``: the best item grade). ``queries`` keeps only these query ids
    (``absent`` lists the selected ids the file lacks). ``prefer``: item grades of this prompt
    class (of the same prompt type) win over the selected ones where they exist (several such
    records: their lower median, see :func:`~rubric.data.labels.merge_preferred`); a
    passage graded only by them is labelled from them alone. ``facets`` (``{}`` or the bank's,
    see :mod:`rubric.evaluate.facets`) writes one line per (query facet, passage) instead.

    ``stream``: ``rows`` is an iterator that reads the file one query at a time (memory bounded by
    the largest query, for writing huge qrels); the counts are complete once it is exhausted.
    """
    result = QrelsResult()
    if isinstance(checked := as_graded(passages, "passages"), str | Path):
        result.inputs.append(("graded", checked))
    rows = _rows(
        open_graded(passages, queries, source, parameter="passages"),
        selection,
        rule,
        per_item=per_item,
        prefer=prefer,
        facets=facets,
        result=result,
    )
    result.rows = rows if stream else list(rows)
    return result


def write_qrels_file(
    graded: str | Path,
    output: str | Path,
    *,
    selection: GradeFilter = GradeFilter(),
    label: str = "max",
    min_grade: int = 1,
    per_item: bool = False,
    facets: bool = False,
    facet_bank: str | Path | None = None,
    prefer: str | None = None,
    queries: Queries = None,
    grade_map: str | None = None,
) -> list[str]:
    """``rubric evaluate qrels``: the qrels of a graded passages file written to ``output`` (TREC
    format, atomically, read and written one query at a time); returns the lines for stderr
    (selected queries the file lacks, what was written, which passages got no line).

    ``label``/``min_grade`` are a :class:`~rubric.data.labels.LabelRule`; ``facets`` writes
    CAR-style facet qrels, ``facet_bank`` names the bank whose facets direct grades count for.
    ``grade_map`` (``--map``, e.g. ``2=1,4=2,5=3``: :class:`~rubric.data.labels.GradeMap`) puts
    every label on another scale as it is written, e.g. 0-5 labels on a 0-3 submission's scale.
    Every option is checked before any file is read (``queries`` may be a function that reads
    them, called after the checks).
    """
    selection.check()
    rule = LabelRule.parse(label, min_grade)
    mapping = GradeMap.parse(grade_map) if grade_map is not None else None
    if facet_bank is not None and not facets:
        raise UserError("{facet_bank}: only used with {per_facet}", "facet_bank", "per_facet")
    if facets and per_item:
        raise UserError("{per_facet}: not used with {per_item}", "per_facet", "per_item")
    chosen = QuerySelection.of(queries)
    facet_map = None
    if facet_bank is not None:  # the graded file is refused by result.write
        check_output(output, [("facet_bank", facet_bank)], name="output")
    if facets:
        from rubric.data.jsonl import read_bank

        facet_map = bank_facets(read_bank(facet_bank)) if facet_bank is not None else {}
    result = build_qrels(
        graded,
        selection=selection,
        rule=rule,
        per_item=per_item,
        queries=chosen,
        prefer=prefer,
        facets=facet_map,
        stream=True,
    )
    if mapping is not None:
        result.rows = ((q, c, d, mapping(lab)) for q, c, d, lab in result.rows)
    lines = result.write(output)
    absent = absent_note(result.absent, str(graded), "selected")
    mapped = (
        [f"labels mapped by --map {grade_map} (from the threshold up: {mapping.describe()})"]
        if mapping
        else []
    )
    return [*([absent] if absent else []), *result.summary(output, lines, prefer), *mapped]


def _rows(
    graded: GradedInput,
    selection: GradeFilter,
    rule: LabelRule,
    *,
    per_item: bool,
    prefer: str | None,
    facets: FacetMap | None,
    result: QrelsResult,
) -> Iterator[QrelsRow]:
    with graded:
        source = graded.source
        result.absent = graded.absent()
        if prefer is not None and selection.prompt_class == prefer:
            raise UserError(
                f"{{prefer}} {prefer}: also selected with {{prompt_class}}; "
                "select the grades to fall back to",
                "prefer",
                "prompt_class",
            )
        kinds = graded.survey.kinds
        kind = resolve_kind(kinds, selection, source, exclude_prompt_class=prefer)
        if per_item and kind.prompt_type == DIRECT:
            raise UserError(
                f"{{per_item}}: {source} holds direct grades ({kind.prompt_class}), which grade the passage "
                "as a whole; per-item qrels need question or nugget grades",
                "per_item",
            )
        if prefer is not None:
            _check_prefer(kinds, kind, prefer, source)
        result.kind = kind
        for q in graded.queries():
            qid = q.query_id
            for p in q.passages:
                result.passages += 1
                grade = p.first(kind)
                preferred = (
                    [
                        g.grades
                        for g in p.exam_grades
                        if g.kind.prompt_class == prefer and g.kind.prompt_type == kind.prompt_type
                    ]
                    if prefer is not None
                    else []
                )
                if grade is None and not preferred:
                    result.ungraded += 1
                    continue
                if grade is not None and not grade.exam:
                    label = direct_label(grade.direct_grade, rule)
                    if facets is not None:
                        for f, lab in direct_facet_labels(qid, label, facets, source).items():
                            yield f, "0", p.paragraph_id, lab
                    else:
                        yield qid, "0", p.paragraph_id, label
                    continue
                result.preferred += bool(preferred)
                grades = merge_preferred(grade.grades if grade is not None else {}, preferred)
                if facets is not None:
                    for f, lab in item_facet_labels(qid, grades, rule, facets, source).items():
                        yield f, "0", p.paragraph_id, lab
                elif per_item:
                    for item, g in grades.items():
                        yield qid, item, p.paragraph_id, g
                else:
                    yield qid, "0", p.paragraph_id, rule.apply(list(grades.values()))


def _check_prefer(kinds: Counter[GradeKind], kind: GradeKind, prefer: str, source: str) -> None:
    """The grades ``--prefer`` names must exist, of the selected kind's items."""
    if kind.prompt_type == DIRECT:
        raise UserError(
            f"{{prefer}} {prefer}: {source} selects direct grades ({kind.prompt_class}), "
            "which grade no items",
            "prefer",
        )
    if not any(k.prompt_class == prefer and k.prompt_type == kind.prompt_type for k in kinds):
        raise UserError(
            f"{{prefer}} {prefer}: {source} holds no {kind.prompt_type} grades of prompt class {prefer} "
            "(`rubric verify apply` writes HumanReview grades)",
            "prefer",
        )
