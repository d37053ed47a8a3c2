"""The one folder of everything the workbench caches: ``responses.sqlite`` and ``models/``.

``$RUBRIC_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/rubric-workbench`` (``~/.cache/...``).
``$RUBRIC_CACHE`` (the response cache's file, from before the two were one setting) still works
for the response cache, with a one-line warning, until 0.3.0 removes it.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

log = logging.getLogger(__name__)
RESPONSES = "responses.sqlite"


def cache_dir() -> Path:
    """``$RUBRIC_CACHE_DIR``, or ``rubric-workbench`` under the XDG cache folder."""
    if os.environ.get("RUBRIC_CACHE_DIR"):
        return Path(os.environ["RUBRIC_CACHE_DIR"])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "rubric-workbench"


def responses_path() -> Path:
    """The default response cache: ``cache_dir()/responses.sqlite``; the deprecated
    ``$RUBRIC_CACHE`` (a file) is used when ``$RUBRIC_CACHE_DIR`` is not set, with a warning."""
    legacy = os.environ.get("RUBRIC_CACHE")
    if legacy and not os.environ.get("RUBRIC_CACHE_DIR"):
        log.warning(
            "RUBRIC_CACHE is deprecated and removed in 0.3.0; set RUBRIC_CACHE_DIR to the folder of %s "
            "and models/ (using %s for now)",
            RESPONSES,
            legacy,
        )
        return Path(legacy)
    return cache_dir() / RESPONSES


def models_dir() -> Path:
    """Where converted packaged models live: ``cache_dir()/models``."""
    return cache_dir() / "models"
