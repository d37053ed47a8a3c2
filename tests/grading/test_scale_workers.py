"""Worker device lists: --devices / --workers -> one device per process."""

from __future__ import annotations

import pytest

from rubric.errors import UserError
from rubric.grading.engine import GradeStats, PairFailure
from rubric.grading.workers import parse_devices, parts_folder


def test_parse_devices():
    assert parse_devices(None, 0, "auto") is None
    assert parse_devices("cpu, cpu", 0, "auto") == ["cpu", "cpu"]
    assert parse_devices(None, 3, "cpu") == ["cpu", "cpu", "cpu"]
    with pytest.raises(UserError, match="^devices and workers"):
        parse_devices("cpu", 2, "cpu")
    with pytest.raises(UserError, match="^device: expected one of"):
        parse_devices("cpu,gpu:0", 0, "cpu")
    with pytest.raises(UserError, match="^device: expected one of"):
        parse_devices("cpu:1", 0, "cpu")


def test_parse_devices_cuda_without_gpu():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(UserError, match="no CUDA device"):
        parse_devices("cuda:0,cuda:1", 0, "cpu")
    with pytest.raises(UserError, match="no CUDA device"):
        parse_devices(None, 2, "cuda")


def test_stats_add_up(tmp_path):
    total = GradeStats()
    a = PairFailure("q1", "d1", "q1/x", "P", "HTTP 500")
    total.add(GradeStats(queries=2, pairs=10, cached=3, failures=1, failed=[a], resumed_queries=1))
    total.add(GradeStats(queries=1, pairs=5, verifications=4, fallbacks=2, queries_without_items=1))
    got = (total.queries, total.pairs, total.cached, total.failures, total.failed, total.verifications)
    assert got == (3, 15, 3, 1, [a], 4)
    assert (total.fallbacks, total.resumed_queries, total.queries_without_items) == (2, 1, 1)
    assert parts_folder(tmp_path / "g.jsonl.gz") == tmp_path / "g.jsonl.gz.workers"


def test_cpu_workers_share_the_cores(monkeypatch):
    from rubric.grading.workers import cpu_threads

    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 16)
    assert cpu_threads(["cpu", "cpu", "cpu", "cpu"]) == 4
    assert cpu_threads(["cuda:0", "cuda:1"]) == 0
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    assert cpu_threads(["cpu"] * 3) == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert cpu_threads(["cpu", "cpu"]) == 0  # the user's setting wins
