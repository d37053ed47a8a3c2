"""`rubric verify agreement` as one call: which comparison the options ask for, and its tables.

The command compares labels with human judgments (:mod:`rubric.verify.sides` gives the sides,
:class:`~rubric.verify.agreement.Agreement` the tables of each) or, with ``reviews``, the LLM's
item grades with the reviewers' (:mod:`rubric.verify.reviewers`). The options arrive unparsed so
the checks run in the command's order, before any file is read: the output format and the plot
file, the combinations ``--reviews`` refuses, then ``--label`` and ``--map``, and only then the
query selection (which reads ``--queries``). ``--reviews`` ignores ``--label`` and ``--map``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.grade_filter import GradeFilter
from rubric.data.labels import GradeMap, LabelRule
from rubric.data.query_selection import QuerySelection
from rubric.data.table import Table, check_format
from rubric.errors import UserError
from rubric.plots import check_plot
from rubric.verify.agreement import Agreement

FORMATS = ("tsv", "md", "latex")

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AgreementRequest:
    """The options of `rubric verify agreement`, as given on the command line."""

    graded: Path | None
    labels: Path | None = None
    judgments: Path | None = None
    prompt_classes: Sequence[str] = ()
    llm: str | None = None
    prompt_type: str | None = None
    label: str = "max"
    min_grade: int = 1
    grade_map: str | None = None
    min_relevant: int = 1
    one_vs_rest: bool = False
    reviews: bool = False
    fmt: str = "tsv"
    plot: Path | None = None
    query: Sequence[str] | None = None
    queries: Path | None = None

    def check(self) -> None:
        """The checks that need no file: format, plot file and matplotlib, ``--reviews`` combinations."""
        check_format(self.fmt, FORMATS)
        check_plot(self.plot)
        if self.reviews:
            if self.plot is not None or self.one_vs_rest:
                raise UserError(
                    "{reviews}: not used with {plot} or {one_vs_rest}", "reviews", "plot", "one_vs_rest"
                )
            if self.graded is None or self.labels is not None or self.judgments is not None:
                raise UserError(
                    "{reviews}: give GRADED (with HumanReview grades), not {labels} or {judgments}",
                    "reviews",
                    "labels",
                    "judgments",
                )
            if len(self.prompt_classes) > 1:
                raise UserError(
                    "{reviews}: give at most one {prompt_classes} (the LLM grades to compare)",
                    "reviews",
                    "prompt_classes",
                )

    def selection(self) -> QuerySelection:
        """The queries of ``--query`` and ``--queries`` (this reads the ``--queries`` file)."""
        return QuerySelection.from_options(self.query, self.queries)


@dataclass
class AgreementReport:
    """The tables to write and, per compared side, its :class:`Agreement` (for the heatmap)."""

    tables: list[Table] = field(default_factory=list)
    agreements: list[Agreement] = field(default_factory=list)

    def draw(self, path: Path, *, by_row: bool = False, dpi: int | None = None) -> None:
        """The grade x judgment counts as a heatmap, one panel per side, all on the same grades
        and judgment levels; ``by_row`` colours each cell by its share of the grade's passages
        (needs matplotlib)."""
        from rubric.plots import DPI
        from rubric.plots.heatmap import count_heatmaps

        top_grade = max(g for ag in self.agreements for g in [0, *ag.grades()])
        top_level = max(j for ag in self.agreements for j in [0, *ag.judgment_levels()])
        panels = [ag.count_matrix(top_grade, top_level) for ag in self.agreements]
        count_heatmaps(panels, path, by_row=by_row, dpi=dpi or DPI)


def agreement_report(request: AgreementRequest) -> AgreementReport:
    """Check the request, then compare: per side its tables (and the one-vs-rest tables), its
    summary line noted as soon as the side is done; with ``reviews`` the rater tables, a line per
    pair of raters noted. A side without a passage that has both a label and a judgment is an error."""
    request.check()
    if request.reviews:
        from rubric.verify.reviewers import reviewer_agreement

        grades = GradeFilter(next(iter(request.prompt_classes), None), request.llm, request.prompt_type)
        assert request.graded is not None  # checked
        found = reviewer_agreement(request.graded, grades, request.selection())
        for line in found.lines():
            log.info(line)
        return AgreementReport(found.tables)
    from rubric.verify.sides import agreement_sides

    rule = LabelRule.parse(request.label, request.min_grade)
    mapping = GradeMap.parse(request.grade_map) if request.grade_map is not None else None
    chosen = request.selection()
    sides = agreement_sides(
        request.graded,
        request.labels,
        request.judgments,
        chosen=chosen,
        prompt_classes=request.prompt_classes,
        llm=request.llm,
        prompt_type=request.prompt_type,
        rule=rule,
        mapping=mapping,
    )
    report = AgreementReport()
    source = request.judgments or request.graded
    reference = f"judgments of {source.name}" if source is not None else "human judgments"
    for name, counts in sides:
        if not counts:
            raise UserError(f"{name}: no passage has both a label and a judgment")
        ag = Agreement(counts, request.min_relevant, name, reference)
        report.agreements.append(ag)
        report.tables.extend(ag.tables())
        if request.one_vs_rest:
            from rubric.verify.one_vs_rest import original_tables

            report.tables.extend(original_tables(ag))
        log.info(ag.summary())
    return report
