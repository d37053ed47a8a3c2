"""Agreement of grades with human judgments: confusion tables, binarised tables, Cohen's kappa.

RUBRIC (ICTIR'24, Tables 5-6) tallies every grade against every judgment level, then collapses
both to relevant / not relevant (grade >= T vs judgment >= J) and reports Cohen's kappa. We do
that for every threshold T at once, so the human sees where the grader's scale best matches the
judges', and add accuracy, precision and recall of "grade >= T" as a relevance classifier.
Kappa is computed from the counts (observed vs chance agreement), exactly as scikit-learn's
``cohen_kappa_score`` does on the label lists.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from rubric.data.kappa import kappa_from_counts, krippendorff_alpha_from_counts, weighted_kappa_from_counts
from rubric.data.table import Table

ALPHA_ORDINAL = "Krippendorff's alpha (ordinal)"
ALPHA_INTERVAL = "Krippendorff's alpha (interval)"


@dataclass(frozen=True)
class Binary:
    """The 2x2 table of "grade >= threshold" against "judgment >= min_relevant"."""

    threshold: int
    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def n(self) -> int:
        return self.tp + self.fp + self.fn + self.tn

    @property
    def kappa(self) -> float:
        return kappa_from_counts({(1, 1): self.tp, (1, 0): self.fp, (0, 1): self.fn, (0, 0): self.tn})

    @property
    def accuracy(self) -> float:
        return (self.tp + self.tn) / self.n if self.n else math.nan

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else math.nan

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else math.nan

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r > 0 else math.nan


@dataclass
class Agreement:
    """Grade x judgment counts of a set of (label, judgment) pairs and everything derived."""

    counts: Counter[tuple[int, int]]
    min_relevant: int
    name: str = ""
    reference: str = "human judgments"

    @classmethod
    def from_pairs(cls, pairs: Iterable[tuple[int, int]], min_relevant: int, name: str = "") -> Agreement:
        return cls(Counter(pairs), min_relevant, name)

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def grades(self) -> list[int]:
        return sorted({g for g, _ in self.counts}, reverse=True)

    def judgment_levels(self) -> list[int]:
        return sorted({j for _, j in self.counts}, reverse=True)

    def thresholds(self) -> list[int]:
        """Every threshold that splits the grades seen: 1 .. highest grade (at least 1)."""
        top = max((g for g, _ in self.counts), default=1)
        return list(range(1, max(top, 1) + 1))

    def binary(self, threshold: int) -> Binary:
        tp = fp = fn = tn = 0
        for (g, j), c in self.counts.items():
            rel = j >= self.min_relevant
            if g >= threshold:
                tp, fp = (tp + c, fp) if rel else (tp, fp + c)
            else:
                fn, tn = (fn + c, tn) if rel else (fn, tn + c)
        return Binary(threshold, tp, fp, fn, tn)

    def multiclass_kappa(self) -> float:
        """Kappa with grades and judgments as the same categories (meaningful on one scale)."""
        return kappa_from_counts(self.counts)

    def scale_measures(self) -> dict[str, float]:
        """Agreement of labels and judgments as grades on one ordered scale: exact agreement,
        Cohen's kappa, linearly and quadratically weighted kappa (a miss by one level costs less
        than a miss by three) and Krippendorff's alpha, ordinal and interval (the LLMJudge
        challenge reported alpha). Meaningful only when :meth:`same_scale`."""
        exact = sum(c for (g, j), c in self.counts.items() if g == j)
        return {
            "exact agreement": exact / self.n if self.n else math.nan,
            "Cohen's kappa": self.multiclass_kappa(),
            "linearly weighted kappa": weighted_kappa_from_counts(self.counts, 1),
            "quadratically weighted kappa": weighted_kappa_from_counts(self.counts, 2),
            ALPHA_ORDINAL: krippendorff_alpha_from_counts(self.counts, "ordinal"),
            ALPHA_INTERVAL: krippendorff_alpha_from_counts(self.counts, "interval"),
        }

    def same_scale(self) -> bool:
        """Whether grades and judgments can be the same categories: no grade above the highest
        judgment level. A 0-5 grade compared with a 0-3 judgment unmapped would count grade 5
        as disagreeing with every judgment; ``--map`` puts grades on the judgments' scale."""
        return max(self.grades(), default=0) <= max(self.judgment_levels(), default=0)

    def multiclass_note(self) -> str:
        """The multiclass kappa, or why it is left out (grades on another scale)."""
        if self.same_scale():
            m = self.scale_measures()
            return (
                f"multiclass kappa {self.multiclass_kappa():.4f} (weighted: linear "
                f"{m['linearly weighted kappa']:.4f}, quadratic {m['quadratically weighted kappa']:.4f}; "
                f"Krippendorff's alpha: ordinal {m[ALPHA_ORDINAL]:.4f}, interval {m[ALPHA_INTERVAL]:.4f})"
            )
        return (
            f"multiclass kappa left out: grades reach {max(self.grades())}, judgments "
            f"{max(self.judgment_levels(), default=0)} (map grades onto judgment levels with --map, "
            "e.g. 5=3,4=1)"
        )

    # --- tables -----------------------------------------------------------------------------

    def confusion_table(self) -> Table:
        levels = self.judgment_levels()
        rows: list[list[int | str | float | None]] = []
        for g in self.grades():
            row = [self.counts.get((g, j), 0) for j in levels]
            rows.append([g, *row, sum(row)])
        totals = [sum(self.counts.get((g, j), 0) for g in self.grades()) for j in levels]
        rows.append(["total", *totals, self.n])
        return Table(
            ["grade", *[f"judgment={j}" for j in levels], "total"],
            rows,
            title=f"{self.name}: grade x judgment counts".strip(": "),
            notes=[self.multiclass_note()],
        )

    def scale_table(self) -> Table:
        """The one-scale measures of :meth:`scale_measures`; no rows (and the reason in a note)
        when the labels are on another scale than the judgments."""
        title = f"{self.name}: labels and judgments as one scale".strip(": ")
        if not self.same_scale():
            return Table(["measure", "value"], [], title=title, notes=[self.multiclass_note()])
        rows: list[list[int | str | float | None]] = [["n", self.n]]
        rows += [[name, value] for name, value in self.scale_measures().items()]
        return Table(["measure", "value"], rows, title=title)

    def binarised_table(self) -> Table:
        j = self.min_relevant
        rows: list[list[int | str | float | None]] = []
        for t in self.thresholds():
            b = self.binary(t)
            rows.append([f">={t}", b.tp, b.fp, b.tp + b.fp, b.kappa])
            rows.append([f"<{t}", b.fn, b.tn, b.fn + b.tn, b.kappa])
        return Table(
            ["grade", f"judgment>={j}", f"judgment<{j}", "total", "kappa"],
            rows,
            title=f"{self.name}: binarised, grade >= T vs judgment >= {j}".strip(": "),
        )

    def metrics_table(self) -> Table:
        rows: list[list[int | str | float | None]] = []
        for t in self.thresholds():
            b = self.binary(t)
            rows.append([t, b.tp, b.fp, b.fn, b.tn, b.kappa, b.accuracy, b.precision, b.recall, b.f1])
        return Table(
            ["min_grade", "tp", "fp", "fn", "tn", "kappa", "accuracy", "precision", "recall", "f1"],
            rows,
            title=f"{self.name}: relevant = grade >= min_grade, judged relevant = judgment >= "
            f"{self.min_relevant}".strip(": "),
        )

    def summary(self) -> str:
        """One line: the passages compared, the best binarised kappa and the multiclass kappa."""
        best = self.best_threshold()
        return (
            f"{self.name}: {self.n} passages; best binarised kappa {self.binary(best).kappa:.4f} at grade >= "
            f"{best} vs judgment >= {self.min_relevant}; {self.multiclass_note()}"
        )

    def tables(self) -> list[Table]:
        """The confusion table, the one-scale measures (when labels and judgments share a scale:
        otherwise the confusion table's note says why not), the binarised and metrics tables."""
        scale = [self.scale_table()] if self.same_scale() else []
        return [self.confusion_table(), *scale, self.binarised_table(), self.metrics_table()]

    def best_threshold(self) -> int:
        """The grade threshold with the highest binarised kappa (the lowest on a tie)."""
        return max(self.thresholds(), key=lambda t: (self.binary(t).kappa, -t))

    def count_matrix(self, top_grade: int | None = None, top_level: int | None = None):
        """The grade x judgment counts as a heatmap panel (:mod:`rubric.plots.heatmap`): every
        grade 0..``top_grade`` (highest on top) and judgment 0..``top_level`` (left to right),
        seen or not, so that panels side by side line up; the title names both sides and the
        kappa of the labels shown (grades and judgments as one scale), or, when the grades are on
        another scale than the judgments, the best binarised kappa (and says so)."""
        from rubric.plots.heatmap import CountMatrix

        grades = list(range(max(top_grade or 0, *self.grades(), 0), -1, -1))
        levels = list(range(0, max(top_level or 0, *self.judgment_levels(), 0) + 1))
        if self.same_scale():
            m = self.scale_measures()
            measures = (
                f"κ = {self.multiclass_kappa():.3f}, quadratic-weighted κ = "
                f"{m['quadratically weighted kappa']:.3f}\nordinal α = {m[ALPHA_ORDINAL]:.3f}, n = {self.n}"
            )
        else:
            best = self.best_threshold()
            kappa = self.binary(best).kappa
            measures = f"κ = {kappa:.3f} (grade ≥ {best} vs judgment ≥ {self.min_relevant}), n = {self.n}"
        return CountMatrix(
            title=f"{self.name or 'grades'} vs {self.reference}\n{measures}",
            row_labels=[str(g) for g in grades],
            col_labels=[str(j) for j in levels],
            counts=[[self.counts.get((g, j), 0) for j in levels] for g in grades],
            row_title="grade",
            col_title=f"judgment ({self.reference})",
        )
