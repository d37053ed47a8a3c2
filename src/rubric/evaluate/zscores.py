"""trec_eval's ``-Z``: per-query values as z-scores against a reference set of runs.

A z-score file (trec_eval's ``Zmean_file``) holds lines ``qid measure_name mean std_dev``
(whitespace-separated; the means and deviations of each measure per query over reference runs).
With it every per-query value becomes ``(value - mean) / std_dev`` before queries are combined,
as trec_eval 9.0.8 does it (``convert_zscores.c``): a (query, measure) the file lacks gives
:data:`MISSING` (-1000000), a deviation of 0 gives 0 where the value equals the mean and
:data:`MISSING` otherwise, and a ``nan`` in the file gives ``nan``.
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

from rubric.data.files import read_text, text_lines
from rubric.errors import UserError

log = logging.getLogger(__name__)

MISSING = -1000000.0
"""trec_eval's MISSING_ZSCORE_VALUE."""

ZScores = dict[tuple[str, str], tuple[float, float]]
"""(query id, measure name as trec_eval prints it) -> (mean, standard deviation)."""


def read_zscores(path: str | Path) -> ZScores:
    """The z-score file at ``path``; a line that is not four fields, a mean or deviation that is
    not a number, or a (query, measure) given twice with other numbers names the file and line.

    ``nan`` and ``inf`` are read as trec_eval reads them (its own test file, ``zscores_file``,
    has ``nan nan`` for ``set_F``): the z-scores of that query and measure are not numbers, printed
    ``nan`` by ``-f trec_eval`` and as empty cells in a table. One warning names the first such
    line and how many there are, so that a table's empty cells are never a silent result."""
    out: ZScores = {}
    where: dict[tuple[str, str], int] = {}
    not_finite: list[int] = []
    for line_no, line in text_lines(read_text(path)):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise UserError(
                f"{path}:{line_no}: a z-score line is 'qid measure mean std_dev', found {len(fields)} fields"
            )
        qid, measure, *numbers = fields
        try:
            mean, std = (float(x) for x in numbers)
        except ValueError:
            found = " ".join(numbers)
            raise UserError(f"{path}:{line_no}: mean and std_dev must be numbers, found {found}") from None
        if not (math.isfinite(mean) and math.isfinite(std)):
            not_finite.append(line_no)
        key = (qid, measure)
        if key in out and not _same(out[key], (mean, std)):
            raise UserError(
                f"{path}:{line_no}: query {qid} measure {measure} again, with other numbers"
                f" (first on line {where[key]})"
            )
        out[key] = (mean, std)
        where.setdefault(key, line_no)
    if not out:
        raise UserError(f"{path}: holds no z-score lines (qid measure mean std_dev)")
    if not_finite:
        lines = f"{len(not_finite)} lines" if len(not_finite) > 1 else "1 line"
        log.warning(
            "%s:%d: a mean or std_dev that is not a finite number (%s); the z-scores of those queries "
            "and measures are not numbers (nan), as in trec_eval",
            path,
            not_finite[0],
            lines,
        )
    return out


def _same(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return all(x == y or (math.isnan(x) and math.isnan(y)) for x, y in zip(a, b, strict=True))


def zscore(value: float, reference: tuple[float, float] | None) -> float:
    """``value`` as trec_eval converts it with ``reference`` (mean, deviation), None if absent."""
    if reference is None:
        return MISSING
    mean, std = reference
    if std != 0:  # C's truth: a nan deviation divides too
        return (value - mean) / std
    return 0.0 if value == mean else MISSING
