"""`evaluate estimate`'s intervals on real TREC DL 2019 and 2020 data, with the NIST qrels as the
truth and each released phase-3 LLM qrels file as the LLM labels (benchmarks/validate_estimate.py
computes the same with 1,000 draws for docs/validation.md; 300 here keep the test short)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _script():
    path = ROOT / "benchmarks" / "validate_estimate.py"
    spec = importlib.util.spec_from_file_location("validate_estimate", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["validate_estimate"] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("collection", ["dl19", "dl20"])
def test_coverage_and_width(shared, collection):
    data = shared("anserini-tools", "qrels.dl19-passage.txt").parents[1]
    script = _script()
    c = getattr(script, collection)(data)
    assert len(c.llm) == 8
    lines = script.rows(c, draws=300, seed=1)
    for x in lines:
        what = f"{c.name} {x.qrels} {x.measure} n={x.n}"
        if x.n in (10, 20):
            assert x.cov_ppipp[1] >= 0.92, what
        assert x.width_ppipp <= 1.06 * x.width_human, what
