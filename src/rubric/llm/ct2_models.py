"""CTranslate2 models: the compute-type and device checks, and the conversion cache.

A CTranslate2 backend runs a *converted* copy of a transformers model. Converting takes seconds to
minutes (the converter loads the model with transformers and writes ``model.bin``), so it happens
once per (model, revision, compute type) into ``models_dir()/ct2/``; later runs load the folder.
The conversion writes into a temporary sibling folder that is renamed when complete, so a killed
or failed conversion never leaves a half-written model under the final name, and of two
concurrent conversions the first to finish wins.

The revision in the key: a hub model's snapshot commit (its folder name in the hub cache); a
local folder's content stamp (name, size and modification time of each file); a packaged model's
folder (which names its package version).

transformers 5 and CTranslate2's converter (4.8) disagree on one point, worked around here:
transformers 5 always sets ``T5Config.tie_word_embeddings`` to True and keeps the output scaling
``d_model**-0.5`` in ``scale_decoder_outputs``; the converter reads the former, so it would scale
FLAN-T5's outputs (and a tiny test T5's) when transformers does not. Logits scaled by a constant
keep their argmax, but not their softmax (the grades' probabilities), so the converter is given
``scale_decoder_outputs`` as ``tie_word_embeddings``. A tokenizer without a begin-of-sequence token
(a word-level test tokenizer) gets its end token in that role, which the converter requires for
decoder-only models and our prompts never use.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from rubric.errors import UserError, one_of
from rubric.llm.cache_dir import models_dir
from rubric.llm.packaged import resolve_model

#: What ``--compute-type`` accepts; ``auto``: float32 on CPU (grades equal transformers'), float16 on CUDA.
log = logging.getLogger(__name__)
COMPUTE_TYPES = ("auto", "float32", "int8", "int8_float16", "float16")
AUTO_COMPUTE = {"cpu": "float32", "cuda": "float16"}
MODEL_FILE = "model.bin"
HUB_FILES = ["*.json", "*.safetensors", "*.model", "*.txt", "*.tiktoken"]


def require_ctranslate2(backend: str) -> ModuleType:
    """``import ctranslate2``, or one line naming the extra that installs it."""
    from rubric.extras import load

    return load("ct2", "ctranslate2", f"{{backend}} {backend}")


#: The CUDA libraries the CTranslate2 4.x wheels open at their first matrix product (built for
#: CUDA 12). A machine with CUDA 13 only sees the GPU but fails there, mid-run; checked up front.
CUDA_LIBRARIES = ("libcublas.so.12", "libcublasLt.so.12")


def missing_cuda_library(names: tuple[str, ...] = CUDA_LIBRARIES) -> str | None:
    """The first of ``names`` that cannot be loaded, with the loader's reason; None when all load.

    A library not on the loader's path is also looked for in the ``nvidia-cublas-cu12`` pip
    package and, when found there, loaded into the process (global symbols), so that
    CTranslate2's own ``dlopen`` by name finds it already loaded."""
    import ctypes

    for name in names:
        try:
            ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            continue
        except OSError as e:
            reason = str(e).split(":")[-1].strip() or "not found"
        candidate = _pip_cuda_library(name)
        if candidate is None:
            return f"{name}: {reason}"
        try:
            ctypes.CDLL(str(candidate), mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            return f"{candidate}: {str(e).split(':')[-1].strip()}"
    return None


def _pip_cuda_library(name: str) -> Path | None:
    """``name`` inside the nvidia-cublas-cu12 package's lib folder, when that package is installed."""
    import importlib.util

    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root) / "cublas" / "lib" / name
        if path.exists():
            return path
    return None


def resolve_ct2_device(
    ct2: ModuleType, device: str, libraries: tuple[str, ...] = CUDA_LIBRARIES
) -> tuple[str, int]:
    """``auto`` -> cuda when CTranslate2 sees a GPU and its CUDA libraries load, else cpu (with a
    warning naming the missing library); ``cuda:N`` -> ("cuda", N), or one line saying why not."""
    kind, _, index = device.partition(":")
    if kind not in ("auto", "cpu", "cuda") or (index and (kind != "cuda" or not index.isdigit())):
        raise UserError(f"{{device}}: expected one of auto, cpu, cuda or cuda:N, got {device!r}", "device")
    if kind == "cpu":
        return "cpu", 0
    gpus = ct2.get_cuda_device_count()
    if kind == "cuda" and int(index or 0) >= gpus:
        raise UserError(
            f"{{device}} {device}: CTranslate2 sees {gpus} CUDA device(s) (use {{device}} cpu)", "device"
        )
    missing = missing_cuda_library(libraries) if gpus else None
    if kind == "auto":
        if missing:
            log.warning("CTranslate2 runs on the CPU: %s", cuda_hint(missing))
        return ("cuda", 0) if gpus and not missing else ("cpu", 0)
    if missing:
        raise UserError(f"{{device}} {device}: {cuda_hint(missing)}", "device")
    return kind, int(index or 0)


def cuda_hint(missing: str) -> str:
    return (
        f"CTranslate2's CUDA libraries do not load ({missing}); its wheels are built for CUDA 12: "
        "`pip install nvidia-cublas-cu12` provides them, or use the hf-seq2seq / hf-causal backends"
    )


def resolve_compute_type(ct2: ModuleType, compute_type: str, device: str) -> str:
    """The compute type to convert to and run with; one the device lacks is an error naming the
    ones it has (CTranslate2 would otherwise silently pick another, changing the grades)."""
    one_of("compute_type", compute_type, COMPUTE_TYPES)
    chosen = AUTO_COMPUTE[device] if compute_type == "auto" else compute_type
    supported = sorted(ct2.get_supported_compute_types(device))
    if chosen not in supported:
        raise UserError(
            f"{{compute_type}} {chosen}: this {device.upper()} does not support it "
            f"(it supports {', '.join(supported)})",
            "compute_type",
        )
    return chosen


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "model"


def source_folder(model: str) -> tuple[Path, str]:
    """The local folder of ``model`` (a packaged short name, a folder, or a hub name downloaded
    through the hub cache) and its revision stamp for the cache key."""
    resolved = resolve_model(model)
    folder = Path(resolved)
    if folder.is_dir():
        if not (folder / "config.json").exists():
            raise UserError(
                f"{{model}} {model}: {folder} is a folder but holds no model (no config.json)", "model"
            )
        stamp = hashlib.sha256(str(folder.resolve()).encode())
        for f in sorted(folder.iterdir()):
            if f.is_file():
                st = f.stat()
                stamp.update(f"{f.name}:{st.st_size}:{st.st_mtime_ns}".encode())
        return folder, stamp.hexdigest()[:12]
    if folder.exists():
        raise UserError(f"{{model}} {model}: {folder} is a file, not a model folder", "model")
    from rubric.llm.hf_common import check_hub_reachable, hub_offline

    try:
        snapshot = _snapshot(resolved, local_only=True)  # in the Hugging Face cache: no network
    except Exception:  # noqa: BLE001 - not cached (hub errors have many types)
        if not hub_offline():
            check_hub_reachable(model)  # unreachable: one line now, not a minute of retries
        try:
            snapshot = _snapshot(resolved, local_only=hub_offline())
        except Exception as e:  # noqa: BLE001 - hub errors have many types; each is one line for the user
            first = (str(e).strip().splitlines() or [type(e).__name__])[0]
            hint = " (offline: HF_HUB_OFFLINE is set)" if hub_offline() else ""
            raise UserError(f"{{model}} {model}: cannot download it{hint}: {first}", "model") from None
    return snapshot, snapshot.name[:12]  # the snapshot folder is named by its commit


def _snapshot(name: str, *, local_only: bool) -> Path:
    """The hub snapshot of ``name``: the config, tokenizer and safetensors weights only (a hub repo
    may also hold TF, Flax and pickled copies of the same weights); pickled weights where there
    are no safetensors."""
    from huggingface_hub import snapshot_download

    snapshot = Path(snapshot_download(name, allow_patterns=HUB_FILES, local_files_only=local_only))
    if not any(snapshot.glob("*.safetensors")):
        snapshot = Path(
            snapshot_download(name, allow_patterns=["pytorch_model*.bin"], local_files_only=local_only)
        )
    return snapshot


def converted_model(model: str, compute_type: str) -> tuple[Path, Path]:
    """(the CTranslate2 folder of ``model`` at ``compute_type``, converted on first use; the
    transformers folder it came from, which holds the tokenizer)."""
    source, revision = source_folder(model)
    name = _slug(model if not Path(model).is_dir() else Path(model).resolve().name)
    target = models_dir() / "ct2" / f"{name}-{revision}-{compute_type}"
    if not (target / MODEL_FILE).exists():
        convert(source, target, compute_type, model)
    return target, source


def discard_conversion(target: Path, model: str, reason: str) -> None:
    """Remove a cached conversion that CTranslate2 cannot load (a truncated ``model.bin``, a
    damaged vocabulary), so that it is converted again; first renamed aside, so that a
    half-removed folder is never taken for a conversion."""
    log.warning("the cached conversion %s of %s is damaged (%s); converting it again", target, model, reason)
    aside = target.with_name(f".{target.name}.damaged-{os.getpid()}")
    try:
        os.rename(target, aside)
    except FileNotFoundError:
        return
    except OSError as e:
        raise UserError(
            f"{{model}} {model}: its cached conversion {target} is damaged ({reason}) and cannot be "
            f"removed ({e.strerror or e}); delete it, or set RUBRIC_CACHE_DIR to a writable folder",
            "model",
        ) from None
    shutil.rmtree(aside, ignore_errors=True)


def check_convertible(source: Path, model: str) -> None:
    """A model whose configuration CTranslate2 has no converter for is one line, before the
    "converting" note (the converter's own message lists every configuration it knows)."""
    import ctranslate2
    from ctranslate2.converters import transformers as converters
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(source)
    except (OSError, ValueError, KeyError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise UserError(f"{{model}} {model}: cannot read its config.json: {first}", "model") from None
    known = getattr(converters, "_MODEL_LOADERS", None)  # the converter's registry, where it has one
    name = type(config).__name__
    if isinstance(known, dict) and name not in known:
        raise UserError(
            f"{{model}} {model}: CTranslate2 {ctranslate2.__version__} cannot convert it: "
            f"no converter for {name} (it converts T5, Llama, Qwen, Mistral, GPT-2 and other families)",
            "model",
        )


def convert(source: Path, target: Path, compute_type: str, model: str) -> Path:
    """Convert the transformers folder ``source`` into ``target``, atomically (temporary folder,
    rename); a model the converter cannot take is one line naming ``--model``."""
    from ctranslate2.converters import TransformersConverter

    class Converter(TransformersConverter):
        """The converter with the two transformers-5 workarounds of the module docstring."""

        def load_model(self, model_class: Any, path: str, **kwargs: Any) -> Any:
            net = super().load_model(model_class, path, **kwargs)
            scale = getattr(net.config, "scale_decoder_outputs", None)
            if scale is not None:
                net.config.tie_word_embeddings = bool(scale)
            return net

        def load_tokenizer(self, tokenizer_class: Any, path: str, **kwargs: Any) -> Any:
            tokenizer = super().load_tokenizer(tokenizer_class, path, **kwargs)
            if tokenizer.bos_token is None and tokenizer.eos_token is not None:
                tokenizer.bos_token = tokenizer.eos_token
            return tokenizer

    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    check_convertible(source, model)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    except OSError as e:  # a read-only or full cache
        raise UserError(
            f"{{model}} {model}: cannot convert it into {target.parent} ({e.strerror or e}); set "
            "RUBRIC_CACHE_DIR to a folder this user can write",
            "model",
        ) from None
    log.info("converting %s once to %s (CTranslate2, %s)", model, target, compute_type)
    try:
        try:
            Converter(str(source)).convert(str(tmp), quantization=compute_type, force=True)
        except (ValueError, KeyError, OSError, NotImplementedError, AttributeError, TypeError) as e:
            first = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
            raise UserError(f"{{model}} {model}: CTranslate2 cannot convert it: {first}", "model") from None
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / MODEL_FILE).exists():
                raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return target
