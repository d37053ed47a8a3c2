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
    """The parsed answer of one prompt, or why there is none (``unanswered``: the backend gave
    no answer after its retries; else the answer stayed unreadable after the re-asks)."""

    value: T | None = None
    error: str | None = None
    attempts: int = 0
    answer: str | None = None
    unanswered: bool = False


@dataclass
class AskCounts:
    """What one run asked, added up over its calls of :func:`ask_parsed`, for its one summary
    line: every prompt that got no value is counted once, as unanswered or unreadable, so the
    line's failures are the run's listed failures."""

    prompts: int = 0
    reasks: int = 0
    unanswered: int = 0
    unreadable: int = 0

    @property
    def failed(self) -> int:
        return self.unanswered + self.unreadable

    def add(self, asked: Sequence[Asked[Any]]) -> None:
        self.prompts += len(asked)
        self.reasks += sum(max(a.attempts - 1, 0) for a in asked)
        self.unanswered += sum(1 for a in asked if a.value is None and a.unanswered)
        self.unreadable += sum(1 for a in asked if a.value is None and not a.unanswered)

    def summary(self, backend: Backend, what: str) -> str:
        """``LLM M: 12 prompts and 3 re-asks, 2 from cache, 0 retries; 1 LLM call failed (...)``:
        ``what`` names one prompt (singular), as the run's failure listing does."""
        from rubric.data.table import counted

        stats = backend.stats
        line = (
            f"LLM {backend.model}: {counted(self.prompts, 'prompt')} and {counted(self.reasks, 're-ask')}, "
            f"{stats.cached} answered from cache, {stats.retries} retries; "
            f"{counted(self.failed, what)} failed"
        )
        if self.failed:
            line += f" ({self.unanswered} unanswered, {self.unreadable} unreadable after every re-ask)"
        return line


def nudged(request: Request, attempt: int) -> Request:
    """The request of re-ask number ``attempt`` (1, 2, ...)."""
    suffix = RETRY_NUDGE if attempt == 1 else f"{RETRY_NUDGE} (attempt {attempt + 1})"
    return dataclasses.replace(request, user=f"{request.user}\n\n{suffix}")


def fitted(
    backend: Backend, jobs: Sequence[tuple[Callable[[str], str], str]], system: str | None
) -> list[Request]:
    """A request ``render(context)`` per job, the context cut by tokens so that the prompt fits a
    local model's input even with the longest re-ask nudge appended (:func:`nudged`): a prompt cut
    by the tokenizer instead would lose its end, where the instructions and the chat template's
    answer cue are. API backends get the whole context (:func:`rubric.llm.fit.fit_prompts`)."""
    from rubric.llm.fit import fit_prompts

    reserve = f"\n\n{RETRY_NUDGE} (attempt 99)"
    reserved = [(lambda c, r=render: r(c) + reserve, context) for render, context in jobs]
    requests = fit_prompts(backend, reserved, system)
    return [dataclasses.replace(r, user=r.user[: -len(reserve)]) for r in requests]


def ask_parsed(
    llm: CachedBackend,
    requests: Sequence[Request],
    parse: Callable[[int, str], T],
    retries: int = 2,
    desc: str = "LLM",
    *,
    counts: AskCounts | None = None,
) -> list[Asked[T]]:
    """Ask every request; re-ask those whose answer ``parse(i, answer)`` rejects, ``retries`` times.

    ``llm`` is the backend behind its cache (every answer is kept as it arrives). A request the
    backend could not answer is not re-asked here: the backend already retried it. Progress goes
    to stderr under ``desc`` (:func:`rubric.progress.progress`) with a fixed total, the
    prompts; each round of re-asks has a display of its own, so the time left stays right.
    ``counts`` adds up what was asked, for the run's summary line.
    """
    from rubric.progress import progress

    results: list[Asked[T]] = [Asked() for _ in requests]
    pending = list(range(len(requests)))
    for attempt in range(retries + 1):
        if not pending:
            break
        label = desc if not attempt else f"{desc} re-asks (round {attempt} of {retries})"
        bar = progress(len(pending), label, "prompt")
        try:
            pending = _ask_round(llm, requests, parse, pending, attempt=attempt, results=results, bar=bar)
        finally:
            bar.close()
    if counts is not None:
        counts.add(results)
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
            res.error, res.unanswered = f"no answer from the LLM ({answer.cause})", True
            continue
        res.answer, res.unanswered = answer.text, False
        try:
            res.value, res.error = parse(i, answer.text), None
        except ParseError as e:
            res.error = f"unreadable answer after {attempt + 1} attempt(s): {e}"
            still.append(i)
    return still


def backend_info(backend: Backend) -> dict[str, Any]:
    """What to record about the LLM in output files."""
    return {"llm": backend.model, "llm_options": dict(backend.options())}
