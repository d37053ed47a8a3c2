"""Figures: rendered for real (matplotlib Agg), checked by their pixels and by parsing the SVG."""

from __future__ import annotations

import random
import struct
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

pytest.importorskip("matplotlib")

from rubric.evaluate.meta import meta_evaluate  # noqa: E402
from rubric.evaluate.score_tables import ScoreTable  # noqa: E402
from rubric.plots.heatmap import CountMatrix, count_heatmaps  # noqa: E402
from rubric.plots.heatmap import figure_pixels as heatmap_pixels  # noqa: E402
from rubric.plots.scatter import RUN_COLOUR, figure_pixels, meta_scatter  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"


def _table(name: str, seed: int, runs: int, topics: int, measures=("V_strict", "A_strict")) -> ScoreTable:
    rng = random.Random(seed)
    per_query = {
        m: {
            f"run{i}": {f"t{j}": round(rng.random() * 0.5 + i / (2 * runs), 4) for j in range(topics)}
            for i in range(runs)
        }
        for m in measures
    }
    return ScoreTable(name, per_query=per_query)


def _report(conditions=2, runs=6, topics=5):
    tables = [(f"cond{c}", _table(f"cond{c}", c, runs, topics)) for c in range(conditions)]
    return meta_evaluate(tables, _table("manual", 99, runs, topics), resamples=0)


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_scatter_png_has_the_grid_size_and_red_run_points(tmp_path):
    report = _report(conditions=2)
    path = tmp_path / "fig.png"
    meta_scatter(report.rows, path, "manual")
    data = path.read_bytes()
    assert _png_size(data) == figure_pixels(report.rows) == (800, 800)  # 2 measures x 2 conditions
    from matplotlib.image import imread

    pixels = imread(path)
    red = tuple(int(RUN_COLOUR[i : i + 2], 16) / 255 for i in (1, 3, 5))
    close = ((abs(pixels[:, :, :3] - red) < 0.02).all(axis=2)).sum()
    assert close > 100  # the run circles are drawn


def test_svg_has_one_marker_per_run_and_per_pair_with_titles(tmp_path):
    report = _report(conditions=1, runs=6, topics=5)
    path = tmp_path / "fig.svg"
    meta_scatter(report.rows, path, "manual", label_runs=True)
    root = ET.parse(path).getroot()
    groups = {g.get("id"): g for g in root.iter(f"{SVG}g") if g.get("id")}
    for k, row in enumerate(report.rows):
        runs = [gid for gid in groups if gid.startswith(f"run-{k}-")]
        assert len(runs) == row.runs == 6
        titles = sorted(groups[g].find(f"{SVG}title").text.split(":")[0] for g in runs)
        assert titles == sorted(row.paired.runs)
        assert all(len(list(groups[g].iter(f"{SVG}use"))) == 1 for g in runs)
        assert len(list(groups[f"pairs-{k}"].iter(f"{SVG}use"))) == row.pairs == 30
    text = path.read_text()
    for run in report.rows[0].paired.runs:  # --label-runs: the names are drawn (as paths, named in comments)
        assert text.count(f"<!-- {run} -->") == len(report.rows)


def test_outputs_are_reproducible(tmp_path):
    report = _report(conditions=1)
    for suffix in ("png", "svg", "pdf"):
        a, b = tmp_path / f"a.{suffix}", tmp_path / f"b.{suffix}"
        meta_scatter(report.rows, a, "manual")
        meta_scatter(report.rows, b, "manual")
        assert a.read_bytes() == b.read_bytes(), suffix
    assert b"Date" not in (tmp_path / "a.svg").read_bytes()


def test_heatmap_png_size(tmp_path):
    panels = [
        CountMatrix(
            "p",
            ["5", "4", "0"],
            ["3", "2", "1", "0"],
            [[5, 1, 0, 0], [2, 3, 1, 0], [0, 1, 4, 9]],
            "grade",
            "judgment",
        )
        for _ in range(2)
    ]
    path = tmp_path / "h.png"
    count_heatmaps(panels, path)
    assert _png_size(path.read_bytes()) == heatmap_pixels(panels) == (900, 400)


@pytest.mark.subprocess  # a fresh interpreter that finds a broken matplotlib first
def test_missing_matplotlib_says_how_to_install(cli_subprocess, user_error, tmp_path):
    fake = tmp_path / "fake"
    (fake / "matplotlib").mkdir(parents=True)
    (fake / "matplotlib" / "__init__.py").write_text("raise ImportError('not installed here')\n")
    table = tmp_path / "t.tsv"
    table.write_text(
        "run\tmeasure\tquery\tvalue\n"
        + "".join(f"r{i}\tm\tq{j}\t{(i * 3 + j) % 7 / 7:.4f}\n" for i in range(4) for j in range(3))
    )
    src = Path(__file__).resolve().parents[2] / "src"
    r = cli_subprocess(
        "evaluate",
        "meta",
        table,
        "-R",
        table,
        "--plot",
        tmp_path / "f.png",
        env={"PYTHONPATH": f"{fake}:{src}"},
    )
    user_error(r, "matplotlib", "pip install 'rubric-workbench[plot]'")
    assert not (tmp_path / "f.png").exists()


def test_conditions_with_different_measures_are_laid_out_in_order(tmp_path):
    a = ScoreTable("a", per_query=_table("a", 1, 5, 4, ("ndcg",)).per_query)
    b = ScoreTable("b", per_query=_table("b", 2, 5, 4, ("cover",)).per_query)
    report = meta_evaluate(
        [("a", a), ("b", b)],
        _table("h", 3, 5, 4, ("ndcg",)),
        measures=["ndcg", "cover"],
        reference_measure="ndcg",
        resamples=0,
    )
    path = tmp_path / "f.png"
    meta_scatter(report.rows, path, "h")
    assert _png_size(path.read_bytes()) == figure_pixels(report.rows) == (800, 400)  # side by side, not 2 x 2
