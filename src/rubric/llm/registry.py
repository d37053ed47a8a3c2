"""Backends by name: ``--backend NAME`` -> class, imported only when used.

The registry is a plain dict of ``name -> "module:Class"`` strings so adding a backend is one
line and ``rubric --help`` never imports torch. The constructor contract every backend follows::

    Cls.from_options(model, *, device="auto", dtype="auto", batch_size=0, token_budget=0,
                     max_input_tokens=512, max_new_tokens=32, num_beams=1, **backend_specific)

A backend uses the keywords it understands and ignores the others (``None`` means "backend
default"), so the CLI can pass every common option to every backend. What the object can do is
declared by the classes of :mod:`rubric.llm.base` it inherits (``TextGenerator``,
``ChoiceRater``, ``PairGrader``, ``TokenCounter``).

A model built for one backend fails in another with an error that says little (transformers'
"Unrecognized configuration class"), so :func:`backend_for_model` tells which backend a model
needs, from the packaged short names and, for a local folder, its ``config.json``.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.extras import require

BACKENDS: dict[str, str] = {
    "hf-seq2seq": "rubric.llm.hf_seq2seq:HFSeq2Seq",
    "hf-causal": "rubric.llm.hf_causal:HFCausal",
    "hf-qa": "rubric.llm.hf_qa:HFQuestionAnswering",
    "openai": "rubric.llm.openai_chat:OpenAIChat",
    "embedding": "rubric.llm.embedding:EmbeddingGrader",
    "ct2-seq2seq": "rubric.llm.ct2_seq2seq:CT2Seq2Seq",
    "ct2-causal": "rubric.llm.ct2_causal:CT2Causal",
}
#: One line per backend for ``--help``.
DESCRIPTIONS: dict[str, str] = {
    "hf-seq2seq": "local T5 / FLAN-T5",
    "hf-causal": "local decoder-only LMs",
    "hf-qa": "local extractive QA, no prompt",
    "openai": "any OpenAI-compatible server",
    "embedding": "local sentence-embedding similarity, no prompt",
    "ct2-seq2seq": "T5 / FLAN-T5 in CTranslate2 (the ct2 extra)",
    "ct2-causal": "decoder-only LMs in CTranslate2 (the ct2 extra)",
}
#: The optional extra (``pip install 'rubric-workbench[hf]'``) each backend needs; openai is core.
BACKEND_EXTRAS: dict[str, str] = {
    "hf-seq2seq": "hf",
    "hf-causal": "hf",
    "hf-qa": "hf",
    "embedding": "hf",
    "ct2-seq2seq": "ct2",
    "ct2-causal": "ct2",
}
#: Backends that run the models of another backend (converted): a model fits either.
SAME_MODELS: dict[str, str] = {"ct2-seq2seq": "hf-seq2seq", "ct2-causal": "hf-causal"}
#: The model a backend uses without ``--model``.
DEFAULT_MODELS: dict[str, str] = {"hf-seq2seq": "google/flan-t5-large", "embedding": "minilm-l6"}
#: Packaged short names (rubric.llm.packaged) and the backend each is made for.
PACKAGED_BACKENDS: dict[str, str] = {
    "smollm2-135m": "hf-causal",
    "minilm-l6": "embedding",
    "sentence-transformers/all-MiniLM-L6-v2": "embedding",
}


def backends_help() -> str:
    """``name (what)`` for every registered backend, for option help texts."""
    return ", ".join(f"{name} ({DESCRIPTIONS.get(name, name)})" for name in BACKENDS)


def check_backend(name: str) -> str:
    """The import target registered as ``name``; an unknown name, or one whose extra is not
    installed, is an error (listing the known ones; naming the pip command). Imports nothing, so
    option checks call it before any file is read."""
    target = BACKENDS.get(name)
    if target is None:
        raise UserError(
            f"{{backend}}: unknown backend {name!r}; known: {', '.join(sorted(BACKENDS))}", "backend"
        )
    if name in BACKEND_EXTRAS:
        require(BACKEND_EXTRAS[name], f"{{backend}} {name}")
    return target


def backend_class(name: str) -> Any:
    """The class registered as ``name`` (checked by :func:`check_backend`)."""
    target = check_backend(name)
    module, _, cls = target.partition(":")
    return getattr(importlib.import_module(module), cls)


def default_model(name: str) -> str:
    """The default model of backend ``name``; backends without one need ``--model``."""
    if name in DEFAULT_MODELS:
        return DEFAULT_MODELS[name]
    backend_class(name)  # an unknown backend is the first problem to report
    raise UserError(
        f"{{model}}: required with {{backend}} {name} (it has no default model)", "model", "backend"
    )


def backend_for_model(model: str) -> str | None:
    """The local backend a model needs, where that can be told without loading it: packaged short
    names, and folders whose ``config.json`` names the architecture. None = cannot tell."""
    if model in PACKAGED_BACKENDS:
        return PACKAGED_BACKENDS[model]
    config = Path(model) / "config.json"
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    architectures = data.get("architectures") if isinstance(data, dict) else None
    if not isinstance(architectures, list) or not architectures or not isinstance(architectures[0], str):
        return None
    arch = architectures[0]
    if arch.endswith("ForQuestionAnswering"):
        return "hf-qa"
    if arch.endswith("ForConditionalGeneration") and data.get("is_encoder_decoder"):
        return "hf-seq2seq"
    if arch.endswith(("ForCausalLM", "LMHeadModel")):
        return "hf-causal"
    if arch.endswith("Model") and (Path(model) / "modules.json").exists():
        return "embedding"  # a sentence-transformers folder
    return None


def check_model_fits(name: str, model: str) -> None:
    """A model made for another local backend is an error that names the backend it needs."""
    wanted = backend_for_model(model)
    if name in BACKENDS and name != "openai" and wanted is not None and wanted != SAME_MODELS.get(name, name):
        if name in SAME_MODELS:
            wanted = next((ct2 for ct2, hf in SAME_MODELS.items() if hf == wanted), wanted)
        raise UserError(
            f"{{model}} {model}: a model for {{backend}} {wanted}, not {name}; add {{backend}} {wanted}",
            "model",
            "backend",
        )


def check_installed_model(name: str, model: str) -> None:
    """A packaged model whose weights package is not installed is an error naming the pip command
    (checked with the options); but when the model is made for another backend than ``name``,
    that mistake is named instead, as it is where the package is installed (the fit is otherwise
    checked once the prompts are, :func:`check_model_fits`)."""
    from rubric.llm.packaged import check_installed

    try:
        check_installed(model)
    except UserError:
        check_model_fits(name, model)
        raise


def make_backend(name: str, model: str, **options: Any) -> Any:
    """Construct backend ``name`` for ``model`` following the contract above."""
    cls = backend_class(name)
    check_model_fits(name, model)
    return cls.from_options(model, **options)


#: The smallest value of each local-model option (``--batch-size 0`` is auto, ``--token-budget 0`` off).
MINIMA = {
    "batch_size": 0,
    "token_budget": 0,
    "threads": 0,
    "max_input_tokens": 16,
    "max_new_tokens": 1,
    "num_beams": 1,
}
API_OPTIONS = ("concurrency", "rpm", "max_retries", "timeout", "retry_base")


def check_backend_options(options: dict[str, Any], backend: str | None = None) -> None:
    """Range checks of the options every grading backend is given (the local ones and those of
    the OpenAI-compatible client), each naming its command-line option, before any work; the
    openai backend also takes ``max_input_tokens`` 0 (no limit: whole passages)."""
    from rubric.llm.openai_chat import check_api_options

    for key, minimum in MINIMA.items():
        value = options.get(key)
        if key == "max_input_tokens" and value == 0 and backend == "openai":
            continue
        if value is not None and value < minimum:
            also = " (0, whole passages: with the openai backend only)" if key == "max_input_tokens" else ""
            raise UserError(f"{{{key}}}: must be at least {minimum}, got {value}{also}", key)
    check_api_options(**{k: options[k] for k in API_OPTIONS if options.get(k) is not None})
