"""What a run that asked a model reports at its end: summary lines, and what failed.

A prompt that still fails after every retry is recorded and counted, never silently dropped:
the output holds everything else, the failures are listed (the first :data:`SHOWN`) with a line
that says how to retry them, and the command exits with 1. Re-running the same command asks
only what failed, since every answered prompt comes from the response cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rubric.data.table import counted

#: Failures listed one per line; the rest are counted (a run can fail thousands of prompts).
SHOWN = 20


def failure_lines(failures: Sequence[str], what: str) -> list[str]:
    """The listing of ``failures`` (``what`` names one of them, singular: query, LLM call,
    pair, ...; counted in the right number) and how to retry them; no lines when nothing failed."""
    if not failures:
        return []
    lines = [f"  failed: {line}" for line in failures[:SHOWN]]
    if len(failures) > SHOWN:
        lines.append(f"  ... and {len(failures) - SHOWN} more")
    one = len(failures) == 1
    lines.append(
        f"rubric: {counted(len(failures), what)} failed and {'is' if one else 'are'} missing or unlabelled"
        f" in the output; re-run the same command to retry {'it' if one else 'them'}"
        " (answered prompts come from the cache)"
    )
    return lines


@dataclass(frozen=True)
class Outcome:
    """The end of a run that asked a model: what it wrote and counted (``summary``), and what
    failed after every retry (``failures``, one message each; ``what`` names one, singular)."""

    summary: list[str]
    failures: list[str] = field(default_factory=list)
    what: str = "prompt"

    def lines(self) -> list[str]:
        """Every line for the user (stderr): the summary, then the failures and how to retry."""
        return [*self.summary, *failure_lines(self.failures, self.what)]
