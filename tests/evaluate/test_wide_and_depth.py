"""`evaluate leaderboard` as users of other tools expect it: a wide runs x measures table with
significance marks against a baseline (as ranx marks its report), CSV and per-query output, and
trec_eval's -M (every ranking cut to its first N documents)."""

from __future__ import annotations

import csv
import io
import json
import random
from pathlib import Path

import pytest

from rubric.data.trec import Run, ranked, read_run, write_run


@pytest.fixture
def setup(tmp_path: Path):
    """30 queries, 10 judged documents each; runs from good to random, with tied scores."""
    rng = random.Random(7)
    qrels = tmp_path / "qrels.txt"
    lines = []
    for q in range(30):
        for d in range(10):
            lines.append(f"q{q} 0 d{d} {3 if d < 3 else 1 if d < 5 else 0}")
    qrels.write_text("\n".join(lines) + "\n")
    runs = {}
    for name, skill in (("good", 0.9), ("fair", 0.5), ("base", 0.1)):
        scores = {}
        for q in range(30):
            scores[f"q{q}"] = {f"d{d}": round((10 - d) * skill + rng.random() * 4, 1) for d in range(15)}
        path = tmp_path / f"{name}.run"
        write_run(path, Run(name, scores))
        runs[name] = path
    return qrels, runs


def _board(cli, qrels, runs, *args):
    r = cli(
        "evaluate", "leaderboard", "--qrels", qrels, *[a for p in runs.values() for a in ("--run", p)], *args
    )
    assert r.returncode == 0, r.stderr
    return r


def test_wide_table_holds_the_long_values_and_marks_against_the_baseline(cli, setup):
    qrels, runs = setup
    long = _board(cli, qrels, runs, "-m", "ndcg_cut.10", "-m", "P.5")
    value = {(row[0], row[1]): row[2] for row in (line.split("\t") for line in long.stdout.splitlines()[1:])}
    wide = _board(cli, qrels, runs, "-m", "ndcg_cut.10", "-m", "P.5", "--wide", "--baseline", "base")
    rows = [line.split("\t") for line in wide.stdout.splitlines()]
    assert rows[0] == ["run", "ndcg_cut.10", "P.5"]
    assert [r[0] for r in rows[1:]] == ["good", "fair", "base"]  # leaderboard order
    for run, *cells in rows[1:]:
        for m, cell in zip(["ndcg_cut.10", "P.5"], cells, strict=True):
            assert cell.rstrip("+-") == value[(run, m)]
    good, base = rows[1], rows[3]
    assert good[1].endswith("+") and not any(c.endswith(("+", "-")) for c in base[1:])
    assert "significantly better / worse than base" in wide.stderr
    as_csv = _board(cli, qrels, runs, "-m", "ndcg_cut.10", "-m", "P.5", "--wide", "-f", "csv")
    assert list(csv.reader(io.StringIO(as_csv.stdout)))[1] == [good[0], *[c.rstrip("+-") for c in good[1:]]]


def test_per_query_csv_and_json(cli, setup):
    qrels, runs = setup
    tsv = _board(cli, qrels, runs, "-m", "P.5", "-q").stdout
    as_csv = _board(cli, qrels, runs, "-m", "P.5", "-q", "-f", "csv").stdout
    assert [",".join(line.split("\t")) for line in tsv.splitlines()] == as_csv.splitlines()
    data = json.loads(_board(cli, qrels, runs, "-m", "P.5", "-q", "-f", "json").stdout)
    assert len(data[0]["per_query"]) == 30


def test_max_docs_equals_the_runs_cut_by_hand(cli, setup, tmp_path):
    qrels, runs = setup
    measures = ["-m", "map", "-m", "recall.1000", "-m", "num_ret"]
    cut = {}
    for name, path in runs.items():
        run = read_run(path)
        short = {q: dict(ranked(docs)[:7]) for q, docs in run.scores.items()}
        cut[name] = tmp_path / f"{name}.cut"
        write_run(cut[name], Run(name, short))
    by_option = _board(cli, qrels, runs, *measures, "--max-docs", "7").stdout
    by_hand = _board(cli, qrels, cut, *measures).stdout
    assert by_option == by_hand
    assert by_option != _board(cli, qrels, runs, *measures).stdout
    assert "\tnum_ret\t210.0000\t" in by_option  # 30 queries x 7


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--wide", "-f", "json"], "--wide: a TSV or CSV table"),
        (["--wide", "-q"], "--wide: one value per run and measure"),
        (["--baseline", "base"], "--baseline: marks the cells of the wide table; add --wide"),
        (["--wide", "--baseline", "nobody"], "--baseline: no run named 'nobody'"),
        (["--max-docs", "0"], "--max-docs"),
    ],
)
def test_bad_combinations(cli, user_error, setup, args, message):
    qrels, runs = setup
    two = ["--run", runs["good"], "--run", runs["base"]]
    r = cli("evaluate", "leaderboard", "--qrels", qrels, *two, "-m", "P.5", *args)
    user_error(r, message)
