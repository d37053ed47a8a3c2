"""Helpers shared by the test modules, importable as a package (``tests`` is on ``sys.path``).

- :mod:`helpers.cli`: the CLI in-process (most tests) or as a real subprocess (smoke tests,
  signals, pipes), with the exit-code mapping of the real command and the no-traceback check;
- :mod:`helpers.tiny_models`: tiny random HuggingFace models built offline;
- :mod:`helpers.openai_server`: an OpenAI-compatible HTTP server on 127.0.0.1;
- :mod:`helpers.graded_fixture`: a hand-made graded file and bank;
- :mod:`helpers.faults`: hostile inputs and file-system faults;
- :mod:`helpers.baseline_cli`: the CLI of an older commit, to compare outputs byte for byte;
- :mod:`helpers.cdp`: headless Chromium driven over the DevTools protocol.

Data files the tests read live under ``tests/fixtures/``.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
TINY = FIXTURES / "tiny"
"""The tiny TREC example: queries, collection, qrels, two runs and a RAG file."""
BANKS = FIXTURES / "banks"
"""A question bank and a nugget bank for the tiny example."""
SHARED_DATA = ROOT.parent / "shared" / "data"
