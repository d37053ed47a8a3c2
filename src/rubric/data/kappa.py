"""Cohen's kappa from a table of counts: shared by grade/judgment agreement (verify) and
assignment agreement (evaluate), so it lives on the lower layer."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping
from typing import TypeVar

Label = TypeVar("Label", bound=Hashable)


def kappa_from_counts(counts: Mapping[tuple[Label, Label], int]) -> float:
    """Cohen's kappa of a (rater A, rater B) -> count table; NaN when chance agreement is total.
    The labels are any values compared for equality (grades, booleans, assignment labels)."""
    n = sum(counts.values())
    if n == 0:
        return math.nan
    rows: Counter[Label] = Counter()
    cols: Counter[Label] = Counter()
    agree = 0
    for (a, b), c in counts.items():
        rows[a] += c
        cols[b] += c
        if a == b:
            agree += c
    p_o = agree / n
    p_e = sum(rows[k] * cols[k] for k in rows) / (n * n)
    if p_e == 1.0:
        return math.nan
    return (p_o - p_e) / (1.0 - p_e)
