"""The protocol every LLM backend implements, and the record of one answer.

Backends are small: ``generate(prompts) -> answers`` for free text, and optionally
``rate(prompts, choices) -> Rating`` for prompts whose valid answers are a few short strings
(0-5 self-ratings, yes/no), where a model can read the answer off one decoding step. The
grading and bank code never knows which backend it talks to; the cache (:mod:`rubric.llm.cache`)
wraps any of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Rating:
    """The answer of a rating prompt: the greedy answer text and, where known, choice probabilities.

    ``answer`` equals what greedy generation would have produced (fast paths fall back to
    generation where they cannot guarantee that), so parse rules apply to it unchanged.
    """

    answer: str
    probabilities: dict[str, float] | None = None

    def expected(self, values: dict[str, float]) -> float | None:
        """Probability-weighted value of the choices (e.g. an expected 0-5 grade)."""
        if not self.probabilities:
            return None
        total = sum(self.probabilities.get(c, 0.0) for c in values)
        if total <= 0:
            return None
        return sum(values[c] * self.probabilities.get(c, 0.0) for c in values) / total


@dataclass
class BackendStats:
    """Counters a run reports at the end: what was asked, answered from cache, retried, failed."""

    prompts: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    fallbacks: int = 0
    errors: list[str] = field(default_factory=list)


@runtime_checkable
class Backend(Protocol):
    """What grading and bank creation need from an LLM."""

    name: str  # backend name, e.g. "hf-seq2seq", "openai"
    model: str  # model name as recorded in ``llm`` fields

    def options(self) -> dict[str, Any]:
        """Decoding options that change answers (recorded as ``llm_options``; part of cache keys)."""
        ...

    def generate(self, prompts: Sequence[str]) -> list[str]:
        """Greedy (or configured) answers, one per prompt, in order."""
        ...


@runtime_checkable
class RatingBackend(Backend, Protocol):
    """A backend that can answer rating prompts from the answer-token distribution."""

    def rate(self, prompts: Sequence[str], choices: Sequence[str]) -> list[Rating]:
        """One :class:`Rating` per prompt; ``choices`` are the valid answers (e.g. "0".."5")."""
        ...


@runtime_checkable
class PairGrader(Protocol):
    """A grader that needs no prompt: it scores (item text, passage text) pairs directly.

    The embedding-similarity baseline is one. The grading engine passes the test item's text
    (or the query, for direct grading) and the passage text instead of a rendered prompt; each
    :class:`Rating` answer is the grade as a digit string ("0".."5"), so the self-rating parse
    rule and every downstream phase apply unchanged.
    """

    name: str
    model: str

    def options(self) -> dict[str, Any]: ...

    def grade_pairs(self, pairs: Sequence[tuple[str, str]]) -> list[Rating]: ...
