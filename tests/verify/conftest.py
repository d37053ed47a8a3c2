"""Fixtures of the verify tests: the hand-made graded file of :mod:`helpers.graded_fixture`."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import graded_fixture


@pytest.fixture
def fx():
    return graded_fixture


@pytest.fixture
def graded(tmp_path) -> Path:
    return graded_fixture.write_graded(tmp_path / "graded.jsonl.gz")
