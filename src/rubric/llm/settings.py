"""Typed settings of the backends, checked before any file is read or request sent.

The commands that ask a chat model (bank generation, nuggetizing, nugget assignment) take the
same thirteen options, and the grading commands the same local-model options. The CLI declares
them as options (its option groups subclass these dataclasses and add only the declarations);
what the values mean -- their ranges and the keyword arguments a backend takes -- is written
here once, so a Python caller builds the same backend from the same settings.

Nothing heavy is imported here (the CLI imports this module on start-up): the OpenAI client
loads when a backend is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubric.errors import at_least
from rubric.llm.api_tokens import DEFAULT_API_TOKENIZER

if TYPE_CHECKING:
    from rubric.llm.cache import ResponseCache
    from rubric.llm.openai_chat import OpenAIChat


@dataclass
class ApiSettings:
    """How to reach an OpenAI-compatible server (also given to the grading backends, which
    ignore what they do not know)."""

    base_url: str | None = None
    api_key_file: Path | None = None
    concurrency: int = 8
    rpm: float | None = None
    max_retries: int = 6
    retry_base: float = 1.0
    timeout: float = 120.0

    def check(self, temperature: float = 0.0, max_tokens: int | None = None) -> None:
        """Range checks, each naming its command-line option."""
        from rubric.llm.openai_chat import check_api_options

        check_api_options(
            concurrency=self.concurrency,
            rpm=self.rpm,
            max_retries=self.max_retries,
            timeout=self.timeout,
            retry_base=self.retry_base,
            temperature=temperature,
            max_tokens=max_tokens,
        )


@dataclass
class ChatSettings:
    """Everything a command that asks a chat model needs: model, server, decoding, cache, re-asks."""

    model: str
    api: ApiSettings
    temperature: float = 0.0
    max_tokens: int | None = None
    cache: Path | None = None
    no_cache: bool = False
    parse_retries: int = 2

    def check(self) -> None:
        """Range checks of every setting, before any file is read."""
        self.api.check(self.temperature, self.max_tokens)
        at_least("parse_retries", self.parse_retries, 0)

    def backend(self) -> tuple[OpenAIChat, ResponseCache | None]:
        """The :class:`~rubric.llm.openai_chat.OpenAIChat` of the settings (checked first) and
        its response cache (opened before the API key is read, so a bad cache file fails first)."""
        from rubric.llm.openai_chat import OpenAIChat

        self.check()
        decoding = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        api = decoding | dataclasses.asdict(self.api)
        return OpenAIChat.cached(self.model, self.cache, use_cache=not self.no_cache, **api)


@dataclass
class LocalSettings:
    """How a local model runs (the openai backend refuses those it cannot honour); the ranges
    are checked with the rest of a grading job's options
    (:func:`rubric.llm.registry.check_backend_options`)."""

    device: str = "auto"
    dtype: str = "auto"
    batch_size: int = 0
    token_budget: int = 0
    max_input_tokens: int = 512
    api_tokenizer: str = DEFAULT_API_TOKENIZER
    max_new_tokens: int = 32
    num_beams: int = 1
    attention: str = "auto"
    compile_encoder: bool = False
    compute_type: str = "auto"
    threads: int = 0

    def backend_options(self) -> dict[str, Any]:
        """The settings as the backends take them; the attention, compute-type and thread settings
        only when chosen, so a backend without them refuses them only when they are asked for."""
        return {
            "attention": None if self.attention == "auto" else self.attention,
            "compile": self.compile_encoder or None,
            "compute_type": None if self.compute_type == "auto" else self.compute_type,
            "threads": self.threads or None,
            "device": self.device,
            "dtype": self.dtype,
            "batch_size": self.batch_size,
            "token_budget": self.token_budget,
            "max_input_tokens": self.max_input_tokens,
            "api_tokenizer": self.api_tokenizer if self.api_tokenizer != DEFAULT_API_TOKENIZER else None,
            "max_new_tokens": self.max_new_tokens,
            "num_beams": self.num_beams,
        }
