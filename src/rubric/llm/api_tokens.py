"""Token counts of prompts sent to a chat API, so API backends honour ``max_input_tokens``.

A chat server tokenises with its own model's tokenizer, which the client does not have; the
original tool counted with GPT-2's (byte-level BPE) and cut contexts to 512 of its tokens, and so
does this by default. Any tokenizer the ``tokenizers`` library reads can count instead (a folder
with ``tokenizer.json``, the file itself, or a hub name in the local cache); ``RUBRIC_API_TOKENIZER``
names the default one of a machine that has no hub access (a local copy of GPT-2's). The tokenizer loads
only when a prompt might be over the limit: a byte-level tokenizer makes at most one token per
UTF-8 byte, so a prompt of at most ``max_input_tokens`` bytes fits without counting.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.llm.base import LosslessTokens, Request

#: The original tool's tokenizer for chat APIs (its ChatCompletionsPipeline: GPT-2's).
DEFAULT_API_TOKENIZER = "openai-community/gpt2"


def load_tokenizer(name: str) -> Any:
    """A ``tokenizers.Tokenizer`` from a folder holding ``tokenizer.json``, that file, or a hub
    name already in the local cache (the default: ``RUBRIC_API_TOKENIZER`` where set); a clear
    error naming the option otherwise."""
    if name == DEFAULT_API_TOKENIZER:
        name = os.environ.get("RUBRIC_API_TOKENIZER") or name
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UserError(
            "{api_tokenizer}: counting tokens for an API backend needs the tokenizers package "
            "(pip install tokenizers); {max_input_tokens} 0 sends whole passages",
            "api_tokenizer",
            "max_input_tokens",
        ) from None
    path = Path(name)
    file = path / "tokenizer.json" if path.is_dir() else path
    try:
        if file.is_file():
            return Tokenizer.from_file(str(file))
        return Tokenizer.from_pretrained(name)
    except Exception as e:  # tokenizers raises plain Exceptions for files and hub look-ups
        why = "not a file or folder, nor in the local hub cache" if not path.exists() else str(e)[:200]
        raise UserError(
            f"{{api_tokenizer}} {name}: cannot load a tokenizer ({why}); give a folder with "
            "tokenizer.json (or set RUBRIC_API_TOKENIZER), or {max_input_tokens} 0 to send whole passages",
            "api_tokenizer",
            "max_input_tokens",
        ) from None


class ApiTokens(LosslessTokens):
    """Token counting for a chat-API backend; needs ``self.input_limit`` (0: no limit) and
    ``self.api_tokenizer`` (a name for :func:`load_tokenizer`)."""

    input_limit: int
    api_tokenizer: str
    _tokenizer: Any = None

    @property
    def max_input_tokens(self) -> int:
        return self.input_limit

    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.api_tokenizer)
        return self._tokenizer

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return str(self.tokenizer.decode(list(ids), skip_special_tokens=False))

    @property
    def special_tokens(self) -> int:
        return 0  # the server applies its own chat template; the original counted none (GPT-2)

    def token_lengths(self, requests: Sequence[Request]) -> list[int]:
        """Tokens of the system message and the user message; a request of at most
        ``max_input_tokens`` UTF-8 bytes is given its byte count (an upper bound) uncounted."""
        out = []
        for r in requests:
            texts = [t for t in (r.system, r.user) if t]
            size = sum(len(t.encode("utf-8")) for t in texts)
            out.append(size if size <= self.input_limit else sum(len(self.encode(t)) for t in texts))
        return out

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        return [tuple(o) for o in self.tokenizer.encode(text, add_special_tokens=False).offsets]

    def over_limit(self, request: Request) -> int | None:
        """The request's token count where it is over ``max_input_tokens`` (0: no limit), else None."""
        if not self.input_limit:
            return None
        n = self.token_lengths([request])[0]
        return n if n > self.input_limit else None
