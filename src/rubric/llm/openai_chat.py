"""An OpenAI-compatible chat backend (OpenAI, vLLM, TGI, Ollama, ...) for every phase.

Why it looks like this: an evaluation campaign sends tens of thousands of prompts to a server
that throttles (429), hiccups (5xx), sometimes hangs and sometimes answers nonsense. So every
prompt is answered concurrently (``concurrency`` in flight, an asyncio semaphore), paced (``rpm``
requests per minute) and retried with exponential backoff and jitter (honouring ``Retry-After``)
a bounded number of times. Every reply is validated before it is believed: a body that is not
JSON (an HTML error page, a cut-off reply), ``choices`` missing or null, a message without text
content -- each is an unreadable reply, retried like a 500. A prompt that still fails comes back
as a :class:`~rubric.llm.base.Failure` with its cause and fails alone; each answer is reported
the moment its request completes (``on_results``), which is when the cache layer stores it.

The API key comes from ``OPENAI_API_KEY`` or ``api_key_file``. It is never written anywhere:
not in options or cache keys, and every text that comes from the server (answers, error bodies,
which some servers fill with the request's Authorization header) has it replaced by
``[redacted]`` before anything else sees it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
import os
import random
import re
import time
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rubric.errors import UserError
from rubric.llm.api_tokens import DEFAULT_API_TOKENIZER, ApiTokens
from rubric.llm.base import DECODING_KEYS, Answer, ChoiceRater, Failure, OnResults, Request, Result

T = TypeVar("T")
REDACTED = "[redacted]"
MIN_SECRET_LENGTH = 8  # shorter "keys" (local test servers) are not secrets worth garbling text for


def run_coroutine(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion from synchronous code, also when the caller is already
    inside a running event loop (a Jupyter cell, an async web handler), where ``asyncio.run``
    raises ``RuntimeError``. There it runs in a worker thread with its own event loop, and the
    caller blocks until it ends: the backend's contract is synchronous, and its answers are
    reported through ``on_results`` from that thread, as they arrive."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coroutine)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="rubric-openai") as pool:
        return pool.submit(asyncio.run, coroutine).result()


class BadReply(ValueError):
    """A 200 reply we cannot use (not JSON, no choices, no text content)."""


def read_api_key(api_key_file: str | Path | None) -> str:
    """The key from ``--api-key-file`` (first line) or ``OPENAI_API_KEY``; local servers need none."""
    if api_key_file:
        path = Path(api_key_file)
        try:
            key = path.read_text(encoding="utf-8").strip().splitlines()
        except IsADirectoryError:
            raise UserError(
                f"{{api_key_file}} {api_key_file}: is a directory, expected a file", "api_key_file"
            ) from None
        except OSError as e:
            raise UserError(
                f"{{api_key_file}} {api_key_file}: cannot read ({e.strerror})", "api_key_file"
            ) from None
        except UnicodeDecodeError:
            raise UserError(f"{{api_key_file}} {api_key_file}: not UTF-8 text", "api_key_file") from None
        if not key or not key[0].strip():
            raise UserError(f"{{api_key_file}} {api_key_file}: the file is empty", "api_key_file")
        return key[0].strip()
    return os.environ.get("OPENAI_API_KEY") or "EMPTY"


def check_api_options(
    *,
    concurrency: int = 8,
    rpm: float | None = None,
    max_retries: int = 6,
    timeout: float = 120.0,
    retry_base: float = 1.0,
    temperature: float = 0.0,
    max_tokens: int | None = None,
) -> None:
    """Range checks of the client options, each naming its parameter (the CLI: its option)."""
    bad = [
        ("concurrency", concurrency, concurrency >= 1, "at least 1"),
        ("rpm", rpm, rpm is None or (math.isfinite(rpm) and rpm > 0), "a positive number"),
        ("max_retries", max_retries, max_retries >= 0, "0 or more"),
        ("timeout", timeout, math.isfinite(timeout) and timeout > 0, "a positive number of seconds"),
        ("retry_base", retry_base, math.isfinite(retry_base) and retry_base >= 0, "0 or more seconds"),
        ("temperature", temperature, math.isfinite(temperature) and 0 <= temperature <= 2, "0 to 2"),
        ("max_tokens", max_tokens, max_tokens is None or max_tokens >= 1, "at least 1"),
    ]
    for name, value, ok, want in bad:
        if not ok:
            raise UserError(f"{{{name}}}: must be {want}, got {value}", name)


class OpenAIChat(ChoiceRater, ApiTokens):
    """Chat-completions backend: generates, and rates with logprobs where the server has them.

    ``max_input_tokens`` (0: no limit) is counted with ``api_tokenizer``
    (:mod:`rubric.llm.api_tokens`): the grading engine cuts contexts to it, and a prompt still
    over it fails without being sent (a server past its context may answer 400, or time out
    again and again)."""

    name = "openai"
    supports_system = True
    decoding_keys = frozenset(DECODING_KEYS)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str = "EMPTY",
        concurrency: int = 8,
        rpm: float | None = None,
        max_retries: int = 6,
        timeout: float = 120.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        retry_base: float = 1.0,
        retry_cap: float = 60.0,
        progress: bool = True,
        max_input_tokens: int = 0,
        api_tokenizer: str = DEFAULT_API_TOKENIZER,
    ):
        check_api_options(
            concurrency=concurrency,
            rpm=rpm,
            max_retries=max_retries,
            timeout=timeout,
            retry_base=retry_base,
            temperature=temperature,
            max_tokens=max_tokens,
        )
        super().__init__(model)
        self.base_url = base_url
        self._api_key = api_key
        self._secret = api_key if api_key != "EMPTY" and len(api_key) >= MIN_SECRET_LENGTH else None
        self.concurrency = concurrency
        self.rpm = rpm
        self.max_retries = max_retries
        self.timeout = timeout
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.retry_base = retry_base
        self.retry_cap = retry_cap
        self.progress = progress
        self._logprobs_supported = True
        self.input_limit = max_input_tokens
        self.api_tokenizer = api_tokenizer

    @classmethod
    def cached(
        cls, model: str, cache: Path | None = None, *, use_cache: bool = True, **options: Any
    ) -> tuple[OpenAIChat, Any]:
        """The backend of :meth:`from_options` and its response cache (opened first, so a file
        that is no cache fails before the API key is read)."""
        from rubric.llm.cache import open_cache

        responses = open_cache(cache, use=use_cache)
        return cls.from_options(model, **options), responses

    @classmethod
    def from_options(
        cls,
        model: str,
        *,
        base_url: str | None = None,
        api_key_file: str | Path | None = None,
        concurrency: int = 8,
        rpm: float | None = None,
        max_retries: int = 6,
        timeout: float = 120.0,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        **extra: Any,
    ) -> OpenAIChat:
        """Build from CLI-style options (the backend registry calls this).

        ``extra`` may carry ``retry_base``, ``retry_cap`` and ``progress``, and ``max_input_tokens``
        with ``api_tokenizer`` (contexts cut to that many tokens of that tokenizer; 0: whole
        passages); the other local-model options every grading command passes are ignored (beams
        are refused), any other is an error.
        """
        tuning: dict[str, Any] = {
            k: extra.pop(k) for k in ("retry_base", "retry_cap", "progress") if k in extra
        }
        limit = extra.pop("max_input_tokens", None)
        if limit is not None:
            tuning["max_input_tokens"] = limit
        if extra.get("api_tokenizer") is not None:
            tuning["api_tokenizer"] = extra.pop("api_tokenizer")
        extra.pop("api_tokenizer", None)
        if (extra.pop("num_beams", None) or 1) > 1:
            raise UserError(
                "{num_beams}: the openai backend decodes greedily (temperature 0), no beams", "num_beams"
            )
        max_new_tokens = extra.pop("max_new_tokens", None)
        if max_tokens is None:
            max_tokens = max_new_tokens
        for local_only in ("device", "dtype", "batch_size", "token_budget"):
            extra.pop(local_only, None)
        unknown = [k for k, v in extra.items() if v is not None]
        if unknown:
            raise UserError(f"{{{unknown[0]}}}: not an option of the openai backend", unknown[0])
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
            **tuning,
        )

    def options(self) -> dict[str, Any]:
        """Decoding options that change answers (no key, no URL, no concurrency)."""
        opts: dict[str, Any] = {"temperature": self.temperature}
        if self.max_tokens is not None:
            opts["max_tokens"] = self.max_tokens
        return opts

    # -- the contract ----------------------------------------------------------------------------

    def generate(self, requests: Sequence[Request], on_results: OnResults | None = None) -> list[Result]:
        """Answers in order; a request that failed after all retries is a Failure."""
        return run_coroutine(self._run(list(requests), logprobs=False, on_results=on_results))

    def rate(
        self, requests: Sequence[Request], choices: Sequence[str], on_results: OnResults | None = None
    ) -> list[Result]:
        """Greedy answers plus the first token's distribution over ``choices`` where the server
        returns logprobs (vLLM and OpenAI do); plain answers otherwise."""

        def keep_choices(batch: Sequence[tuple[int, Result]]) -> None:
            if on_results is not None:
                on_results([(i, _only(r, choices)) for i, r in batch])

        got = run_coroutine(self._run(list(requests), logprobs=True, on_results=keep_choices))
        return [_only(r, choices) for r in got]

    # -- internals -------------------------------------------------------------------------------

    def redact(self, text: str) -> str:
        """``text`` with the API key replaced (servers may echo the Authorization header)."""
        return text.replace(self._secret, REDACTED) if self._secret else text

    async def _run(
        self, requests: list[Request], *, logprobs: bool, on_results: OnResults | None
    ) -> list[Result]:
        import openai  # lazy: keeps `rubric --help` fast

        client = openai.AsyncOpenAI(
            api_key=self._api_key, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )
        semaphore = asyncio.Semaphore(self.concurrency)
        pace = _Pacer(self.rpm)
        bar = _progress(len(requests), enabled=self.progress)
        try:

            async def one(i: int, request: Request) -> Result:
                async with semaphore:
                    result = await self._ask(client, openai, pace, request, want_logprobs=logprobs)
                if on_results is not None:
                    on_results([(i, result)])
                bar.update(1)
                return result

            return list(await asyncio.gather(*(one(i, r) for i, r in enumerate(requests))))
        finally:
            bar.close()
            await client.close()

    async def _ask(
        self, client: Any, openai: Any, pace: _Pacer, request: Request, *, want_logprobs: bool
    ) -> Result:
        messages = ([{"role": "system", "content": request.system}] if request.system else []) + [
            {"role": "user", "content": request.user}
        ]
        over = self.over_limit(request)
        if over is not None:
            return Failure(
                f"prompt of {over} tokens, over the input limit of {self.input_limit}: not sent", False
            )
        cause = ""
        for attempt in range(self.max_retries + 1):
            await pace.wait()
            kwargs: dict[str, Any] = {
                "model": self.model,
                "messages": messages,
                **self.options(),
                **dict(request.decoding),  # the prompt's own settings win (UMBRELA's judge)
            }
            logprobs = want_logprobs and self._logprobs_supported
            if logprobs:
                kwargs.update(logprobs=True, top_logprobs=10)
            delay: float | None = None
            try:
                raw = await client.chat.completions.with_raw_response.create(**kwargs)
                text, probs = read_reply(raw.http_response.content, want_logprobs=logprobs)
                return Answer(self.redact(text), probs)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as e:
                raise UserError(
                    f"{{base_url}} {self.base_url}: authentication failed (HTTP {e.status_code}); "
                    "check OPENAI_API_KEY or {api_key_file}",
                    "api_key_file",
                    "base_url",
                ) from None
            except openai.NotFoundError as e:
                raise UserError(
                    f"{{model}} {self.model}: the server at {self.base_url} answered HTTP 404 "
                    f"({self._brief(e)})",
                    "model",
                ) from None
            except openai.BadRequestError as e:
                if logprobs and "logprob" in str(e).lower():
                    self._logprobs_supported = False  # server without logprobs: plain generation
                    continue
                return Failure(f"HTTP 400 ({self._brief(e)})", retryable=False)  # fails again if re-sent
            except openai.RateLimitError as e:
                cause, delay = "HTTP 429", _retry_after(e)
            except openai.APIStatusError as e:
                cause = f"HTTP {e.status_code} ({self._brief(e)})"
                if e.status_code < 500 and e.status_code not in (408, 409):
                    return Failure(cause, retryable=False)
                delay = _retry_after(e)
            except openai.APITimeoutError:
                cause = f"timeout after {self.timeout:g}s"
            except openai.APIConnectionError as e:
                cause = f"connection error ({self._brief(e)})"
            except BadReply as e:
                cause = f"unreadable reply ({self.redact(str(e))})"
            if attempt == self.max_retries:
                break
            self.stats.retries += 1
            if delay is None:
                delay = min(self.retry_cap, self.retry_base * 2**attempt) * (0.5 + random.random())
            await asyncio.sleep(min(delay, self.retry_cap))
        return Failure(cause)

    def _brief(self, e: Exception) -> str:
        """The error's message on one line, without the client's "Error code: N - " prefix: the
        server's ``{"error": {"message": ...}}`` where the body has one (client releases differ in
        how much of the body their own message repeats)."""
        body = getattr(e, "body", None)
        error = body.get("error", body) if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
        text = message if isinstance(message, str) and message.strip() else str(e)
        text = re.sub(r"^Error code: \d+ - ", "", " ".join(text.split()))
        return self.redact(text)[:200]


def read_reply(body: bytes, *, want_logprobs: bool) -> tuple[str, dict[str, float] | None]:
    """The answer text (and first-token probabilities) of a chat-completions reply body.

    Raises :class:`BadReply` naming what is wrong; nothing about a reply is taken on trust.
    """
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        snippet = body[:80].decode("utf-8", "replace").replace("\n", " ")
        raise BadReply(f"not JSON: {snippet!r}") from None
    if not isinstance(data, dict):
        raise BadReply(f"a JSON {type(data).__name__}, not an object")
    if "error" in data and not data.get("choices"):
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise BadReply(f"error: {' '.join(str(message).split())[:120]}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BadReply(f"choices is {_kind(choices)}")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise BadReply(f"message is {_kind(message)}")
    content = message.get("content")
    if not isinstance(content, str):
        raise BadReply(f"content is {_kind(content)}")
    return content, _first_token_probs(choices[0]) if want_logprobs else None


def _kind(value: Any) -> str:
    if value is None:
        return "missing or null"
    if isinstance(value, list) and not value:
        return "an empty list"
    names = {str: "a string", int: "a number", float: "a number", bool: "a boolean", dict: "an object"}
    return names.get(type(value), f"a {type(value).__name__}")


def _first_token_probs(choice: dict[str, Any]) -> dict[str, float] | None:
    """Probabilities of the first token's top alternatives (blanks stripped, spellings summed);
    None where the reply has no usable logprobs."""
    try:
        tops = choice["logprobs"]["content"][0]["top_logprobs"] or []
        probs: dict[str, float] = {}
        for top in tops:
            token = str(top["token"]).strip()
            probs[token] = probs.get(token, 0.0) + math.exp(float(top["logprob"]))
        return probs or None
    except (KeyError, IndexError, TypeError, ValueError, OverflowError):
        return None


def _only(result: Result, choices: Sequence[str]) -> Result:
    """A rating's probabilities restricted to the choices (0 for choices not among the top)."""
    if isinstance(result, Answer) and result.probabilities is not None:
        return Answer(result.text, {c: result.probabilities.get(c, 0.0) for c in choices})
    return result


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


def _progress(total: int, *, enabled: bool) -> Any:
    from rubric.progress import progress

    return progress(total, "LLM", "prompt", enabled=enabled and total >= 20)


def _retry_after(e: Any) -> float | None:
    try:
        value = float(e.response.headers.get("retry-after"))
    except (AttributeError, TypeError, ValueError):
        return None
    return value if math.isfinite(value) and value >= 0 else None
