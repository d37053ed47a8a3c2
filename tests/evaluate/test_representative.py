"""`rubric evaluate representative`: topics by how well they alone rank the runs as all topics do
(the original's leaderboard_repr_queries), on runs whose taus are worked out by hand."""

from __future__ import annotations

import math

from rubric.evaluate.representative import representative_output

# the rank of the one relevant document per (topic, run); reciprocal rank is then 1 / rank
RANKS = {
    "t1": {"A": 1, "B": 2, "C": 3, "D": 4},
    "t2": {"A": 4, "B": 3, "C": 2, "D": 1},
    "t3": {"A": 1, "B": 1, "C": 1, "D": 1},  # every run equal: no tau
    "t4": {"A": 1, "B": 2, "C": 3, "D": 4},
}


def _files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"{t} 0 rel 1\n" for t in RANKS))
    runs = tmp_path / "runs"
    runs.mkdir()
    for run in "ABCD":
        lines = []
        for t, ranks in RANKS.items():
            docs = [f"n{i}" for i in range(1, ranks[run])] + ["rel"]
            lines += [f"{t} Q0 {d} {i} {10 - i} {run}" for i, d in enumerate(docs, start=1)]
        (runs / run).write_text("\n".join(lines) + "\n")
    return qrels, runs


def test_topics_by_tau(tmp_path):
    """Mean RR: A .8125, D .625, B .583, C .542, so the overall order is A D B C. t1 (and t4)
    orders A B C D: 4 of 6 pairs concordant, tau 1/3; t2 orders D C B A: tau -1/3; t3 none."""
    qrels, runs = _files(tmp_path)
    done = representative_output(qrels, [runs], "recip_rank")
    rows = [line.split("\t") for line in done.text.splitlines()]
    assert rows[0] == ["rank", "query", "tau", "runs"]
    assert [(r[1], r[2]) for r in rows[1:]] == [
        ("t1", "0.3333"),
        ("t4", "0.3333"),
        ("t2", "-0.3333"),
        ("t3", "nan"),
    ]
    assert "ranked 4 topics by 4 runs" in done.notes


def test_cli_top_and_output(cli, tmp_path):
    qrels, runs = _files(tmp_path)
    out = tmp_path / "rep.tsv"
    r = cli("evaluate", "representative", "--qrels", qrels, "--run", runs, "-m", "recip_rank", "--top", "2",
            "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert out.read_text().splitlines()[1:] == ["1\tt1\t0.3333\t4", "2\tt4\t0.3333\t4"]
    assert not math.isnan(float(out.read_text().splitlines()[2].split("\t")[2]))


def test_scores_are_ranked_as_trec_eval_prints_them():
    """The original read trec_eval's 4-decimal output: runs 0.00001 apart on a topic (or overall)
    are tied there. Full precision would order t1 A > B > C (tau 1 against A > B > C overall);
    printed, A and B tie on t1: tau-b 0.8165 (2 concordant pairs, 1 tie)."""
    from scipy.stats import kendalltau

    from rubric.evaluate.report import Report, Score
    from rubric.evaluate.representative import representative_queries

    report = Report(
        [
            Score("A", "map", 0.6, {"t1": 0.50003, "t2": 0.7}),
            Score("B", "map", 0.5, {"t1": 0.50001, "t2": 0.5}),
            Score("C", "map", 0.4, {"t1": 0.1, "t2": 0.3}),
        ]
    )
    got = {t.query: t.tau for t in representative_queries(report)}
    assert got["t2"] == 1.0
    assert math.isclose(got["t1"], kendalltau([1, 2, 3], [1.5, 1.5, 3]).statistic)
    assert round(got["t1"], 4) == 0.8165
