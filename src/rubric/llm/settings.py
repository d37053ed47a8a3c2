"""Typed settings of the backends, checked before any file is read or request sent.

The commands that ask a model for lists (bank generation, nuggetizing, nugget assignment) and
the grading commands take the same backend, server and local-model options. The CLI declares
them as options (its option groups subclass these dataclasses and add only the declarations);
what the values mean -- their ranges and the keyword arguments a backend takes -- is written
here once, so a Python caller builds the same backend from the same settings.

Nothing heavy is imported here (the CLI imports this module on start-up): the OpenAI client
loads when a backend is built.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rubric.errors import UserError, at_least
from rubric.llm.api_tokens import DEFAULT_API_TOKENIZER

if TYPE_CHECKING:
    from rubric.llm.base import Backend, TextGenerator
    from rubric.llm.cache import ResponseCache


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
    """Everything a command that asks a model for lists needs (bank generation, nuggetizing,
    assignment): backend and model, server, local-model settings, decoding, cache, re-asks.

    ``backend`` is any registered text generator (:mod:`rubric.llm.registry`: ``openai``,
    ``hf-causal``, ``ct2-causal``, ...), built from the same settings as in ``rubric grade``;
    ``scale_graders`` of :meth:`check` lets a command also take a prompt-free
    :class:`~rubric.llm.base.ScaleGrader` (the embedding baseline of ``grade assign``). Answers
    are as long as ``local.max_new_tokens``, by default the server's limit (openai) or
    :data:`LIST_TOKENS` (local models: a list of 20 nuggets is about 300 tokens; rubric grade's
    32 would cut it).
    """

    model: str
    api: ApiSettings
    backend: str = "openai"
    local: LocalSettings = field(default_factory=lambda: LocalSettings())
    temperature: float = 0.0
    cache: Path | None = None
    no_cache: bool = False
    parse_retries: int = 2

    def check(self, *, scale_graders: bool = False) -> None:
        """Range checks of every setting and the backend's kind, before any file is read."""
        from rubric.llm.base import ScaleGrader, TextGenerator
        from rubric.llm.packaged import check_installed
        from rubric.llm.registry import backend_class, check_backend_options, check_model_fits

        self.api.check(self.temperature)
        check_backend_options(self.local.backend_options(None))
        at_least("parse_retries", self.parse_retries, 0)
        cls = backend_class(self.backend)  # unknown, or its extra missing
        kinds = (TextGenerator, ScaleGrader) if scale_graders else (TextGenerator,)
        if not issubclass(cls, kinds):
            raise UserError(
                f"{{backend}} {self.backend}: writes no text, and this command asks the model for lists",
                "backend",
            )
        if self.temperature and self.backend != "openai":
            raise UserError(
                f"{{temperature}} {self.temperature}: the {self.backend} backend decodes greedily "
                "(temperature 0)",
                "temperature",
            )
        check_installed(self.model)  # a packaged short name whose weights are not installed
        check_model_fits(self.backend, self.model)

    def options(self) -> dict[str, Any]:
        """The keyword arguments of the backend (:func:`rubric.llm.registry.make_backend`)."""
        options = self.local.backend_options(None) | dataclasses.asdict(self.api)
        if self.backend == "openai":
            options["temperature"] = self.temperature
            options["max_input_tokens"] = 0  # a server gets whole windows and answers, as before
        elif options["max_new_tokens"] is None:
            options["max_new_tokens"] = LIST_TOKENS
        return options

    def build(self, *, scale_graders: bool = False) -> tuple[Backend, ResponseCache | None]:
        """The backend of the settings (checked first) and its response cache (opened before the
        model loads or the API key is read, so a bad cache file fails first)."""
        from rubric.llm.cache import open_cache
        from rubric.llm.registry import make_backend

        self.check(scale_graders=scale_graders)
        responses = open_cache(self.cache, use=not self.no_cache)
        return make_backend(self.backend, self.model, **self.options()), responses

    def generator(self) -> tuple[TextGenerator, ResponseCache | None]:
        """:meth:`build` for the commands that need text answers (pair graders are refused)."""
        from rubric.llm.base import TextGenerator

        backend, responses = self.build()
        if not isinstance(backend, TextGenerator):  # check() refused it: a broken registry entry
            raise TypeError(f"the {self.backend} backend writes no text")
        return backend, responses


#: Answer length of local models in the commands that ask for lists (``--max-new-tokens``).
LIST_TOKENS = 512


#: Answer length of grading prompts (``--max-new-tokens`` in ``rubric grade``).
GRADE_TOKENS = 32


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
    max_new_tokens: int | None = None  # None: the command's default (grading: 32)
    num_beams: int = 1
    attention: str = "auto"
    compile_encoder: bool = False
    compute_type: str = "auto"
    threads: int = 0

    def backend_options(self, answer_tokens: int | None = GRADE_TOKENS) -> dict[str, Any]:
        """The settings as the backends take them; the attention, compute-type and thread settings
        only when chosen, so a backend without them refuses them only when they are asked for.
        ``answer_tokens``: the answer length when ``max_new_tokens`` is not set."""
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
            "max_new_tokens": answer_tokens if self.max_new_tokens is None else self.max_new_tokens,
            "num_beams": self.num_beams,
        }
