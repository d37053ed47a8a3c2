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
#: A test file this slow or slower starts at the front of a worker's share (:func:`balanced_order`).
HEAVY_FILE_SECONDS = 20.0
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


def balanced_order(node_ids: list[str], times: dict[str, float], workers: int) -> list[int]:
    """The positions of ``node_ids`` in running order for ``workers`` pytest-xdist workers.

    xdist's ``worksteal`` gives each worker a contiguous share of the tests by count (the first
    ``n // workers``, then the next share of what is left) and lets an idle worker take the back
    half of another's queue. A long test queued behind others ends the run alone (the suite
    once waited 80 s on one worker for the DL19 API tour). So the test files of 20 s or more
    (by ``times``) are dealt to the shares longest first, each to the share with the least time
    so far, and put at the front of their share; the other tests fill the shares in their own
    order. Files stay whole where they fit, so a module fixture is made once per worker."""
    modules: dict[str, list[int]] = {}
    for i, node in enumerate(node_ids):
        modules.setdefault(node.partition("::")[0], []).append(i)
    weight = {m: sum(times.get(node_ids[i], 0.0) for i in tests) for m, tests in modules.items()}
    heavy = sorted((m for m in modules if weight[m] >= HEAVY_FILE_SECONDS), key=lambda m: -weight[m])
    if workers < 2 or not heavy:
        return list(range(len(node_ids)))
    shares: list[list[int]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for m in heavy:
        k = load.index(min(load))
        shares[k].extend(modules[m])
        load[k] += weight[m]
    light = [i for m, tests in modules.items() if m not in heavy for i in tests]
    remaining, at = len(node_ids), 0
    for k in range(workers):  # xdist's shares: the first n // workers, then of what is left
        size = remaining // (workers - k)
        remaining -= size
        room = max(size - len(shares[k]), 0)
        shares[k].extend(light[at : at + room])
        at += room
    shares[-1].extend(light[at:])
    return [i for share in shares for i in share]
