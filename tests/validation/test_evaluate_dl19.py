"""TREC DL 2019 passage: NIST's official values and the original tool's published correlations.

* The 37 official runs against the NIST qrels reproduce every official value in
  trec-browser/dl19-official-summaries.tsv: the plain trec_eval summary and passages-eval (-l 2).
* One `rubric evaluate correlate --sweep` over the phase3 Rubric qrels reproduces the 160 rows of
  dl19-autograde-qrels-leaderboard-analysis-graded.correlation.tsv (Spearman and Kendall).
"""

from __future__ import annotations

import csv

from rubric.data.trec import expand_paths, read_qrels, read_runs
from rubric.evaluate.leaderboards import leaderboard

NIST_MEASURES = [
    "map",
    "recip_rank",
    "ndcg_cut.10",
    "ndcg_cut.100",
    "ndcg",
    "P.10",
    "recall.100",
    "recall.1000",
    "bpref",
]
CORRELATION = (
    "rubric-workbench/rubric-evaluation/results-leaderboard-correlation/"
    "dl19-autograde-qrels-leaderboard-analysis-graded.correlation.tsv"
)


def test_nist_official_dl19_passage_values(shared):
    qrels = read_qrels(shared("anserini-tools", "qrels.dl19-passage.txt"))
    runs = read_runs(expand_paths([shared("naghmefarzi-llmjudge", "dl19-runs")]), queries=qrels)
    assert len(runs) == 37
    reports = {
        "trec_eval": leaderboard(qrels, runs, NIST_MEASURES, level=1),
        "passages-eval": leaderboard(qrels, runs, NIST_MEASURES, level=2),
    }
    checked, wrong = 0, []
    with open(shared("trec-browser", "dl19-official-summaries.tsv")) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            if row["task"] != "passages":
                continue
            for m in NIST_MEASURES:
                official = row[m.replace(".", "_")]
                ours = f"{reports[row['summary_kind']].get(row['run'], m).value:.4f}"
                checked += 1
                if ours != official:
                    wrong.append((row["run"], row["summary_kind"], m, official, ours))
    assert checked == 666
    assert not wrong, wrong[:10]


def test_published_correlations_reproduced_by_one_sweep(cli, shared, tmp_path):
    qrels_dir = shared("rubric-workbench", "rubric-evaluation", "phase3-qrels", "dl19")
    published = shared(*CORRELATION.split("/"))
    out = tmp_path / "correlation.tsv"
    measures = ["ndcg_cut.10", "ndcg_cut.20", "map", "recip_rank", "Rprec"]
    result = cli(
        "evaluate", "correlate", "--sweep",
        "--qrels", qrels_dir,
        "--run", shared("naghmefarzi-llmjudge", "dl19-runs"),
        "--official", shared("trec-browser", "official_dl19_leaderboard.json"),
        *[a for m in measures for a in ("-m", m)],
        *[a for level in (1, 3, 4, 5) for a in ("-l", level)],
        "-o", out,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "UNH_exDL_bm25" in result.stderr  # the run not on the official leaderboard is listed
    ours = {}
    lines = out.read_text().splitlines()
    assert lines[0] == "method\tmin_rating\ttrec_eval_metric\tspearman\tkendall"
    for line in lines[1:]:
        method, level, measure, rho, tau = line.split("\t")
        ours[(method.rsplit("/", 1)[-1], level, measure)] = (rho, tau)
    expected = {}
    for line in published.read_text().splitlines():
        cols = line.split("\t")
        if len(cols) == 5 and cols[0].endswith(".qrel"):
            expected[(cols[0].rsplit("/", 1)[-1], cols[1], cols[2])] = (cols[3], cols[4])
    assert len(expected) == 160
    assert len(ours) == 160
    wrong = {k: (v, ours.get(k)) for k, v in expected.items() if ours.get(k) != v}
    assert not wrong, sorted(wrong.items())[:10]
