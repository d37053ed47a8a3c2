"""Ask an LLM for structured answers with bounded re-asks, and keep score of what failed.

Shared by bank generation, AutoNuggetizer and nugget assignment. Why re-asking changes the
prompt: answers are cached and decoding is greedy, so asking the same prompt again would return
the same unreadable answer; each re-ask appends :data:`~rubric.bank.parse.RETRY_NUDGE` (and the
attempt number), which is a new prompt and therefore a new cache entry. Transport failures
(429/5xx/timeouts) are retried inside the backend; a prompt that is still unanswered, or whose
answer is unreadable after all re-asks, comes back with ``error`` set, never as an empty result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rubric.bank.parse import RETRY_NUDGE, ParseError
from rubric.llm.openai_chat import ChatPrompt

T = TypeVar("T")


@dataclass
class Asked(Generic[T]):
    """The parsed answer of one prompt, or why there is none."""

    value: T | None = None
    error: str | None = None
    attempts: int = 0
    answer: str | None = None


def complete(backend: Any, prompts: Sequence[ChatPrompt]) -> list[str | None]:
    """Answers (``None`` = failed after the backend's retries) from any backend.

    Backends with ``complete`` (the OpenAI backend) report per-prompt failures; others only have
    ``generate`` and get the system message prepended to the user message.
    """
    if hasattr(backend, "complete"):
        return backend.complete(list(prompts))
    texts = [p.user if not p.system else f"{p.system}\n\n{p.user}" for p in prompts]
    return list(backend.generate(texts))


def nudged(prompt: ChatPrompt, attempt: int) -> ChatPrompt:
    """The prompt of re-ask number ``attempt`` (1, 2, ...)."""
    suffix = RETRY_NUDGE if attempt == 1 else f"{RETRY_NUDGE} (attempt {attempt + 1})"
    return ChatPrompt(user=f"{prompt.user}\n\n{suffix}", system=prompt.system)


def ask_parsed(
    backend: Any, prompts: Sequence[ChatPrompt], parse: Callable[[int, str], T], retries: int = 2
) -> list[Asked[T]]:
    """Ask every prompt; re-ask those whose answer ``parse(i, answer)`` rejects, ``retries`` times."""
    results: list[Asked[T]] = [Asked() for _ in prompts]
    pending = list(range(len(prompts)))
    for attempt in range(retries + 1):
        if not pending:
            break
        asked = [prompts[i] if attempt == 0 else nudged(prompts[i], attempt) for i in pending]
        answers = complete(backend, asked)
        still: list[int] = []
        for i, answer in zip(pending, answers, strict=True):
            res = results[i]
            res.attempts = attempt + 1
            if answer is None:
                res.error = "no answer from the LLM after retries"
                continue
            res.answer = answer
            try:
                res.value, res.error = parse(i, answer), None
            except ParseError as e:
                res.error = f"unreadable answer after {attempt + 1} attempt(s): {e}"
                still.append(i)
        pending = still
    return results


def backend_info(backend: Any) -> dict[str, Any]:
    """What to record about the LLM in output files."""
    return {"llm": getattr(backend, "model", ""), "llm_options": dict(backend.options())}
