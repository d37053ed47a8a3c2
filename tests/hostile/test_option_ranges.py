"""Numeric options of convert / verify / evaluate outside their range: exit 2 naming the option,
before any file is read (the files named here do not even exist)."""

from __future__ import annotations

import pytest

from helpers import faults

LB = ["evaluate", "leaderboard", "--qrels", "Q", "--run", "R", "-m", "P@5"]
CMP = ["evaluate", "compare", "--qrels", "Q", "--run", "R", "-m", "P@5"]
SWEEP = ["evaluate", "correlate", "--official", "O", "--sweep", "--qrels", "Q", "--run", "R", "-m", "map"]

CASES = [
    (["convert", "runs", "--topics", "Q", "-C", "C", "R", "-o", "O", "--top-k", "-1"], "--top-k"),
    (["evaluate", "qrels", "G", "-o", "O", "--min-grade", "6"], "--min-grade"),
    (["evaluate", "qrels", "G", "-o", "O", "--min-grade", "-1"], "--min-grade"),
    ([*LB, "--level", "0"], "--level"),  # pytrec_eval aborts on a level below 1
    ([*LB, "--digits", "-2"], "--digits"),
    ([*LB, "--digits", "99"], "--digits"),
    ([*LB, "--num-docs", "-1"], "--num-docs"),
    ([*LB, "--max-docs", "0"], "--max-docs"),
    (["evaluate", "cover", "G", "-k", "0"], "--top-k"),
    (["evaluate", "learn", "G", "-o", "O", "--folds", "1"], "--folds"),
    (["evaluate", "representative", "--qrels", "Q", "--run", "R", "-m", "P.5", "--top", "0"], "--top"),
    (["evaluate", "cover", "G", "--min-grade", "9"], "--min-grade"),
    ([*SWEEP, "--level", "-3"], "--level"),
    ([*SWEEP, "--digits", "-5"], "--digits"),
    ([*CMP, "--alpha", "5"], "--alpha"),
    ([*CMP, "--alpha", "0"], "--alpha"),
    ([*CMP, "--alpha", "1"], "--alpha"),
    ([*CMP, "--resamples", "0"], "--resamples"),
    ([*CMP, "--seed", "-1"], "--seed"),
    ([*CMP, "--level", "0"], "--level"),
    (["verify", "grading", "G", "--width", "-1"], "--width"),
    (["verify", "grid", "G", "--width", "-1"], "--width"),
    (["verify", "uncovered", "G", "--min-judgment", "0"], "--min-judgment"),
    (["verify", "uncovered", "G", "--min-grade", "6"], "--min-grade"),
    (["verify", "uncovered", "G", "--width", "-5"], "--width"),
    (["verify", "spurious", "G", "--max-judgment", "-1"], "--max-judgment"),
    (["verify", "spurious", "G", "--min-grade", "-1"], "--min-grade"),
    (["verify", "spurious", "G", "--top", "-1"], "--top"),
    (["verify", "agreement", "G", "--min-relevant-judgment", "0"], "--min-relevant-judgment"),
    (["verify", "agreement", "G", "--min-grade", "7"], "--min-grade"),
    (
        ["verify", "impact", "G", "--bank-before", "A", "--bank-after", "B", "--min-grade", "-2"],
        "--min-grade",
    ),
    (["verify", "html", "G", "-o", "O", "--min-grade", "6"], "--min-grade"),
    (["verify", "html", "G", "-o", "O", "--min-judgment", "0"], "--min-judgment"),
    (["verify", "html", "G", "-o", "O", "--spurious-min", "0"], "--spurious-min"),
]


@pytest.mark.parametrize("args, option", CASES, ids=[" ".join(a[:2]) + " " + o for a, o in CASES])
def test_out_of_range_option_is_one_error_naming_it(tmp_path, args, option):
    r = faults.rubric(*args, cwd=tmp_path)
    line = faults.assert_one_error(r, option)
    assert "Invalid value" in line
    assert list(tmp_path.iterdir()) == []  # no output file


def test_values_at_the_edges_are_accepted(tmp_path):
    f = faults.valid_inputs(tmp_path / "in")
    g, p = f["graded"], ["-p", faults.graded_fixture.RATING]
    for args in (
        ["verify", "uncovered", g, *p, "--min-grade", "0", "--min-judgment", "1", "--width", "0"],
        ["verify", "spurious", g, *p, "--min-grade", "5", "--max-judgment", "0"],
        [
            "evaluate",
            "leaderboard",
            "--qrels",
            f["qrels.txt"],
            "--run",
            f["run.alpha"],
            "-m",
            "P@5",
            "--level",
            "1",
        ],
    ):
        r = faults.rubric(*args)
        assert r.returncode == 0, r.stderr
