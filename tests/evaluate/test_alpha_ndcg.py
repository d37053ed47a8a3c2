from __future__ import annotations

import math

import pytest

from rubric.errors import UserError
from rubric.evaluate.alpha_ndcg import alpha_ndcg, read_item_qrels
from rubric.evaluate.measures import parse_measure

ITEMS = "q1 a d1 5\nq1 b d1 4\nq1 a d2 4\nq1 c d3 5\nq1 c d4 1\n"


def test_alpha_ndcg_by_hand(tmp_path):
    path = tmp_path / "items.qrels"
    path.write_text(ITEMS)
    items = read_item_qrels(path)
    # ideal (greedy): d1 (a, b) gain 2; d3 (c) gain 1; d2 (a again) gain 0.5
    ideal = 2 + 1 / math.log2(3) + 0.5 / 2
    run = {"q1": {"d2": 3.0, "d1": 2.0, "d3": 1.0}}  # a; a again + b; c
    ours = 1 + 1.5 / math.log2(3) + 1 / 2
    assert alpha_ndcg(items, run, ["q1"], k=3, level=4)["q1"] == pytest.approx(ours / ideal)
    # at level 1, d4 answers c too: the ideal stays, d4 unranked changes nothing
    assert alpha_ndcg(items, run, ["q1"], k=3, level=1)["q1"] == pytest.approx(ours / ideal)
    assert alpha_ndcg(items, {}, ["q1"], k=3)["q1"] == 0.0


def test_alpha_ndcg_in_the_leaderboard_cli(cli, user_error, tmp_path):
    items = tmp_path / "items.qrels"
    items.write_text(ITEMS)
    run = tmp_path / "run"
    run.write_text("q1 Q0 d2 1 3 r\nq1 Q0 d1 2 2 r\nq1 Q0 d3 3 1 r\n")
    result = cli(
        "evaluate",
        "leaderboard",
        "--qrels",
        items,
        "--run",
        run,
        "-m",
        "alpha_nDCG@3",
        "-m",
        "P@1",
        "-l",
        "4",
    )
    assert result.returncode == 0, result.stderr
    expected = (1 + 1.5 / math.log2(3) + 0.5) / (2 + 1 / math.log2(3) + 0.25)
    lines = result.stdout.splitlines()
    assert lines[1] == f"r\talpha_nDCG@3\t{expected:.4f}\t\t1"
    assert lines[2] == "r\tP@1\t1.0000\t\t1"  # trec_eval measures see the best grade per passage
    with pytest.raises(UserError, match="needs an integer cutoff"):
        parse_measure("alpha_nDCG")
    assert parse_measure("alpha_nDCG(alpha=0.3,rel=2)@5")[0].alpha == 0.3
