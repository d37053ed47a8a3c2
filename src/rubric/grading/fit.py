"""Cut the context so a whole prompt fits the model's input length, by tokens.

The papers put the question (or nugget, or query) before the context and truncate the context so
the prompt fits FLAN-T5's 512 tokens; cutting the *prompt* instead would drop its end ("Rating:"),
the part the model needs most. Token counts come from the backend's own tokenizer (chat template
included), and the cut falls on a token boundary of the context, so no word is split.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from rubric.llm.base import Backend, Request, TokenCounter

Render = Callable[[str], str]
MAX_ROUNDS = 6


def fit_prompts(
    backend: Backend, jobs: Sequence[tuple[Render, str]], system: str | None = None
) -> list[Request]:
    """A request ``render(context)`` (with ``system``) per (render, context), with contexts cut so
    the request fits the backend's ``max_input_tokens``.

    Backends that count no tokens (remote APIs) get the full context. Tokenisation is not
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
