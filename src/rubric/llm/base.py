"""The typed contract between LLM backends and everything that asks them.

Every phase that calls a model (grading, bank generation, nuggetizing, nugget assignment) sends
the same :class:`Request` (user text, optional system text) and gets back, per request, a
:data:`Result`: an :class:`Answer` or a :class:`Failure` with its cause. A backend never raises
because one prompt failed (a server's 400 or 500, a timeout, an unreadable reply, an out-of-memory
batch): that prompt fails alone and every other one is answered. It raises :class:`UserError`
only for what no retry can fix (a wrong API key, an unknown model).

What a backend can do is declared by the abstract classes it inherits, never probed:

- :class:`TextGenerator` -- ``generate(requests)``: free-text answers;
- :class:`ChoiceRater` -- also ``rate(requests, choices)``: the greedy answer plus the first
  token's probabilities over a few one-token answers (0-5 self-ratings, yes/no);
- :class:`PairGrader` -- ``grade_pairs(pairs)``: grades (test item, passage) text pairs without
  a prompt (extractive QA, embedding similarity);
- :class:`ScaleGrader` -- a pair grader whose answers carry a score it can put on any 0..m grade
  scale (embedding similarity), so it grades for direct prompts without reading them;
- :class:`TokenCounter` -- local models with a bounded input length, whose contexts are cut by
  tokens so every prompt fits.

Results are handed over as they arrive through ``on_results`` (per completed API request, per
local batch), so the cache layer (:class:`rubric.llm.cache.CachedBackend`) commits each answer
at once and a kill loses only what was in flight.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

#: Decoding settings a prompt file may fix (its ``[decoding]`` table), as chat-completion APIs
#: name them. A backend applies those it lists in :attr:`TextGenerator.decoding_keys`.
DECODING_KEYS = ("temperature", "top_p", "max_tokens", "frequency_penalty", "presence_penalty")


@dataclass(frozen=True)
class Request:
    """One prompt: the user message and, for chat models, an optional system message.

    ``decoding``: the prompt's own decoding settings as sorted (name, value) pairs, which override
    the backend's; a prompt that was published with its settings (UMBRELA's judge) is then sent
    exactly as it was. Empty for most prompts; part of the request's cache key when not.
    """

    user: str
    system: str | None = None
    decoding: tuple[tuple[str, Any], ...] = ()

    @property
    def text(self) -> str:
        """The prompt as one text, for models without a system role (system text first)."""
        return self.user if not self.system else f"{self.system}\n\n{self.user}"


@dataclass(frozen=True)
class Answer:
    """What the model answered: the greedy text and, where known, more about it.

    ``probabilities``: the first answer token's distribution over the choices of a rating
    prompt (fast paths guarantee that ``text`` equals greedy generation, so parse rules apply
    unchanged). ``score``: the number a prompt-free grader computed before bucketing it into
    the grade in ``text`` (the embedding grader's cosine similarity).
    """

    text: str
    probabilities: dict[str, float] | None = None
    score: float | None = None

    def expected(self, values: dict[str, float]) -> float | None:
        """Probability-weighted value of the choices (e.g. an expected 0-5 grade)."""
        if not self.probabilities:
            return None
        total = sum(self.probabilities.get(c, 0.0) for c in values)
        if total <= 0:
            return None
        return sum(values[c] * self.probabilities.get(c, 0.0) for c in values) / total


@dataclass(frozen=True)
class Failure:
    """A prompt that got no usable answer after the backend's retries, and why.

    ``cause`` is one line for people: ``HTTP 500``, ``timeout after 120s``, ``connection
    error (...)``, ``unreadable reply (...)``, ``RuntimeError: CUDA out of memory``.
    ``retryable`` is False where asking again cannot help (a 400: the request itself is bad).
    """

    cause: str
    retryable: bool = True


Result = Answer | Failure
#: Receives ``(index into the call's requests, result)`` pairs as soon as they are known.
OnResults = Callable[[Sequence[tuple[int, Result]]], None]


@dataclass
class BackendStats:
    """What a run reports at the end (``LLM M: N prompts, C from cache, R retries, F failed``).

    The cache layer counts prompts, cache hits and failures; the backend its own retries and
    fast-rating fallbacks (rows generated to the end).
    """

    prompts: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    fallbacks: int = 0
    damaged: int = 0  # cached values that could not be read back: asked again

    def summary(self, model: str) -> str:
        """One line of what ``model`` was asked, every retry and failure counted."""
        return (
            f"LLM {model}: {self.prompts} prompts, {self.cached} from cache, {self.retries} retries, "
            f"{self.failures} failed"
            + (f", {self.damaged} damaged cache values asked again" if self.damaged else "")
        )


class Backend(ABC):
    """What every backend has: a registry name, a model name, its options and its counters."""

    name: ClassVar[str]  # registry name, e.g. "hf-seq2seq", "openai"

    def __init__(self, model: str):
        self.model = model  # as recorded in the ``llm`` field of grades and banks
        self.stats = BackendStats()

    @abstractmethod
    def options(self) -> dict[str, Any]:
        """Options that change answers: recorded as ``llm_options`` and part of cache keys."""

    def kernel_summary(self) -> str:
        """One line on how the model ran (attention path, padding share, compile warm-up) for the
        run summary; empty where there is nothing to say (API backends)."""
        return ""


class TextGenerator(Backend):
    """A backend that answers prompts with free text."""

    #: Whether the model has a system role; others read :attr:`Request.text`.
    supports_system: bool = False
    #: The per-request decoding settings (:data:`DECODING_KEYS`) this backend applies; a prompt's
    #: other settings are not sent, recorded or keyed (local models decode greedily).
    decoding_keys: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def generate(self, requests: Sequence[Request], on_results: OnResults | None = None) -> list[Result]:
        """One result per request, in order; each also goes to ``on_results`` when known."""


class ChoiceRater(TextGenerator):
    """A generator that can also read a rating prompt's answer off the first decoding step."""

    @abstractmethod
    def rate(
        self, requests: Sequence[Request], choices: Sequence[str], on_results: OnResults | None = None
    ) -> list[Result]:
        """One result per request: the greedy answer with probabilities over ``choices``."""


class PairGrader(Backend):
    """A grader that needs no prompt: it scores (item text, passage text) pairs directly.

    The engine passes the test item's text (or the query, for direct grading) and the passage;
    each answer's text is what the parse rules read (the embedding grader's 0-5 digit, the QA
    model's span), so every downstream phase applies unchanged.
    """

    @abstractmethod
    def grade_pairs(
        self, pairs: Sequence[tuple[str, str]], on_results: OnResults | None = None
    ) -> list[Result]:
        """One result per pair, in order."""


class ScaleGrader(PairGrader):
    """A pair grader whose score can be put on any 0..m scale: it can stand in for a direct
    prompt (LLMJudge's 0-3, Thomas' 0-2, Sun's yes/no) without reading it.

    Why a type of its own: a direct prompt's parser reads the prompt's own answer format, not a
    pair grader's answer (an embedding bucket ``"4"`` is out of LLMJudge's 0-3 scale; any digit
    is "no" to Sun's yes/no parser), so the engine asks the grader for the grade on the prompt's
    scale instead of parsing its answer. Pair graders without it (extractive QA) cannot serve
    direct prompts and are refused before any model loads.
    """

    @abstractmethod
    def grade_on_scale(self, answer: Answer, max_grade: int) -> int:
        """The grade on the scale 0..``max_grade`` of one of this grader's answers."""


class TokenCounter(ABC):
    """A model with a bounded input: the engine cuts contexts by its tokens so prompts fit."""

    @property
    @abstractmethod
    def max_input_tokens(self) -> int:
        """The longest input (in tokens) the model reads."""

    @abstractmethod
    def token_lengths(self, requests: Sequence[Request]) -> list[int]:
        """Input length in tokens of each request as the model sees it (templates included)."""

    @abstractmethod
    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span of each token of ``text`` (to cut a context at a token boundary)."""

    @abstractmethod
    def encode(self, text: str) -> list[int]:
        """Token ids of ``text`` alone, no special tokens (the original tool's cutting counts them)."""

    @abstractmethod
    def decode(self, ids: Sequence[int]) -> str:
        """The text of token ids, as the tokenizer's ``decode`` gives it."""

    @property
    @abstractmethod
    def special_tokens(self) -> int:
        """Special tokens the tokenizer adds to one text (T5: 1, the end of sequence)."""


class LosslessTokens(TokenCounter):
    """A token counter whose tokenizer makes at most one token per UTF-8 byte and whose decoding
    gives the text back (a byte-level BPE, GPT-2's): a text of few enough bytes fits uncounted."""


def deliver(on_results: OnResults | None, results: Sequence[tuple[int, Result]]) -> None:
    """Hand ``results`` to ``on_results`` when a caller listens."""
    if on_results is not None and results:
        on_results(results)


def failure_of(error: BaseException) -> Failure:
    """The failure of a model call that raised (out of memory, a CUDA or tokenizer error)."""
    text = str(error).strip().splitlines()
    return Failure(f"{type(error).__name__}: {text[0] if text else ''}".rstrip(": "))
