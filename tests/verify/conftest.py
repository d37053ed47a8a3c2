"""Fixtures of the verify tests: the hand-made graded file of ``graded_fixture.py``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest


def load_fixture_module():
    """``graded_fixture`` by path (tests run with --import-mode=importlib, no package imports)."""
    name = "rubric_verify_graded_fixture"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("graded_fixture.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def fx():
    return load_fixture_module()


@pytest.fixture
def graded(tmp_path, fx) -> Path:
    return fx.write_graded(tmp_path / "graded.jsonl.gz")
