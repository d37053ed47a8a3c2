"""An OpenAI-compatible chat backend (OpenAI, vLLM, TGI, Ollama, ...) for every phase.

Why it looks like this: an evaluation campaign sends tens of thousands of prompts to a server
that throttles (429), hiccups (5xx) and sometimes hangs. So every prompt is answered
concurrently (``concurrency`` in flight, an asyncio semaphore), paced (``rpm`` requests per
minute), retried with exponential backoff and jitter (honouring ``Retry-After``) a bounded
number of times, and cached (sqlite, :mod:`rubric.llm.cache`) as soon as it is answered, so a
killed run resumes for free. A prompt that still fails is *recorded* (``stats.failures``,
``stats.errors``) and returned as ``None`` by :meth:`OpenAIChat.complete`; it is never cached
and never turned into an empty answer. :meth:`OpenAIChat.generate` (the Backend protocol)
raises :class:`LLMFailure` instead of returning partial answers.

The API key comes from ``OPENAI_API_KEY`` or ``api_key_file``; it is never written anywhere
(not in options, cache keys, output files or messages).
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.llm.base import BackendStats, Rating
from rubric.llm.cache import ResponseCache, cache_key


class LLMFailure(UserError):
    """Some prompts were not answered after all retries (their answers are not cached)."""


@dataclass(frozen=True)
class ChatPrompt:
    """A user message with an optional system message (what prompt files render to)."""

    user: str
    system: str | None = None


def read_api_key(api_key_file: str | Path | None) -> str:
    """The key from ``--api-key-file`` (first line) or ``OPENAI_API_KEY``; local servers need none."""
    if api_key_file:
        try:
            key = Path(api_key_file).read_text(encoding="utf-8").strip().splitlines()
        except OSError as e:
            raise UserError(f"--api-key-file {api_key_file}: cannot read ({e.strerror})") from None
        if not key or not key[0].strip():
            raise UserError(f"--api-key-file {api_key_file}: the file is empty")
        return key[0].strip()
    return os.environ.get("OPENAI_API_KEY") or "EMPTY"


class OpenAIChat:
    """Chat-completions backend; implements ``Backend`` and ``RatingBackend``."""

    name = "openai"

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key: str = "EMPTY",
        concurrency: int = 8,
        rpm: float | None = None,
        max_retries: int = 6,
        timeout: float = 120.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        cache: ResponseCache | None = None,
        retry_base: float = 1.0,
        retry_cap: float = 60.0,
        progress: bool = True,
    ):
        if concurrency < 1:
            raise UserError("--concurrency: must be at least 1")
        if max_retries < 0:
            raise UserError("--max-retries: must be 0 or more")
        if rpm is not None and rpm <= 0:
            raise UserError("--rpm: must be positive")
        self.model = model
        self.base_url = base_url
        self._api_key = api_key
        self.concurrency = concurrency
        self.rpm = rpm
        self.max_retries = max_retries
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.cache = cache
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.progress = progress
        self.stats = BackendStats()
        self._logprobs_supported = True

    @classmethod
    def from_options(
        cls,
        model: str,
        base_url: str | None = None,
        api_key_file: str | Path | None = None,
        concurrency: int = 8,
        rpm: float | None = None,
        max_retries: int = 6,
        timeout: float = 120.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        cache: ResponseCache | str | Path | None = None,
        **extra: Any,
    ) -> OpenAIChat:
        """Build from CLI-style options (the grading engine's backend registry calls this).

        ``extra`` may carry ``retry_base``, ``retry_cap`` and ``progress``; other options left at
        None (generic options of other backends) are ignored, any other is an error.
        """
        tuning = {k: extra.pop(k) for k in ("retry_base", "retry_cap", "progress") if k in extra}
        # The grading CLI passes every backend the local-model options; a server needs none of them.
        if (extra.pop("num_beams", None) or 1) > 1:
            raise UserError("--num-beams: the openai backend decodes greedily (temperature 0), no beams")
        max_new_tokens = extra.pop("max_new_tokens", None)
        if max_tokens is None:
            max_tokens = max_new_tokens
        for local_only in ("device", "dtype", "batch_size", "token_budget", "max_input_tokens"):
            extra.pop(local_only, None)
        unknown = [k for k, v in extra.items() if v is not None]
        if unknown:
            raise UserError(f"--{unknown[0].replace('_', '-')}: not an option of the openai backend")
        if cache is not None and not isinstance(cache, ResponseCache):
            cache = ResponseCache(cache)
        return cls(
            model=model,
            base_url=base_url,
            api_key=read_api_key(api_key_file),
            concurrency=concurrency,
            rpm=rpm,
            max_retries=max_retries,
            timeout=timeout,
            temperature=temperature,
            max_tokens=max_tokens,
            cache=cache,
            **tuning,
        )

    def options(self) -> dict[str, Any]:
        """Decoding options that change answers (no key, no URL, no concurrency)."""
        opts: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            opts["max_tokens"] = self.max_tokens
        return opts

    # -- public API ----------------------------------------------------------------------------

    def generate(self, prompts: Sequence[str | ChatPrompt]) -> list[str]:
        """Answers in order; raises :class:`LLMFailure` if any prompt failed after retries."""
        answers = self.complete(prompts)
        failed = sum(a is None for a in answers)
        if failed:
            raise LLMFailure(
                f"--base-url {self.base_url or 'default'}: {failed} of {len(answers)} prompts failed after "
                f"{self.max_retries} retries ({self.stats.errors[-1] if self.stats.errors else ''}); "
                "answered prompts are cached, re-run to retry the rest"
            )
        return [a for a in answers if a is not None]

    def complete(self, prompts: Sequence[str | ChatPrompt], kind: str = "generate") -> list[str | None]:
        """Answers in order; ``None`` where a prompt failed after all retries (recorded in stats)."""
        chats = [p if isinstance(p, ChatPrompt) else ChatPrompt(p) for p in prompts]
        keys = [self._key(c, kind) for c in chats]
        self.stats.prompts += len(chats)
        cached = self.cache.get_many(keys) if self.cache else {}
        answers: list[str | None] = [cached.get(k) for k in keys]
        self.stats.cached += sum(a is not None for a in answers)
        todo = [i for i, a in enumerate(answers) if a is None]
        if todo:
            results = asyncio.run(
                self._run([chats[i] for i in todo], [keys[i] for i in todo], kind.startswith("rate:"))
            )
            for i, answer in zip(todo, results, strict=True):
                answers[i] = answer
        return answers

    def rate(self, prompts: Sequence[str | ChatPrompt], choices: Sequence[str]) -> list[Rating]:
        """Greedy answers plus the first token's distribution over ``choices`` where the server
        returns logprobs (vLLM and OpenAI do); plain answers otherwise."""
        chats = [p if isinstance(p, ChatPrompt) else ChatPrompt(p) for p in prompts]
        raw = self.complete(chats, kind=f"rate:{','.join(choices)}")
        ratings = []
        for r in raw:
            if r is None:
                raise LLMFailure(
                    f"--base-url {self.base_url or 'default'}: a rating prompt failed after "
                    f"{self.max_retries} retries ({self.stats.errors[-1] if self.stats.errors else ''}); "
                    "re-run to retry"
                )
            answer, probs = _split_rating(r)
            if probs is not None:
                probs = {c: probs.get(c, 0.0) for c in choices}
            ratings.append(Rating(answer=answer, probabilities=probs))
        return ratings

    # -- internals -----------------------------------------------------------------------------

    def _key(self, chat: ChatPrompt, kind: str) -> str:
        text = chat.user if chat.system is None else f"{chat.system}\n\x00\n{chat.user}"
        return cache_key(self.name, self.model, self.options(), text, kind)

    async def _run(self, chats: list[ChatPrompt], keys: list[str], logprobs: bool) -> list[str | None]:
        import openai  # lazy: keeps `rubric --help` fast

        client = openai.AsyncOpenAI(
            api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )
        semaphore = asyncio.Semaphore(self.concurrency)
        pace = _Pacer(self.rpm)
        bar = _progress(len(chats), self.progress)
        try:

            async def one(chat: ChatPrompt, key: str) -> str | None:
                async with semaphore:
                    answer = await self._ask(client, openai, pace, chat, logprobs)
                if answer is not None and self.cache is not None:
                    self.cache.put_many([(key, answer)])
                bar.update(1)
                return answer

            return list(await asyncio.gather(*(one(c, k) for c, k in zip(chats, keys, strict=True))))
        finally:
            bar.close()
            await client.close()

    async def _ask(
        self, client: Any, openai: Any, pace: _Pacer, chat: ChatPrompt, want_logprobs: bool
    ) -> str | None:
        messages = ([{"role": "system", "content": chat.system}] if chat.system else []) + [
            {"role": "user", "content": chat.user}
        ]
        last_error = ""
        for attempt in range(self.max_retries + 1):
            await pace.wait()
            kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
            kwargs.update(self.options())
            if want_logprobs and self._logprobs_supported:
                kwargs.update(logprobs=True, top_logprobs=10)
            try:
                response = await client.chat.completions.create(**kwargs)
                choice = response.choices[0]
                text = choice.message.content or ""
                if want_logprobs:
                    return _join_rating(text, _first_token_probs(choice))
                return text
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                raise UserError(
                    f"--base-url {self.base_url}: authentication failed (HTTP {e.status_code}); "
                    "check OPENAI_API_KEY or --api-key-file"
                ) from None
            except openai.NotFoundError as e:
                raise UserError(
                    f"--model {self.model}: the server at {self.base_url} answered HTTP 404 ({_brief(e)})"
                ) from None
            except openai.BadRequestError as e:
                if want_logprobs and self._logprobs_supported and "logprob" in str(e).lower():
                    self._logprobs_supported = False  # server without logprobs: plain generation
                    continue
                last_error = f"HTTP 400 {_brief(e)}"
                break  # the same request will fail again
            except openai.RateLimitError as e:
                last_error = "HTTP 429"
                delay = _retry_after(e)
            except openai.APIStatusError as e:
                last_error = f"HTTP {e.status_code}"
                if e.status_code < 500 and e.status_code not in (408, 409):
                    break
                delay = _retry_after(e)
            except openai.APITimeoutError:
                last_error = f"timeout after {self.timeout:g}s"
                delay = None
            except openai.APIConnectionError as e:
                last_error = f"connection error ({_brief(e)})"
                delay = None
            except (IndexError, AttributeError) as e:  # a 200 without choices
                last_error = f"malformed response ({e})"
                delay = None
            if attempt == self.max_retries:
                break
            self.stats.retries += 1
            if delay is None:
                delay = min(self.retry_cap, self.retry_base * 2**attempt) * (0.5 + random.random())
            await asyncio.sleep(min(delay, self.retry_cap))
        self.stats.failures += 1
        self.stats.errors.append(last_error)
        return None


class _Pacer:
    """Spaces request starts by 60/rpm seconds (shared by all concurrent tasks)."""

    def __init__(self, rpm: float | None):
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next = 0.0
        self.lock = asyncio.Lock()

    async def wait(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = time.monotonic()
            start = max(now, self.next)
            self.next = start + self.interval
        if start > now:
            await asyncio.sleep(start - now)


class _NoBar:
    def update(self, n: int) -> None:
        pass

    def close(self) -> None:
        pass


def _progress(total: int, enabled: bool) -> Any:
    if not enabled or total < 20:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc="LLM", unit="prompt", file=sys.stderr, disable=None)


def _retry_after(e: Any) -> float | None:
    try:
        value = e.response.headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


def _brief(e: Exception) -> str:
    text = str(e).replace("\n", " ")
    return text[:200]


# A rating answer is cached as "answer\x1f{json probs}" so the distribution survives the cache.
_SEP = "\x1f"


def _join_rating(answer: str, probs: dict[str, float] | None) -> str:
    if probs is None:
        return answer
    import json

    return f"{answer}{_SEP}{json.dumps(probs, sort_keys=True)}"


def _split_rating(raw: str) -> tuple[str, dict[str, float] | None]:
    if _SEP not in raw:
        return raw, None
    import json

    answer, probs = raw.split(_SEP, 1)
    return answer, json.loads(probs)


def _first_token_probs(choice: Any) -> dict[str, float] | None:
    import math

    logprobs = getattr(choice, "logprobs", None)
    content = getattr(logprobs, "content", None) if logprobs is not None else None
    if not content:
        return None
    probs: dict[str, float] = {}
    for top in content[0].top_logprobs or []:
        token = top.token.strip()
        probs[token] = probs.get(token, 0.0) + math.exp(top.logprob)
    return probs
