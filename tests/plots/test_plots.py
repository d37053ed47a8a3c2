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


def _overlaps(boxes) -> list[tuple[int, int]]:
    return [
        (i, j) for i in range(len(boxes)) for j in range(i + 1, len(boxes)) if boxes[i].overlaps(boxes[j])
    ]


def _crowded(runs: int, topics: int = 4, seed: int = 5) -> list:
    """Runs with long names whose scores crowd into a small range, as real submissions do."""
    rng = random.Random(seed)
    names = [f"team{i % 7}_bert_rerank_p{i}" for i in range(runs)]
    per_query = {"ndcg": {n: {f"t{j}": 0.5 + 0.1 * rng.random() for j in range(topics)} for n in names}}
    ref = {"ndcg": {n: {f"t{j}": 0.45 + 0.15 * rng.random() for j in range(topics)} for n in names}}
    return meta_evaluate([("auto", ScoreTable("auto", per_query=per_query))], ScoreTable("h", per_query=ref),
                         resamples=0).rows  # fmt: skip


@pytest.mark.parametrize("runs", [3, 37])
def test_run_labels_overlap_nothing(runs):
    from rubric.plots import style
    from rubric.plots.labels import Box, label_boxes
    from rubric.plots.scatter import ScatterStyle, scatter_figure

    rows = _crowded(runs)
    with style():
        fig, _ = scatter_figure(rows, "h", ScatterStyle(label_runs=True))
        fig.canvas.draw()
        (ax,) = [a for a in fig.axes if a.get_visible()]
        boxes = label_boxes(ax)
        assert len(boxes) == runs
        assert _overlaps(boxes) == []
        frame = ax.get_window_extent()
        assert all(b.inside(Box(frame.x0, frame.y0, frame.x1, frame.y1)) for b in boxes)
        renderer = fig.canvas.get_renderer()
        title = ax.title.get_window_extent(renderer)
        assert not any(b.overlaps(Box(title.x0, title.y0, title.x1, title.y1)) for b in boxes)
        texts = [t.get_text() for t in ax.texts if (t.get_gid() or "").startswith("label-")]
        names = sorted(rows[0].paired.runs)
        numbered = sorted(texts) != names
        if numbered:  # the names did not fit: numbers next to the points, the names in a key
            assert sorted(texts, key=int) == [str(n) for n in range(1, runs + 1)]
            key = [t.get_text() for legend in fig.legends for t in legend.get_texts()]
            assert sorted(k.split(maxsplit=1)[1] for k in key if k[0].isdigit()) == names
        assert numbered == (runs == 37)  # 37 long names in one 4-inch panel need the key


def test_names_that_fit_are_written_and_axis_limits_follow_the_data_unless_fixed():
    from rubric.plots import style
    from rubric.plots.scatter import ScatterStyle, scatter_figure

    rows = _crowded(5)
    with style():
        fig, _ = scatter_figure(rows, "h", ScatterStyle(label_runs=True, panel_inches=6))
        (ax,) = fig.axes
        assert sorted(t.get_text() for t in ax.texts if t.get_gid()) == sorted(rows[0].paired.runs)
        low, high = ax.get_xlim()
        assert 0.45 < low < 0.5 < high < 0.65  # the data's range, not 0-1
        fig, _ = scatter_figure(rows, "h", ScatterStyle(xlim=(0, 1), ylim=(0.2, 0.9)))
        assert fig.axes[0].get_xlim() == (0, 1) and fig.axes[0].get_ylim() == (0.2, 0.9)


def test_size_and_dpi_options(cli, tmp_path):
    table = tmp_path / "t.tsv"
    table.write_text(
        "run\tmeasure\tquery\tvalue\n"
        + "".join(f"r{i}\tm\tq{j}\t{(i * 3 + j) % 7 / 7:.4f}\n" for i in range(4) for j in range(3))
    )
    path = tmp_path / "f.png"
    r = cli("evaluate", "meta", table, "-R", table, "--plot", path, "--plot-size", "3", "--dpi", "200",
            "--xlim", "0,1", "--resamples", "0")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert _png_size(path.read_bytes()) == (600, 600)
    bad = cli("evaluate", "meta", table, "-R", table, "--plot", path, "--xlim", "1,0")
    assert bad.returncode == 2 and "--xlim: expected LO < HI" in bad.stderr


def test_agreement_heatmap_shows_every_category_in_order_with_kappa():
    from collections import Counter

    from rubric.verify.agreement import Agreement

    ag = Agreement(Counter({(5, 3): 4, (0, 0): 10, (3, 1): 2}), 2, "Q (llm)", "judgments of qrels.txt")
    panel = ag.count_matrix(top_grade=5, top_level=3)
    assert panel.row_labels == ["5", "4", "3", "2", "1", "0"]  # grades 4, 2, 1 unseen but shown
    assert panel.col_labels == ["0", "1", "2", "3"]  # natural order
    assert "Q (llm) vs judgments of qrels.txt" in panel.title
    assert f"κ = {ag.binary(ag.best_threshold()).kappa:.3f}" in panel.title
    assert panel.shares()[0] == [0, 0, 0, 1.0] and panel.shares()[1] == [0, 0, 0, 0]
    assert panel.text(0, 3, by_row=True) == "100%\n(4)"


def test_confusion_axes_have_human_names():
    from collections import Counter

    from rubric.evaluate.assignment_agreement import AssignmentConfusion
    from rubric.plots.heatmap import assignment_panel

    counts = Counter({("support", "partial_support"): 3, ("not_support", "not_support"): 5})
    panel = assignment_panel(AssignmentConfusion(counts, "auto.jsonl", "manual.jsonl"), by_row=True)
    assert panel.row_labels == panel.col_labels == ["support", "partial support", "not support"]
    assert (panel.row_title, panel.col_title) == ("automatic (auto.jsonl)", "manual (manual.jsonl)")
    assert "κ = " in panel.title
    assert panel.text(0, 1, by_row=True) == "100%\n(3)"
