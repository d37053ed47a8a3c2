"""Backends by name: ``--backend NAME`` -> class, imported only when used.

The registry is a plain dict of ``name -> "module:Class"`` strings so adding a backend is one
line and ``rubric --help`` never imports torch. The constructor contract every backend follows::

    Cls.from_options(model, *, device="auto", dtype="auto", batch_size=0, token_budget=0,
                     max_input_tokens=512, max_new_tokens=32, num_beams=1, **backend_specific)

A backend uses the keywords it understands and ignores the others (``None`` means "backend
default"), so the CLI can pass every common option to every backend. The object it returns
implements :class:`~rubric.llm.base.Backend` (``generate``; ``rate`` for exact fast rating) or
:class:`~rubric.llm.base.PairGrader` (``grade_pairs``: no prompt text, e.g. extractive QA,
embeddings). Optional extras the grader uses when present: ``max_input_tokens``,
``token_lengths(prompts)`` and ``token_offsets(text)`` (to cut contexts by tokens),
``with_system(text)`` (system message of chat models) and ``fallbacks`` (a counter).
"""

from __future__ import annotations

import importlib
from typing import Any

from rubric.errors import UserError

BACKENDS: dict[str, str] = {
    "hf-seq2seq": "rubric.llm.hf_seq2seq:HFSeq2Seq",
    "hf-causal": "rubric.llm.hf_causal:HFCausal",
    "hf-qa": "rubric.llm.hf_qa:HFQuestionAnswering",
    "openai": "rubric.llm.openai_chat:OpenAIChat",
    "embedding": "rubric.llm.embedding:EmbeddingGrader",
}


def backend_class(name: str) -> Any:
    """The class registered as ``name``; an unknown name is an error listing the known ones."""
    target = BACKENDS.get(name)
    if target is None:
        raise UserError(f"--backend: unknown backend {name!r}; known: {', '.join(sorted(BACKENDS))}")
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def make_backend(name: str, model: str, **options: Any) -> Any:
    """Construct backend ``name`` for ``model`` following the contract above."""
    return backend_class(name).from_options(model, **options)
