"""Ask an LLM for structured answers with bounded re-asks, and keep score of what failed.

Shared by bank generation, AutoNuggetizer and nugget assignment (which live in different
phases, so this sits with the backends, not in either phase). Why re-asking changes the prompt:
answers are cached and decoding is greedy, so asking the same prompt again would return the same
unreadable answer; each re-ask appends :data:`~rubric.llm.lists.RETRY_NUDGE` (and the attempt
number), which is a new prompt and therefore a new cache entry. Transport failures (429/5xx,
timeouts, unreadable replies) are retried inside the backend; a prompt that is still
unanswered, or whose answer is unreadable after all re-asks, comes back with ``error`` set,
never as an empty result.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rubric.llm.base import Backend, Failure, Request
from rubric.llm.cache import CachedBackend
from rubric.llm.lists import RETRY_NUDGE, ParseError

T = TypeVar("T")


@dataclass
class Asked(Generic[T]):
    """The parsed answer of one prompt, or why there is none."""

    value: T | None = None
    error: str | None = None
    attempts: int = 0
    answer: str | None = None


def nudged(request: Request, attempt: int) -> Request:
    """The request of re-ask number ``attempt`` (1, 2, ...)."""
    suffix = RETRY_NUDGE if attempt == 1 else f"{RETRY_NUDGE} (attempt {attempt + 1})"
    return dataclasses.replace(request, user=f"{request.user}\n\n{suffix}")


def ask_parsed(
    llm: CachedBackend,
    requests: Sequence[Request],
    parse: Callable[[int, str], T],
    retries: int = 2,
    desc: str = "LLM",
) -> list[Asked[T]]:
    """Ask every request; re-ask those whose answer ``parse(i, answer)`` rejects, ``retries`` times.

    ``llm`` is the backend behind its cache (every answer is kept as it arrives). A request the
    backend could not answer is not re-asked here: the backend already retried it. Progress in
    prompts goes to stderr under ``desc`` (:func:`rubric.llm.progress.progress`).
    """
    from rubric.llm.progress import progress

    results: list[Asked[T]] = [Asked() for _ in requests]
    pending = list(range(len(requests)))
    bar = progress(len(requests), desc, "prompt")
    try:
        for attempt in range(retries + 1):
            if not pending:
                break
            if attempt:
                bar.total = (bar.total or 0) + len(pending)  # the re-asks are more prompts
            pending = _ask_round(llm, requests, parse, pending, attempt=attempt, results=results, bar=bar)
    finally:
        bar.close()
    return results


def _ask_round(
    llm: CachedBackend,
    requests: Sequence[Request],
    parse: Callable[[int, str], T],
    pending: list[int],
    *,
    attempt: int,
    results: list[Asked[T]],
    bar: Any,
) -> list[int]:
    """One round of asking: the prompts still pending (re-asks nudged); those still unreadable."""
    asked = [requests[i] if attempt == 0 else nudged(requests[i], attempt) for i in pending]
    answers = llm.generate(asked, on_results=lambda done: bar.update(len(done)))
    still: list[int] = []
    for i, answer in zip(pending, answers, strict=True):
        res = results[i]
        res.attempts = attempt + 1
        if isinstance(answer, Failure):
            res.error = f"no answer from the LLM ({answer.cause})"
            continue
        res.answer = answer.text
        try:
            res.value, res.error = parse(i, answer.text), None
        except ParseError as e:
            res.error = f"unreadable answer after {attempt + 1} attempt(s): {e}"
            still.append(i)
    return still


def backend_info(backend: Backend) -> dict[str, Any]:
    """What to record about the LLM in output files."""
    return {"llm": backend.model, "llm_options": dict(backend.options())}
