"""Cut the context so a whole prompt fits the model's input length, by tokens.

The papers put the question (or nugget, or query) before the context and truncate the context so
the prompt fits FLAN-T5's 512 tokens; cutting the *prompt* instead would drop its end ("Rating:"),
the part the model needs most. Token counts come from the backend's own tokenizer (chat template
included), and the cut falls on a token boundary of the context, so no word is split.

The original tool's prompt classes (a prompt file's ``context_part``) are cut by its own rule
(:func:`cut_as_original`): the text before the context part and the context part are tokenised
apart, the context part keeps ``limit - question tokens - special tokens - 5`` tokens (the limit
less the system message's tokens where one is sent), and the prompt is the decoded
concatenation. On T5 the decoding puts a word boundary between the two ("...? context: ...").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rubric.llm.base import Backend, LosslessTokens, Request, TokenCounter

Render = Callable[[str], str]
MAX_ROUNDS = 6
#: The original's margin: its cut leaves this many tokens unused "for good measure".
ORIGINAL_MARGIN = 5


def _bytes(*texts: str | None) -> int:
    return sum(len(t.encode("utf-8")) for t in texts if t)


def cuts_as_original(backend: Backend) -> bool:
    """Whether ``backend`` counts tokens and has a limit (``--max-input-tokens 0`` on an API
    backend: whole passages)."""
    return isinstance(backend, TokenCounter) and bool(backend.max_input_tokens)


def cut_as_original(
    backend: TokenCounter, parts: Sequence[tuple[str, str]], system: str | None
) -> list[Request]:
    """A request per (text before the context part, context part), cut by the original tool's
    rule: both tokenised apart, the context part cut to ``limit - len(question) - special tokens
    - 5`` tokens, the prompt the decoded concatenation of the two (on T5 "context:" then starts a
    word of its own, as the original's input had it). A system message, where one is sent, takes
    its tokens (special tokens included) off the limit first, as the original's chat pipeline
    did; on a local model, so does whatever it reads besides the prompt (a chat template), so
    that the end of its input is never cut. A question that leaves no room keeps no context (the
    original raised): the backend then meets a prompt over its limit (an API backend fails it
    without sending it).
    """
    lossless = isinstance(backend, LosslessTokens)  # decoding is exact: short prompts need no count
    limit: int | None = None
    encoded: dict[str, list[int]] = {}

    def ids(text: str) -> list[int]:
        if text not in encoded:
            encoded[text] = backend.encode(text)
        return encoded[text]

    out = []
    for question, context in parts:
        if lossless and _bytes(system, question, context) + ORIGINAL_MARGIN <= backend.max_input_tokens:
            out.append(Request(question + context, system))
            continue
        if limit is None:
            if lossless:  # chat APIs: the system message's tokens, as the original's chat pipeline
                overhead = len(ids(system)) + backend.special_tokens if system else 0
            else:  # local models: what they read besides the prompt (a system text, a chat template)
                overhead = backend.token_lengths([Request("", system)])[0] - backend.special_tokens
            limit = backend.max_input_tokens - overhead
        head = ids(question)
        room = limit - len(head) - backend.special_tokens - ORIGINAL_MARGIN
        out.append(Request(backend.decode(head + ids(context)[: max(room, 0)]), system))
    return out


def fit_prompts(
    backend: Backend, jobs: Sequence[tuple[Render, str]], system: str | None = None
) -> list[Request]:
    """A request ``render(context)`` (with ``system``) per (render, context), with contexts cut so
    the request fits the backend's ``max_input_tokens``.

    Backends that count no tokens, or have no limit (an API backend with ``max_input_tokens`` 0),
    get the full context. Tokenisation is not
    exactly additive at the seam between template and context, so the cut is checked and
    tightened until the prompt fits (a few rounds at most; the context may end up empty).
    """
    if not isinstance(backend, TokenCounter) or not backend.max_input_tokens:
        return [Request(render(context), system) for render, context in jobs]
    limit = int(backend.max_input_tokens)
    prompts = [render(context) for render, context in jobs]
    keep: dict[int, int] = {}  # job index -> context tokens kept
    offsets: dict[str, list[tuple[int, int]]] = {}
    todo = list(range(len(jobs)))
    for _ in range(MAX_ROUNDS):
        if not todo:
            break
        lengths = backend.token_lengths([Request(prompts[i], system) for i in todo])
        over = [(i, n - limit) for i, n in zip(todo, lengths, strict=True) if n > limit]
        if not over:
            break
        todo = []
        for i, excess in over:
            render, context = jobs[i]
            if context not in offsets:
                offsets[context] = backend.token_offsets(context)
            spans = offsets[context]
            kept = max(0, keep.get(i, len(spans)) - excess)
            if kept == keep.get(i):
                kept = max(0, kept - 1)
            keep[i] = kept
            prompts[i] = render(context[: spans[kept - 1][1]] if kept > 0 else "")
            if kept > 0:
                todo.append(i)
    return [Request(p, system) for p in prompts]
