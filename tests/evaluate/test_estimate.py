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
