"""Cohen's kappa from a table of counts: shared by grade/judgment agreement (verify) and
assignment agreement (evaluate), so it lives on the lower layer."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping
from typing import TypeVar

Label = TypeVar("Label", bound=Hashable)


def margins(counts: Mapping[tuple[Label, Label], int]) -> tuple[Counter[Label], Counter[Label]]:
    """The row (rater A) and column (rater B) totals of a (rater A, rater B) -> count table."""
    rows: Counter[Label] = Counter()
    cols: Counter[Label] = Counter()
    for (a, b), c in counts.items():
        rows[a] += c
        cols[b] += c
    return rows, cols


def kappa_from_counts(counts: Mapping[tuple[Label, Label], int]) -> float:
    """Cohen's kappa of a (rater A, rater B) -> count table; NaN when chance agreement is total.
    The labels are any values compared for equality (grades, booleans, assignment labels)."""
    n = sum(counts.values())
    if n == 0:
        return math.nan
    rows, cols = margins(counts)
    p_o = sum(c for (a, b), c in counts.items() if a == b) / n
    p_e = sum(rows[k] * cols[k] for k in rows) / (n * n)
    if p_e == 1.0:
        return math.nan
    return (p_o - p_e) / (1.0 - p_e)


def weighted_kappa_from_counts(counts: Mapping[tuple[int, int], int], power: int) -> float:
    """Cohen's weighted kappa of a (rater A, rater B) -> count table of integer grades.

    The disagreement weight of grades a and b is ``|a - b| ** power``: 1 for linear, 2 for
    quadratic weights. Distances are between the grades' values, not their positions among the
    grades seen, so a table without grade 2 still weighs 0 vs 3 as 3; this equals scikit-learn's
    ``cohen_kappa_score(a, b, weights=..., labels=range(lowest, highest + 1))``. NaN when the
    expected disagreement is 0 (both raters always give one and the same grade)."""
    n = sum(counts.values())
    if n == 0:
        return math.nan
    rows, cols = margins(counts)
    observed = float(sum(c * abs(a - b) ** power for (a, b), c in counts.items()))
    expected = sum(ra * cb * abs(a - b) ** power for a, ra in rows.items() for b, cb in cols.items()) / n
    if expected == 0:
        return math.nan
    return 1.0 - observed / expected


def krippendorff_alpha_from_counts(counts: Mapping[tuple[int, int], int], level: str) -> float:
    """Krippendorff's alpha of two raters who both rated every unit, from their count table.

    ``level`` is "ordinal" (the distance of two grades grows with how many ratings lie between
    them: Krippendorff 2011, section F) or "interval" (the squared difference of the grades).
    Each unit rated (a, b) adds the pairs (a, b) and (b, a) to the coincidence matrix; alpha is 1
    minus observed over expected disagreement, with the expected coincidences of the pooled
    ratings. Equals the ``krippendorff`` package's ``alpha(reliability_data=[A, B], level)``.
    NaN when every rating is the same grade (no disagreement is possible)."""
    if level not in ("ordinal", "interval"):
        raise ValueError(f"level must be 'ordinal' or 'interval', not {level!r}")
    coincidences: Counter[tuple[int, int]] = Counter()
    for (a, b), c in counts.items():
        coincidences[a, b] += c
        coincidences[b, a] += c
    pooled: Counter[int] = Counter()
    for (a, _), c in coincidences.items():
        pooled[a] += c
    total = sum(pooled.values())
    values = sorted(pooled)
    if total < 2 or len(values) < 2:
        return math.nan
    if level == "interval":

        def distance(a: int, b: int) -> float:
            return float((a - b) ** 2)

    else:
        cumulative = {}
        running = 0
        for v in values:
            cumulative[v] = running  # ratings strictly below v
            running += pooled[v]

        def distance(a: int, b: int) -> float:
            lo, hi = min(a, b), max(a, b)
            between = cumulative[hi] + pooled[hi] - cumulative[lo]  # ratings from lo to hi
            return (between - (pooled[lo] + pooled[hi]) / 2) ** 2

    observed = sum(c * distance(a, b) for (a, b), c in coincidences.items())
    pairs = ((a, b) for a in values for b in values if a != b)
    expected = sum(pooled[a] * pooled[b] * distance(a, b) for a, b in pairs) / (total - 1)
    if expected == 0:
        return math.nan
    return 1.0 - observed / expected
