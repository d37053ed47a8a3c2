"""Test tiers without hand-kept markers: a test whose measured time is at least
:data:`SLOW_SECONDS` is marked ``slow`` at collection, so ``make test-fast`` (``-m "not slow"``)
leaves it out. The times are ``tests/durations.tsv`` (``seconds<TAB>node id``: the call phase of
each test of a whole-suite run, one worker), written by ``make durations`` through
``.ci/durations.py``; a test that is not listed (new, or faster than the file's floor) stays in
the quick tier until the file is written again.

Only the call phase counts: a session fixture's set-up (the tiny models) falls on whichever test
asks first, which differs between runs and between the two tiers.
"""

from __future__ import annotations

from pathlib import Path

#: A test this slow or slower is in the slow tier.
SLOW_SECONDS = 5.0
DURATIONS = Path(__file__).resolve().parents[1] / "durations.tsv"


def read_durations(path: Path = DURATIONS) -> dict[str, float]:
    """node id -> seconds, from ``path`` (empty when it is absent); ``#`` lines are comments."""
    if not path.exists():
        return {}
    times: dict[str, float] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            seconds, _, node = line.partition("\t")
            times[node] = float(seconds)
    return times


def slow_ids(times: dict[str, float], threshold: float = SLOW_SECONDS) -> set[str]:
    """The node ids at or over ``threshold`` seconds."""
    return {node for node, seconds in times.items() if seconds >= threshold}
