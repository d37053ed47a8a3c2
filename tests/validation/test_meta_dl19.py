"""Meta-evaluation on TREC DL 2019: the 37 official runs, per-query nDCG@10 with the NIST qrels
(reference) against each of the original tool's eight released phase-3 Rubric qrels files.

`rubric evaluate meta` must give the three taus of "The Great Nugget Recall" exactly as an
independent scipy computation from the same per-query tables, and its run-level tau must equal
`rubric evaluate correlate` on the same leaderboards.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict

import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from rubric.data.trec import expand_paths, read_qrels, read_runs
from rubric.evaluate.correlation import correlate, read_official
from rubric.evaluate.leaderboards import leaderboard

PHASE3 = ("rubric-workbench", "rubric-evaluation", "phase3-qrels", "dl19")
MEASURE = "ndcg_cut.10"


def _read(path):
    """``({run: {query: value}}, {run: all})`` of a leaderboard -q TSV, read with csv only."""
    per_query, summary = defaultdict(dict), {}
    with open(path) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["query"] == "all":
                summary[row["run"]] = float(row["value"])
            else:
                per_query[row["run"]][row["query"]] = float(row["value"])
    return per_query, summary


def _scipy_taus(x_path, y_path):
    """The three taus computed directly: run level on the printed 'all' rows (ranked as the
    original tool ranked them), per-topic average, all pairs."""
    xq, xs = _read(x_path)
    yq, ys = _read(y_path)
    runs = sorted(set(xs) & set(ys))
    assert all(set(xq[r]) == set(yq[r]) for r in runs)  # same runs, same queries ranked
    tau_run = kendalltau(rankdata([-xs[r] for r in runs]), rankdata([-ys[r] for r in runs])).statistic
    rho_run = spearmanr(rankdata([-xs[r] for r in runs]), rankdata([-ys[r] for r in runs])).statistic
    topics = sorted({t for r in runs for t in xq[r]})
    per_topic, skipped = [], []
    for t in topics:
        a = [xq[r][t] for r in runs if t in xq[r]]
        b = [yq[r][t] for r in runs if t in yq[r]]
        if len(set(a)) < 2 or len(set(b)) < 2:
            skipped.append(t)
        else:
            per_topic.append(kendalltau(a, b).statistic)
    pairs = [(r, t) for r in runs for t in sorted(xq[r])]
    tau_pairs = kendalltau([xq[r][t] for r, t in pairs], [yq[r][t] for r, t in pairs]).statistic
    return {
        "runs": len(runs),
        "topics": len(topics),
        "pairs": len(pairs),
        "tau_run": tau_run,
        "rho_run": rho_run,
        "tau_topic_avg": sum(per_topic) / len(per_topic),
        "tau_pairs": tau_pairs,
        "topics_skipped": len(skipped),
    }


@pytest.fixture
def tables(shared, tmp_path):
    """Per-query and summary nDCG@10 tables of the 37 runs: NIST and the eight phase-3 qrels."""
    out = tmp_path
    nist = read_qrels(shared("anserini-tools", "qrels.dl19-passage.txt"))
    runs = read_runs(expand_paths([shared("naghmefarzi-llmjudge", "dl19-runs")]), queries=nist)
    assert len(runs) == 37
    paths = {}
    qrels_files = sorted(shared(*PHASE3).glob("*.qrel"))
    assert len(qrels_files) == 8
    for name, qrels in [("NIST", nist), *[(p.stem, read_qrels(p)) for p in qrels_files]]:
        report = leaderboard(qrels, runs, [MEASURE])
        (out / f"{name}.tsv").write_text(report.to_tsv(per_query=True))
        (out / f"{name}-summary.tsv").write_text(report.to_tsv())
        paths[name] = out / f"{name}.tsv"
    return out, paths


def test_three_taus_equal_scipy_and_run_level_equals_correlate(cli, tables):
    out, paths = tables
    conditions = [f"{name}={path}" for name, path in paths.items() if name != "NIST"]
    r = cli("evaluate", "meta", *conditions, "-R", f"NIST={paths['NIST']}", "-m", MEASURE,
            "--resamples", "200", "-f", "json", "--per-topic", out / "per-topic.tsv")  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert len(rows) == 8
    official = read_official(out / "NIST-summary.tsv", MEASURE)
    for row in rows:
        name = row["condition"]
        expected = _scipy_taus(paths[name], paths["NIST"])
        for key in ("runs", "topics", "pairs", "topics_skipped"):
            assert row[key] == expected[key], (name, key)
        for key in ("tau_run", "rho_run", "tau_topic_avg", "tau_pairs"):
            assert row[key] == pytest.approx(expected[key], abs=1e-12), (name, key)
        assert row["runs"] == 37 and row["topics"] == 43
        # the run level is `evaluate correlate` on the same leaderboards, to the last bit
        c = correlate(out / f"{name}-summary.tsv", official, measure=MEASURE)
        assert (c.kendall, c.spearman) == (row["tau_run"], row["rho_run"])
        for key in ("tau_run", "tau_topic_avg", "tau_pairs"):
            assert row[f"{key}_low"] <= row[key] <= row[f"{key}_high"], (name, key)
        assert row["tau_pairs"] < row["tau_run"]  # topic/run pairs agree less than run means
    sample = rows[0]["condition"]
    c = cli("evaluate", "correlate", "--leaderboard", out / f"{sample}-summary.tsv",
            "--official", out / "NIST-summary.tsv", "--measure", MEASURE)  # fmt: skip
    assert c.returncode == 0, c.stderr
    _, rho, tau = c.stdout.splitlines()[1].split("\t")
    # correlate prints 4 places
    assert (tau, rho) == (f"{rows[0]['tau_run']:.4f}", f"{rows[0]['rho_run']:.4f}")
    per_topic = [line.split("\t") for line in (out / "per-topic.tsv").read_text().splitlines()[1:]]
    assert len(per_topic) == 8 * (43 + 1)


def test_scatter_of_all_37_runs_labelled_has_no_overlapping_labels(tables):
    """The DL19 figure with every run labelled: the label boxes, as rendered, overlap no other."""
    pytest.importorskip("matplotlib")
    from rubric.evaluate.meta import meta_evaluate
    from rubric.evaluate.score_tables import read_score_table
    from rubric.plots import style
    from rubric.plots.labels import label_boxes
    from rubric.plots.scatter import ScatterStyle, scatter_figure

    _, paths = tables
    condition = read_score_table(paths["QuestionSelfRatedUnanswerablePromptWithChoices"])
    report = meta_evaluate([("Rubric-Qrels", condition)], read_score_table(paths["NIST"]), resamples=0)
    with style():
        fig, _ = scatter_figure(report.rows, "NIST", ScatterStyle(label_runs=True))
        fig.canvas.draw()
        (ax,) = fig.axes
        boxes = label_boxes(ax)
        assert len(boxes) == 37
        overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1 :] if a.overlaps(b)]
        assert overlapping == []
