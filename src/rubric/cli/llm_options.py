"""The options of the OpenAI-compatible backend, shared by every command that calls an LLM.

Option objects are defined once so `--help` reads the same everywhere; :func:`check_options`
checks their ranges before any work, :func:`openai_backend` turns them into a backend and its
response cache (imports nothing heavy: the ``openai`` client loads on first call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from rubric.cli.common import info
from rubric.errors import UserError

MODEL = typer.Option(
    ..., "--model", "-m", help="Model name as the server knows it (e.g. gpt-4o, a vLLM model)."
)
BASE_URL = typer.Option(
    None,
    "--base-url",
    help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 for vLLM. "
    "[default: $OPENAI_BASE_URL, else https://api.openai.com/v1]",
)
API_KEY_FILE = typer.Option(
    None,
    "--api-key-file",
    help="File whose first line is the API key. [default: $OPENAI_API_KEY; none for local servers] "
    "The key is never written to any output, cache or log.",
)
CONCURRENCY = typer.Option(8, "--concurrency", help="Requests in flight at once (at least 1).")
RPM = typer.Option(None, "--rpm", help="At most this many requests per minute. [default: no limit]")
MAX_RETRIES = typer.Option(
    6,
    "--max-retries",
    help="Retries of a request after 429, 5xx, timeouts, connection errors or unreadable replies.",
)
RETRY_BASE = typer.Option(
    1.0,
    "--retry-base",
    help="First backoff delay in seconds; doubles per retry, with jitter, capped at 60 s "
    "(a server's Retry-After wins).",
)
TIMEOUT = typer.Option(120.0, "--timeout", help="Seconds to wait for one answer before retrying (> 0).")
TEMPERATURE = typer.Option(
    0.0, "--temperature", help="Sampling temperature, 0 to 2 (0 = greedy, reproducible)."
)
MAX_TOKENS = typer.Option(None, "--max-tokens", help="Answer length limit. [default: the server's]")
CACHE = typer.Option(
    None,
    "--cache",
    help="sqlite response cache; re-runs only ask new prompts. "
    "[default: $RUBRIC_CACHE_DIR/responses.sqlite, or ~/.cache/rubric-workbench/responses.sqlite]",
)
NO_CACHE = typer.Option(False, "--no-cache", help="Do not read or write the response cache.")
PARSE_RETRIES = typer.Option(
    2, "--parse-retries", help="Re-asks (with a reminder of the format) when an answer cannot be parsed."
)


def at_least(option: str, value: int | None, minimum: int) -> None:
    """An integer option below its minimum is a user error naming the option."""
    if value is not None and value < minimum:
        raise UserError(f"{option}: must be at least {minimum}, got {value}")


def check_options(
    concurrency: int,
    rpm: float | None,
    max_retries: int,
    retry_base: float,
    timeout: float,
    temperature: float = 0.0,
    max_tokens: int | None = None,
    parse_retries: int = 0,
) -> None:
    """Range checks of the LLM options, before any file is read or request sent."""
    from rubric.llm.openai_chat import check_api_options

    check_api_options(concurrency, rpm, max_retries, timeout, retry_base, temperature, max_tokens)
    at_least("--parse-retries", parse_retries, 0)


def open_cache(cache: Path | None, no_cache: bool) -> Any:
    """The response cache of ``--cache`` / ``--no-cache`` (a file that is no sqlite cache: exit 2)."""
    from rubric.llm.cache import ResponseCache, default_cache_path

    return None if no_cache else ResponseCache(cache or default_cache_path())


def openai_backend(
    model: str,
    base_url: str | None,
    api_key_file: Path | None,
    concurrency: int,
    rpm: float | None,
    max_retries: int,
    retry_base: float,
    timeout: float,
    temperature: float,
    max_tokens: int | None,
    cache: Path | None,
    no_cache: bool,
) -> tuple[Any, Any]:
    """An :class:`~rubric.llm.openai_chat.OpenAIChat` from the shared options, and its cache."""
    from rubric.llm.openai_chat import OpenAIChat

    responses = open_cache(cache, no_cache)
    backend = OpenAIChat.from_options(
        model=model,
        base_url=base_url,
        api_key_file=api_key_file,
        concurrency=concurrency,
        rpm=rpm,
        max_retries=max_retries,
        timeout=timeout,
        temperature=temperature,
        max_tokens=max_tokens,
        retry_base=retry_base,
    )
    return backend, responses


def report_llm(backend: Any) -> None:
    """One summary line of what the LLM was asked (counts every retry and failure)."""
    s = backend.stats
    info(
        f"LLM {backend.model}: {s.prompts} prompts, {s.cached} from cache, {s.retries} retries, "
        f"{s.failures} failed"
    )


def report_failures(failures: list[str], what: str) -> None:
    """List failures (first 20) and end with exit code 1: the output holds everything else."""
    if not failures:
        return
    for line in failures[:20]:
        info(f"  failed: {line}")
    if len(failures) > 20:
        info(f"  ... and {len(failures) - 20} more")
    info(
        f"rubric: {len(failures)} {what} failed and are missing or unlabelled in the output; "
        "re-run the same command to retry them (answered prompts come from the cache)"
    )
    raise typer.Exit(1)
