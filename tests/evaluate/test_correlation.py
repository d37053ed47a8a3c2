from __future__ import annotations

import json

import pytest
from scipy.stats import kendalltau, spearmanr

from rubric.errors import UserError
from rubric.evaluate.correlation import Official, correlate, read_official, read_scores


def test_matches_scipy_on_ranks_with_ties_and_rounding():
    official = Official({"a": 1, "b": 2, "c": 3, "d": 4}, are_ranks=True)
    # b and c tie at 4 decimals: average rank 2.5 each
    ours = {"a": 0.9, "b": 0.50001, "c": 0.50004, "d": 0.1}
    c = correlate(ours, official)
    assert c.spearman == pytest.approx(spearmanr([1, 2.5, 2.5, 4], [1, 2, 3, 4]).statistic)
    assert c.kendall == pytest.approx(kendalltau([1, 2.5, 2.5, 4], [1, 2, 3, 4]).statistic)
    full = correlate(ours, official, digits=None)  # c > b at full precision
    assert full.spearman == pytest.approx(spearmanr([1, 3, 2, 4], [1, 2, 3, 4]).statistic)


def test_runs_on_one_side_are_listed_and_too_few_is_an_error():
    official = Official({"a": 1, "b": 2, "c": 3, "z": 4}, are_ranks=True, source="off.json")
    c = correlate({"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.0}, official)
    assert (c.n, c.only_ours, c.only_official, c.spearman) == (3, ["x"], ["z"], 1.0)
    with pytest.raises(UserError, match="off.json: only 2 runs are on both leaderboards"):
        correlate({"a": 1.0, "b": 2.0}, official)


def test_official_formats(tmp_path):
    j = tmp_path / "official.json"
    j.write_text(json.dumps({"a": 1, "b": 2}))
    assert read_official(j).are_ranks and read_official(j).values == {"a": 1.0, "b": 2.0}
    two = tmp_path / "scores.tsv"
    two.write_text("run\tscore\na\t0.5\nb\t0.25\n")
    assert read_official(two).values == {"a": 0.5, "b": 0.25} and not read_official(two).are_ranks
    ours = tmp_path / "lb.tsv"
    ours.write_text(
        "run\tmeasure\tvalue\tstderr\tn_queries\na\tmap\t0.3\t\t2\na\tP@5\t0.9\t\t2\nb\tmap\t0.2\t\t2\n"
    )
    assert read_scores(ours) == {"a": 0.3, "b": 0.2}
    assert read_scores(ours, "P@5") == {"a": 0.9}
    with pytest.raises(UserError, match="no rows for measure 'ndcg'"):
        read_scores(ours, "ndcg")
    wide = tmp_path / "summaries.tsv"
    wide.write_text("run\tmap\tndcg_cut_10\na\t0.1\t0.7\nb\t0.2\t0.6\n")
    assert read_scores(wide, "ndcg_cut.10") == {"a": 0.7, "b": 0.6}
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\t0.5\nb\tlots\n")
    with pytest.raises(UserError, match=r"bad.tsv:2: score must be a number"):
        read_scores(bad)
