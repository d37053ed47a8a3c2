"""Makes ``faults.py`` importable as ``hostile_faults`` by the test modules of this folder.

Tests run with ``--import-mode=importlib``, which puts no test folder on ``sys.path``; pytest
imports this file before it collects the modules next to it.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if "hostile_faults" not in sys.modules:
    _spec = importlib.util.spec_from_file_location("hostile_faults", Path(__file__).with_name("faults.py"))
    sys.modules["hostile_faults"] = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(sys.modules["hostile_faults"])
