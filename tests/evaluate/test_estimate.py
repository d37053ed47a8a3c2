"""`rubric evaluate estimate` on the bundled example: LLM-like qrels for every topic (the human
qrels with grades moved, written here), human qrels for some topics, the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import rubric
from helpers.cli import run_cli

TINY = Path(__file__).resolve().parents[2] / "examples" / "tiny"


def write_qrels(path: Path, rows: list[tuple[str, str, int]]) -> Path:
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, d, g in rows))
    return path


def human_rows() -> list[tuple[str, str, int]]:
    rows = []
    for line in (TINY / "qrels.txt").read_text().splitlines():
        q, _, d, g = line.split()
        rows.append((q, d, int(g)))
    return rows


@pytest.fixture
def inputs(tmp_path):
    rows = human_rows()
    # "LLM" labels: every grade of 1 read as 3, a biased but informative grader
    llm = write_qrels(tmp_path / "llm.qrels", [(q, d, 3 if g == 1 else g) for q, d, g in rows])
    topics = sorted({q for q, _, _ in rows})
    judged = topics[:3]
    human = write_qrels(tmp_path / "human.qrels", [r for r in rows if r[0] in judged])
    return llm, human, topics, judged


def test_estimate_command_writes_every_estimate(tmp_path, inputs):
    llm, human, topics, judged = inputs
    out = tmp_path / "est.json"
    r = run_cli(
        "evaluate", "estimate", "--run", TINY / "runs", "--qrels", llm, "--human", human,
        "-m", "nDCG@10", "-m", "P@5", "-l", "2", "--pairs", "-f", "json", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "uniform random sample" in r.stderr
    data = json.loads(out.read_text())
    assert data["n_judged"] == len(judged) and data["n_topics"] == len(topics)
    assert data["judged_topics"] == judged
    assert {e["run"] for e in data["estimates"]} == {"bm25", "dense-rerank", "title-match"}
    for e in data["estimates"]:
        for what in ("human", "ppi", "ppi++"):
            assert e[what]["low"] <= e[what]["value"] <= e[what]["high"]
    assert len(data["pairs"]) == 2 * 3
    # the human-only estimate is the mean of trec_eval's values over the judged topics
    lb = rubric.leaderboard(human, [TINY / "runs"], ["nDCG@10"], level=2)
    for e in data["estimates"]:
        if e["measure"] == "nDCG@10":
            assert e["human"]["value"] == pytest.approx(lb.get(e["run"], "nDCG@10").value, abs=1e-12)


def test_library_equals_the_command_and_ppi_py_mode(tmp_path, inputs):
    llm, human, _, _ = inputs
    report = rubric.estimate([TINY / "runs"], llm, human, ["nDCG@10"], level=2)
    out = tmp_path / "est.tsv"
    r = run_cli(
        "evaluate", "estimate", "--run", TINY / "runs", "--qrels", llm, "--human", human, "-m", "nDCG@10",
        "-l", "2", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert out.read_text() == report.render("tsv")
    assert out.read_text().startswith("# estimates\nrun\tmeasure\tn_judged")
    other = rubric.estimate([TINY / "runs"], llm, human, ["nDCG@10"], level=2, mode="ppi_py")
    assert "normal quantile" in other.method()
    n = report.n_judged
    assert f"Student t ({n - 1} df; PPI++ {n - 1} - k" in report.method()
    assert [r.human[0] for r in other.rows] == pytest.approx([r.human[0] for r in report.rows])


def test_all_topics_judged_gives_the_human_leaderboard(tmp_path, inputs):
    llm, _, _, _ = inputs
    human = TINY / "qrels.txt"
    report = rubric.estimate([TINY / "runs"], llm, human, ["nDCG@10"], level=2)
    lb = rubric.leaderboard(human, [TINY / "runs"], ["nDCG@10"], level=2, complete=True)
    for row in report.rows:
        assert row.ppipp[0] == pytest.approx(lb.get(row.run, "nDCG@10").value, abs=1e-12)
        assert row.ppipp[1] == pytest.approx(row.ppipp[2], abs=1e-12)  # no width left


def test_latex_and_plot(tmp_path, inputs):
    llm, human, _, _ = inputs
    plot = tmp_path / "forest.png"
    r = run_cli(
        "evaluate", "estimate", "--run", TINY / "runs", "--qrels", llm, "--human", human, "-m", "nDCG@10",
        "-f", "latex", "--plot", plot,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "\\begin{tabular}" in r.stdout and "PPI++" in r.stdout
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_pairs_resolve_a_clear_difference():
    rng = np.random.default_rng(0)
    from rubric.evaluate.estimate import TopicValues, estimate_from_values

    human = np.vstack([rng.random(40) * 0.3 + 0.6, rng.random(40) * 0.3])
    llm = human + rng.normal(0, 0.05, human.shape)
    topics = [f"q{i}" for i in range(40)]
    judged = list(range(0, 40, 4))
    report = estimate_from_values(
        TopicValues(["good", "bad"], topics, {"m": llm}),
        TopicValues(["good", "bad"], [topics[i] for i in judged], {"m": human[:, judged]}),
        pairs=True,
    )
    assert report.pairs is not None and report.pairs[0].resolved == "a>b"


def test_human_prompt_class_is_the_one_verify_apply_writes():
    from rubric.evaluate import estimate
    from rubric.verify import review

    assert estimate.HUMAN_PROMPT_CLASS == review.HUMAN_PROMPT_CLASS


def _report(n_runs: int, measures: int, judged=range(0, 43, 4), pairs=False, simultaneous=False):
    """A report of ``n_runs`` runs with realistic spreads (43 topics, skewed values)."""
    from rubric.evaluate.estimate import TopicValues, estimate_from_values

    rng = np.random.default_rng(1)
    names = [f"run-{i:02d}" + ("-with-a-long-name" if i % 5 == 0 else "") for i in range(n_runs)]
    topics = [f"t{i}" for i in range(43)]
    human = {f"m{k}": rng.beta(0.6, 1.2, (n_runs, 43)) for k in range(measures)}
    llm = {m: np.clip(v + rng.normal(0.1, 0.15, v.shape), 0, 1) for m, v in human.items()}
    judged = list(judged)
    return estimate_from_values(
        TopicValues(names, topics, llm),
        TopicValues(names, [topics[i] for i in judged], {m: v[:, judged] for m, v in human.items()}),
        pairs=pairs,
        simultaneous=simultaneous,
    )


@pytest.mark.parametrize("measures", [1, 2, 5])
def test_forest_plot_keeps_title_labels_and_legend_apart(measures):
    """37 runs: the title and the legend inside the figure, the legend on no panel, no two x
    labels overlapping (the plot clipped its title with one measure and put its legend on the
    data; the PNGs were looked at with 1, 2 and 5 measures)."""
    pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from rubric.plots import style
    from rubric.plots.forest import forest_figure

    with style():
        fig = forest_figure(_report(37, measures))
        FigureCanvasAgg(fig).draw()
        renderer = fig.canvas.get_renderer()
        box = fig.bbox
        title = fig._suptitle.get_window_extent(renderer)
        legend = fig.legends[0].get_window_extent(renderer)
        for part in (title, legend):
            assert box.x0 - 1 <= part.x0 and part.x1 <= box.x1 + 1
            assert box.y0 - 1 <= part.y0 and part.y1 <= box.y1 + 1
        panels = [ax.get_window_extent(renderer) for ax in fig.axes]
        assert not any(legend.overlaps(p) for p in panels)
        labels = [ax.xaxis.label.get_window_extent(renderer) for ax in fig.axes]
        assert not any(a.overlaps(b) for i, a in enumerate(labels) for b in labels[i + 1 :])
        assert not any(legend.overlaps(x) for x in labels)


def test_five_judged_topics_sharing_one_value_get_positive_width():
    """Five judged topics that all score 1 for every run (RR@10 often does) gave [1, 1] "95%"
    intervals; now every interval has positive width and stays inside [0, 1]."""
    from rubric.evaluate.estimate import TopicValues, estimate_from_values

    topics = [f"t{i}" for i in range(43)]
    llm = np.tile(np.r_[np.ones(20), np.zeros(23)], (3, 1))
    report = estimate_from_values(
        TopicValues(["a", "b", "c"], topics, {"RR@10": llm}),
        TopicValues(["a", "b", "c"], topics[:5], {"RR@10": np.ones((3, 5))}),
        pairs=True,
    )
    for r in report.rows + (report.pairs or []):
        for _, low, high in (r.human, r.ppi, r.ppipp):
            assert high > low
            assert -1.0 <= low and high <= 1.0
        if r in report.rows:
            assert 0.0 <= r.human[1] and r.human[2] <= 1.0
    assert all(p.resolved == "no" for p in report.pairs or [])


def test_simultaneous_pair_intervals_are_wider_and_said_so():
    each = _report(6, 1, judged=range(0, 43, 2), pairs=True)
    together = _report(6, 1, judged=range(0, 43, 2), pairs=True, simultaneous=True)
    assert each.pairs is not None and together.pairs is not None
    for a, b in zip(each.pairs, together.pairs, strict=True):
        assert a.human[0] == b.human[0]
        assert b.human[1] <= a.human[1] and a.human[2] <= b.human[2]
        assert b.ppipp[2] - b.ppipp[1] > a.ppipp[2] - a.ppipp[1]
    assert "not simultaneous" in each.pairs_note()
    assert "Bonferroni over the 15 pairs" in together.pairs_note()


def test_tsv_says_what_the_numbers_mean(tmp_path, inputs):
    llm, human, _, _ = inputs
    out = tmp_path / "est.tsv"
    r = run_cli(
        "evaluate", "estimate", "--run", TINY / "runs", "--qrels", llm, "--human", human, "-m", "nDCG@10",
        "--pairs", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    head = "run\tmeasure\tn_judged\tn_topics\tppi++\tppi++_low\tppi++_high\tweight"
    assert text.splitlines()[1].startswith(head)
    notes = [line for line in text.splitlines() if line.startswith("# ")]
    said = " ".join(notes)
    for phrase in (
        "report ppi++",
        "weight 0: exactly the human-only estimate",
        "coverage is over the random draw of the judged topics",
        "not all runs at once",
        "per pair, not simultaneous",
    ):
        assert phrase in said, phrase


def test_help_says_what_the_numbers_mean():
    r = run_cli("evaluate", "estimate", "--help", env={"COLUMNS": "200"})
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    for phrase in (
        "the column to report",
        "weight 0 means it is exactly the human-only estimate",
        "over the random draw of the judged topics",
        "not simultaneous",
        "--simultaneous",
        "not --queries of that sample",
    ):
        assert phrase in text, phrase


def test_name_from_file_names_the_runs(tmp_path, inputs):
    """`--name-from file` was silently ignored: the runs kept their tag names."""
    llm, human, _, _ = inputs
    runs = tmp_path / "runs"
    runs.mkdir()
    for path in (TINY / "runs").iterdir():
        (runs / f"file-{path.stem}.txt").write_text(path.read_text())
    out = tmp_path / "est.json"
    r = run_cli(
        "evaluate", "estimate", "--run", runs, "--qrels", llm, "--human", human, "-m", "nDCG@10",
        "--name-from", "file", "-f", "json", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    names = {e["run"] for e in json.loads(out.read_text())["estimates"]}
    assert names == {"file-bm25", "file-dense-rerank", "file-title-match"}


def test_graded_llm_labels_with_human_qrels_need_no_reviews(tmp_path):
    """`--graded G --human H` on a graded file without HumanReview grades was refused; the
    human labels come from H, so none are needed."""
    from helpers.graded_fixture import RATING, write_graded

    graded = write_graded(tmp_path / "graded.jsonl.gz")
    ranked = {"q1": ["p1", "p2", "p3", "p4"], "q2": ["r1", "r2"]}
    for name, flip in (("a", False), ("b", True)):
        lines = [
            f"{q} Q0 {p} {i + 1} {10 - i} {name}\n"
            for q, ps in ranked.items()
            for i, p in enumerate(ps[::-1] if flip else ps)
        ]
        (tmp_path / f"{name}.run").write_text("".join(lines))
    human = write_qrels(tmp_path / "h.qrels", [("q1", "p1", 1), ("q1", "p2", 0), ("q2", "r1", 1)])
    out = tmp_path / "est.json"
    r = run_cli(
        "evaluate", "estimate", "--run", tmp_path / "a.run", "--run", tmp_path / "b.run", "--graded", graded,
        "--prompt-class", RATING, "--human", human, "-m", "P@5", "-f", "json", "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    data = json.loads(out.read_text())
    assert data["n_judged"] == 2 and {e["run"] for e in data["estimates"]} == {"a", "b"}
    # without --human the same file is a clear error: it has no reviews
    r = run_cli(
        "evaluate", "estimate", "--run", tmp_path / "a.run", "--graded", graded, "--prompt-class", RATING,
        "-m", "P@5", "-o", tmp_path / "none.tsv",
    )  # fmt: skip
    assert r.returncode == 2 and "no HumanReview grades" in r.stderr
    assert not (tmp_path / "none.tsv").exists()
