"""rubric-workbench: evaluate retrieval, generation and RAG systems with LLM-graded rubrics.

``import rubric`` loads nothing heavy: :func:`grade` (:mod:`rubric.grading.api`) is imported on
first use, and torch, transformers and openai only when a backend is built.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS = {"grade": "rubric.grading.api", "Graded": "rubric.grading.api"}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rubric' has no attribute {name!r}")
