"""`rubric evaluate` as a user types it: measure names in any spelling, and query subsets."""

from __future__ import annotations

import json

import pytest

from rubric.data.grade_filter import GradeFilter
from rubric.evaluate import build_qrels, correlate, leaderboard
from rubric.evaluate.correlation import Official

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def values(stdout: str) -> dict[tuple[str, str], str]:
    """``{(run, measure): value}`` of a leaderboard TSV."""
    return {tuple(line.split("\t")[:2]): line.split("\t")[2] for line in stdout.splitlines()[1:]}


@pytest.fixture
def board(cli, tiny):
    def run(*args):
        return cli("evaluate", "leaderboard", "--qrels", tiny / "qrels.txt", "--run", tiny / "run.alpha",
                   "--run", tiny / "run.beta", *args)  # fmt: skip

    return run


@pytest.mark.parametrize("typed", ["ndcg@10", "NDCG@10", "ndcg_cut_10", "ndcg_cut.10", "NDCG_CUT_10"])
def test_any_spelling_gives_the_ndcg10_values(board, typed):
    reference = board("-m", "nDCG@10")
    result = board("-m", typed)
    assert result.returncode == 0, result.stderr
    assert list(values(result.stdout).values()) == list(values(reference.stdout).values())


def test_lists_and_measures_trec_eval_lacks(board):
    result = board("-m", "nDCG@10,P@5", "-m", "RR(rel=2)@10,Judged@10 ERR@10")
    assert result.returncode == 0, result.stderr
    got = values(result.stdout)
    assert {m for _, m in got} == {"nDCG@10", "P@5", "RR(rel=2)@10", "Judged@10", "ERR@10"}
    # alpha on q1: d2 (3), d1 (2), d12 (unjudged); q2: d5 (3), d7 (0); q3: d11 (0), d8 (3), d9 (2)
    assert got[("alpha", "RR(rel=2)@10")] == f"{(1 + 1 + 1 / 2) / 3:.4f}"
    assert got[("alpha", "Judged@10")] == f"{(2 / 3 + 1 + 1) / 3:.4f}"
    trec = board("-m", "P_5,recip_rank", "-f", "trec_eval").stdout
    assert trec.splitlines()[:2] == [
        "P_5                   \tall\t0.3333",
        "recip_rank            \tall\t0.8333",
    ]


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("P.abc", "-m: P.abc: P takes positive integer cutoffs"),  # was an abort in trec_eval (exit 134)
        ("utility.x", "-m: utility.x: utility takes 4 numbers"),  # was 0.0 for every run, exit 0
        ("nDCG@x", "-m: nDCG@x: the cutoff after @ must be a positive integer"),
        ("NDCG@1O", "-m: NDCG@1O: the cutoff after @"),
        ("nDGC@10", "did you mean nDCG@10"),
        ("Rprec_mult.x", "Rprec_mult takes positive multiples"),
    ],
)
def test_bad_names_exit_2_before_any_file_is_read(cli, user_error, tiny, tmp_path, typed, message):
    missing = tmp_path / "no-such-run"
    common = ["--qrels", tiny / "qrels.txt", "--run", missing, "--run", tiny / "run.beta", "-m", typed]
    user_error(cli("evaluate", "leaderboard", *common), message)
    user_error(cli("evaluate", "compare", *common), message)
    official = tmp_path / "no-such-official.json"
    user_error(cli("evaluate", "correlate", "--sweep", "--official", official, *common), message)


def test_leaderboard_query_selection(board, user_error, tiny, tmp_path):
    result = board("-m", "map", "--query", "q1", "--query", "q2", "-f", "json")
    assert result.returncode == 0, result.stderr
    assert sorted((r["run"], r["n_queries"]) for r in json.loads(result.stdout)) == [
        ("alpha", 2),
        ("beta", 2),
    ]
    assert "runs rank no passage" not in result.stderr
    # all three qrels queries: beta ranks nothing for q3, which trec_eval leaves out of its mean
    result = board("-m", "map")
    assert "1 of 2 runs rank no passage for some of the 3 qrels queries" in result.stderr
    assert "beta (1)" in result.stderr
    topics = tmp_path / "topics.tsv"
    topics.write_text("q3\tthird query\nq7\tnot judged\n")
    result = board("-m", "map", "--queries", topics, "-c", "-f", "json")
    assert sorted((r["run"], r["n_queries"]) for r in json.loads(result.stdout)) == [
        ("alpha", 1),
        ("beta", 1),
    ]
    assert "each counted as 0, as -c asks): beta (1)" in result.stderr
    assert f"1 query is not in {tiny / 'qrels.txt'} (selected): q7" in result.stderr
    user_error(board("-m", "map", "--query", "q7"), "--query/--queries: none of the selected queries", "q7")
    user_error(board("-m", "map", "--queries", tmp_path / "none.txt"), "none.txt")


def test_compare_and_sweep_with_a_subset(cli, tiny, tmp_path):
    runs = ["--run", tiny / "run.alpha", "--run", tiny / "run.beta"]
    result = cli("evaluate", "compare", "--qrels", tiny / "qrels.txt", *runs, "-m", "P@1", "--query", "q1")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].split("\t")[9] == "1"
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"alpha": 2, "beta": 1, "gamma": 3}))
    gamma = tmp_path / "run.gamma"
    gamma.write_text("q1 Q0 d4 1 1.0 gamma\nq2 Q0 d7 1 1.0 gamma\n")
    sweep = ["evaluate", "correlate", "--sweep", "--official", official, "--qrels", tiny / "qrels.txt", *runs,
             "--run", gamma, "-m", "map,nDCG@10", "-l", "1", "-l", "4"]  # fmt: skip
    result = cli(*sweep)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()[1:]]
    assert [r[3] for r in rows if r[1] == "4" and r[2] == "map"] == ["nan"]
    # no passage is judged >= 4: every run scores 0 for map, hence nan; nDCG does not use the level
    assert f"nan for map at -l 4 in {tiny / 'qrels.txt'}: no passage is judged >= 4 there" in result.stderr
    assert "nDCG@10 at -l 4" not in result.stderr
    assert "2 of 3 runs rank no passage for some of the 3 queries of" in result.stderr  # beta, gamma: q3
    result = cli(*sweep, "--query", "q1", "--query", "q2")
    assert result.returncode == 0, result.stderr


def test_qrels_and_nuggets_with_a_subset(cli, graded, tmp_path):
    out = tmp_path / "q2.qrels"
    result = cli(
        "evaluate", "qrels", graded, "--prompt-class", QSR, "--query", "q2", "--query", "q5", "-o", out
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text() == "q2 0 p4 3\n"
    assert f"1 query is not in {graded} (selected): q5" in result.stderr
    assigned = tmp_path / "assigned.jsonl"
    nugget = {"nugget_id": "x", "nugget_text": "x", "importance": "vital", "assignment": "support"}
    assigned.write_text("".join(json.dumps({"run_id": "r", "query_id": q, "nuggets": [nugget]}) + "\n"
                                for q in ("q1", "q2", "q3")))  # fmt: skip
    result = cli("evaluate", "nuggets", assigned, "--query", "q1", "--query", "q3")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1] == "r\tV_strict\t1.0000\t0.0000\t2"


def test_python_api_takes_paths_dicts_and_the_cli_defaults(tiny, graded):
    runs = [tiny / "run.alpha", tiny / "run.beta"]
    report = leaderboard(tiny / "qrels.txt", runs, "nDCG@10", queries=["q1"])
    assert report.get("alpha", "nDCG@10").n_queries == 1
    # q2 holds only QSR grades, so the selection alone picks the kind; --label max by default
    assert build_qrels(graded, queries={"q2"}).rows == [("q2", "0", "p4", 3)]
    assert build_qrels(str(graded), selection=GradeFilter(QSR)).rows[0] == ("q1", "0", "p1", 5)
    ours = {"a": 0.5, "b": 0.4, "c": 0.1, "d": 0.3}
    by_dict = correlate(ours, {"a": 1, "b": 2, "c": 3, "e": 4})  # {run: rank}, as the official JSON
    assert (by_dict.spearman, by_dict.only_ours, by_dict.only_official) == (1.0, ["d"], ["e"])
    three = leaderboard(tiny / "qrels.txt", {"x": {"q1": {"d2": 1.0}}, "y": {"q1": {"d4": 1.0}},
                                             "z": {"q1": {"d3": 1.0}}}, "nDCG@1")  # fmt: skip
    scores = Official({"x": 0.9, "y": 0.1, "z": 0.5}, are_ranks=False)
    assert correlate(three, scores).spearman == 1.0


@pytest.mark.parametrize(
    ("given", "message"),
    [
        (["P@10", "recip_rank", "mrr"], "-m: mrr is the same measure as recip_rank; give it once"),
        (["P@10", "P_10"], "-m: P_10 is the same measure as P@10"),
        (["map,map"], "-m: map is given twice"),
    ],
)
def test_one_measure_named_twice_is_an_error(board, user_error, given, message):
    user_error(board(*[a for m in given for a in ("-m", m)]), message)


def test_a_group_and_a_measure_in_it_are_kept_once(board):
    r = board("-m", "official", "-m", "P.10")
    assert r.returncode == 0, r.stderr
    measures = [m for run, m in values(r.stdout) if run == "alpha"]
    assert len(measures) == len(set(measures)) and "P_10" in measures
