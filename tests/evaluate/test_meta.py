"""`rubric evaluate meta`: the three taus of "The Great Nugget Recall" against scipy, score tables
in every format, bootstrap intervals, and the run level equal to `evaluate correlate`."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from scipy.stats import kendalltau, rankdata, spearmanr

from rubric.evaluate.meta import meta_evaluate
from rubric.evaluate.score_tables import read_score_table

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny"
RUNS = [f"run{i}" for i in range(7)]
TOPICS = [f"t{j}" for j in range(9)]


def _scores(seed: int, noise: float) -> dict[str, dict[str, float]]:
    """Per-(run, topic) scores: a run effect plus topic noise, rounded as trec_eval prints."""
    rng = random.Random(seed)
    base = {r: i / 10 for i, r in enumerate(RUNS)}
    return {
        r: {t: round(min(1, max(0, base[r] + rng.uniform(-noise, noise))), 4) for t in TOPICS} for r in RUNS
    }


def _write_long(path, scores, measure="m", with_all=True):
    lines = ["run\tmeasure\tquery\tvalue"]
    for r, per in scores.items():
        lines += [f"{r}\t{measure}\t{t}\t{v:.4f}" for t, v in per.items()]
        if with_all:
            lines.append(f"{r}\t{measure}\tall\t{sum(per.values()) / len(per):.4f}")
    path.write_text("\n".join(lines) + "\n")
    return path


def _expected(x, y):
    """The three taus computed independently with scipy from the per-(run, topic) values."""
    runs = sorted(x)
    mx = [round(sum(x[r].values()) / len(x[r]), 4) for r in runs]
    my = [round(sum(y[r].values()) / len(y[r]), 4) for r in runs]
    tau_run = kendalltau(rankdata([-v for v in mx]), rankdata([-v for v in my])).statistic
    rho_run = spearmanr(rankdata([-v for v in mx]), rankdata([-v for v in my])).statistic
    per_topic = []
    for t in TOPICS:
        xs, ys = [x[r][t] for r in runs], [y[r][t] for r in runs]
        if len(set(xs)) > 1 and len(set(ys)) > 1:
            per_topic.append(kendalltau(xs, ys).statistic)
    pairs = kendalltau([x[r][t] for r in runs for t in TOPICS], [y[r][t] for r in runs for t in TOPICS])
    return tau_run, rho_run, sum(per_topic) / len(per_topic), pairs.statistic


def test_three_taus_equal_scipy(tmp_path):
    x, y = _scores(1, 0.3), _scores(2, 0.3)
    xt = read_score_table(_write_long(tmp_path / "x.tsv", x))
    yt = read_score_table(_write_long(tmp_path / "y.tsv", y))
    report = meta_evaluate([("auto", xt)], yt, resamples=0)
    (row,) = report.rows
    tau_run, rho_run, tau_topic, tau_pairs = _expected(x, y)
    assert (row.runs, row.topics, row.pairs) == (7, 9, 63)
    assert row.tau_run == pytest.approx(tau_run, abs=1e-12)
    assert row.rho_run == pytest.approx(rho_run, abs=1e-12)
    assert row.tau_topic_avg == pytest.approx(tau_topic, abs=1e-12)
    assert row.tau_pairs == pytest.approx(tau_pairs, abs=1e-12)
    assert 0 < row.tau_pairs < row.tau_run  # noise hurts the pairs more than the means


def test_constant_topic_is_left_out_and_reported(tmp_path):
    x, y = _scores(1, 0.3), _scores(2, 0.3)
    for r in RUNS:
        y[r]["t3"] = 0.5  # the reference gives every run the same score on t3: no tau there
    xt = read_score_table(_write_long(tmp_path / "x.tsv", x))
    yt = read_score_table(_write_long(tmp_path / "y.tsv", y))
    report = meta_evaluate([("auto", xt)], yt, resamples=0)
    (row,) = report.rows
    assert row.skipped_topics == ["t3"]
    assert row.tau_topic_avg == pytest.approx(_expected(x, y)[2], abs=1e-12)
    assert any("t3" in n and "fewer than 2 distinct" in n for n in report.notes)


def test_only_pairs_on_both_sides_count(tmp_path):
    """A run missing a topic on one side (trec_eval skips queries a run does not rank): that
    pair is left out, and its run mean is taken over the topics both sides have."""
    x, y = _scores(1, 0.3), _scores(2, 0.3)
    del y["run2"]["t0"]
    xt = read_score_table(_write_long(tmp_path / "x.tsv", x))
    yt = read_score_table(_write_long(tmp_path / "y.tsv", y))
    report = meta_evaluate([("auto", xt)], yt, resamples=0)
    (row,) = report.rows
    assert row.pairs == 62
    assert row.paired.x_runs["run2"] == round(sum(v for t, v in x["run2"].items() if t != "t0") / 8, 4)
    assert row.paired.x_runs["run1"] == round(sum(x["run1"].values()) / 9, 4)
    assert any("1 (run, topic) pairs are scored on one side only" in n for n in report.notes)


def test_bootstrap_is_seeded_and_brackets_the_estimate(tmp_path):
    x, y = _scores(1, 0.3), _scores(2, 0.3)
    xt = read_score_table(_write_long(tmp_path / "x.tsv", x))
    yt = read_score_table(_write_long(tmp_path / "y.tsv", y))
    a = meta_evaluate([("auto", xt)], yt, resamples=300, seed=7).rows[0]
    b = meta_evaluate([("auto", xt)], yt, resamples=300, seed=7).rows[0]
    c = meta_evaluate([("auto", xt)], yt, resamples=300, seed=8).rows[0]
    assert a.intervals == b.intervals
    assert a.intervals != c.intervals
    for name in ("tau_run", "tau_topic_avg", "tau_pairs"):
        low, high = a.intervals[name]
        assert low <= getattr(a, name) <= high
        assert low < high
    narrow = meta_evaluate([("auto", xt)], yt, resamples=300, seed=7, confidence=0.5).rows[0]
    assert narrow.intervals["tau_pairs"][1] - narrow.intervals["tau_pairs"][0] < (
        a.intervals["tau_pairs"][1] - a.intervals["tau_pairs"][0]
    )


def test_formats_of_score_tables(tmp_path):
    """nuggets -o (wide, empty cells), trec_eval -q (one file per run, or runid blocks), a folder."""
    wide = tmp_path / "nuggets.tsv"
    wide.write_text(
        "run\tquery\tV_strict\tA_strict\tnuggets\tvital\tanswered\n"
        "ragA\tq1\t0.5000\t0.2500\t4\t2\t1\n"
        "ragA\tq2\t\t0.0000\t3\t0\t1\n"
    )
    t = read_score_table(wide)
    assert t.measures == ["V_strict", "A_strict"]
    assert t.per_query["V_strict"] == {"ragA": {"q1": 0.5}}  # q2 has no vital nugget: undefined
    assert t.per_query["A_strict"]["ragA"] == {"q1": 0.25, "q2": 0.0}

    folder = tmp_path / "treceval"
    folder.mkdir()
    (folder / "bm25.txt").write_text(
        "ndcg_cut_10           \tq1\t0.5000\nndcg_cut_10           \tall\t0.5000\n"
    )
    (folder / "other.txt").write_text(
        "ndcg_cut_10\tq1\t0.2500\nrunid\tall\tdense\nndcg_cut_10\tall\t0.2500\n"
        "ndcg_cut_10\tq1\t0.1250\nrunid\tall\tsparse\nndcg_cut_10\tall\t0.1250\n"
    )
    t = read_score_table(folder)
    assert t.per_query["ndcg_cut_10"] == {"bm25": {"q1": 0.5}, "dense": {"q1": 0.25}, "sparse": {"q1": 0.125}}
    assert t.summary["ndcg_cut_10"]["dense"] == 0.25
    assert t.resolve("ndcg_cut.10") == "ndcg_cut_10"

    ranks = tmp_path / "official.json"
    ranks.write_text(json.dumps({"a": 1, "b": 2}))
    t = read_score_table(ranks)
    assert t.are_ranks and t.summary == {"score": {"a": 1.0, "b": 2.0}}


@pytest.mark.parametrize(
    "content, fragments",
    [
        ("run\tmeasure\tquery\tvalue\nr\tm\tq1\tabc\n", ["x.tsv:2", "expected a number", "'abc'"]),
        ("run\tmeasure\tquery\tvalue\nr\tm\tq1\t0.5\nr\tm\tq1\t0.4\n", ["x.tsv:3", "already in", "x.tsv:2"]),
        ("m\tq1\t0.5\nm\tall\t0.5\nm\tq1\t0.3\nm\tall\t0.3\n", ["x.tsv", "without runid lines"]),
        ("hello world\n", ["x.tsv:1", "not a score table"]),
    ],
)
def test_bad_tables_name_the_line(tmp_path, content, fragments):
    from rubric.errors import UserError

    path = tmp_path / "x.tsv"
    path.write_text(content)
    with pytest.raises(UserError) as e:
        read_score_table(path)
    for f in fragments:
        assert f in str(e.value)


def _tiny_tables(cli, tmp_path):
    qrels, runs = EXAMPLE / "qrels.txt", EXAMPLE / "runs"
    human, strict = tmp_path / "human.tsv", tmp_path / "strict.tsv"
    for out, level in ((human, "1"), (strict, "3")):
        r = cli("evaluate", "leaderboard", "--qrels", qrels, "--run", runs, "-m", "P.5", "-m", "ndcg_cut.10",
                "-l", level, "-q", "-o", out)  # fmt: skip
        assert r.returncode == 0, r.stderr
    return human, strict


def test_cli_run_level_equals_correlate(cli, tmp_path):
    example = EXAMPLE
    human, strict = _tiny_tables(cli, tmp_path)
    r = cli("evaluate", "meta", f"strict={strict}", "-R", f"human={human}", "-m", "P.5", "--resamples", "50",
            "--per-topic", tmp_path / "topics.tsv", "-f", "json")  # fmt: skip
    assert r.returncode == 0, r.stderr
    (row,) = json.loads(r.stdout)["rows"]
    assert (row["condition"], row["measure"], row["runs"], row["topics"], row["pairs"]) == (
        "strict",
        "P.5",
        3,
        5,
        15,
    )
    summary = {}
    for name, level in (("strict", "3"), ("human", "1")):
        out = tmp_path / f"{name}-summary.tsv"
        r = cli("evaluate", "leaderboard", "--qrels", example / "qrels.txt", "--run", example / "runs",
                "-m", "P.5", "-m", "ndcg_cut.10", "-l", level, "-o", out)  # fmt: skip
        assert r.returncode == 0, r.stderr
        summary[name] = out
    c = cli("evaluate", "correlate", "--leaderboard", summary["strict"], "--official", summary["human"],
            "--measure", "P.5")  # fmt: skip
    assert c.returncode == 0, c.stderr
    runs, rho, tau = c.stdout.splitlines()[1].split("\t")
    assert f"{row['tau_run']:.4f}" == tau and f"{row['rho_run']:.4f}" == rho
    lines = (tmp_path / "topics.tsv").read_text().splitlines()
    assert lines[0] == "condition\tmeasure\tquery\truns\tspearman\tkendall"
    assert [line.split("\t")[2] for line in lines[1:]] == ["q1", "q2", "q3", "q4", "q5", "all"]
    assert lines[-1].split("\t")[5] == f"{row['tau_run']:.4f}"


def test_cli_official_ranks_give_run_level_only(cli, tmp_path):
    human, strict = _tiny_tables(cli, tmp_path)
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"dense-rerank": 1, "bm25": 2, "title-match": 3}))
    r = cli("evaluate", "meta", strict, "-R", official, "-m", "ndcg_cut.10", "--resamples", "0")
    assert r.returncode == 0, r.stderr
    header, line = r.stdout.splitlines()
    row = dict(zip(header.split("\t"), line.split("\t"), strict=True))
    assert row["reference_measure"] == "score" and row["tau_run"] == "1.0000" and row["tau_pairs"] == ""
    assert row["topics"] == "0" and row["pairs"] == "0"


def test_cli_errors(cli, user_error, tmp_path):
    human, strict = _tiny_tables(cli, tmp_path)
    user_error(cli("evaluate", "meta", strict), "--reference")
    user_error(
        cli("evaluate", "meta", strict, "-R", human, "-m", "map"), "no scores for measure 'map'", "P.5"
    )
    user_error(cli("evaluate", "meta", strict, "-R", human, "--plot", tmp_path / "x.gif"), "--plot", ".png")
    user_error(cli("evaluate", "meta", strict, "-R", human, "--confidence", "2"), "--confidence")
    two = tmp_path / "two.tsv"
    two.write_text("run\tmeasure\tquery\tvalue\nbm25\tP.5\tq1\t0.2\ntitle-match\tP.5\tq1\t0.1\n")
    user_error(cli("evaluate", "meta", two, "-R", human, "-m", "P.5"), "only 2 runs")


def test_cli_trec_eval_reference_folder_matches_the_tsv(cli, tmp_path):
    """trec_eval -q files (one per run, its names ndcg_cut_10 / P_5) give the same rows as our TSV."""
    human, strict = _tiny_tables(cli, tmp_path)
    folder = tmp_path / "trec_eval"
    folder.mkdir()
    for run in sorted((EXAMPLE / "runs").iterdir()):
        r = cli("evaluate", "leaderboard", "--qrels", EXAMPLE / "qrels.txt", "--run", run, "-m", "P.5",
                "-m", "ndcg_cut.10", "-q", "-f", "trec_eval", "-o", folder / f"{run.stem}.txt")  # fmt: skip
        assert r.returncode == 0, r.stderr
    assert "P_5" in (folder / "bm25.txt").read_text()
    via_folder = cli("evaluate", "meta", strict, "-R", folder, "--resamples", "0", "-f", "json")
    via_tsv = cli("evaluate", "meta", strict, "-R", human, "--resamples", "0", "-f", "json")
    assert via_folder.returncode == 0, via_folder.stderr
    a, b = json.loads(via_folder.stdout)["rows"], json.loads(via_tsv.stdout)["rows"]
    assert [r["reference_measure"] for r in a] == ["P_5", "ndcg_cut_10"]
    for ra, rb in zip(a, b, strict=True):
        assert {k: v for k, v in ra.items() if k != "reference_measure"} == {
            k: v for k, v in rb.items() if k != "reference_measure"
        }


def test_one_named_reference_measure_is_not_used_for_other_measures(tmp_path):
    """A reference holding only nDCG@10 does not silently stand in for P@5."""
    from rubric.errors import UserError

    x = read_score_table(_write_long(tmp_path / "x.tsv", _scores(1, 0.3), measure="P.5"))
    y = read_score_table(_write_long(tmp_path / "y.tsv", _scores(2, 0.3), measure="ndcg_cut.10"))
    with pytest.raises(UserError, match="no measure is in every table"):
        meta_evaluate([("x", x)], y, resamples=0)
    (row,) = meta_evaluate([("x", x)], y, reference_measure="ndcg_cut_10", resamples=0).rows
    assert (row.measure, row.reference_measure) == ("P.5", "ndcg_cut.10")


def test_conditions_with_different_measures_share_one_table(tmp_path):
    """Rubric-Qrels nDCG@10 and Cover@10 against the human nDCG@10 in one call."""
    from rubric.errors import UserError

    qrels = read_score_table(_write_long(tmp_path / "q.tsv", _scores(1, 0.3), measure="ndcg_cut.10"))
    cover = read_score_table(_write_long(tmp_path / "c.tsv", _scores(3, 0.3), measure="cover@10"))
    human = read_score_table(_write_long(tmp_path / "h.tsv", _scores(2, 0.3), measure="ndcg_cut.10"))
    report = meta_evaluate(
        [("qrels", qrels), ("cover", cover)],
        human,
        measures=["ndcg_cut.10", "cover@10"],
        reference_measure="ndcg_cut.10",
        resamples=0,
    )
    assert [(r.condition, r.measure) for r in report.rows] == [
        ("qrels", "ndcg_cut.10"),
        ("cover", "cover@10"),
    ]
    assert "qrels: no cover@10 scores; no row for it" in report.notes
    with pytest.raises(UserError, match="no scores for measure 'map'"):
        meta_evaluate(
            [("qrels", qrels), ("cover", cover)],
            human,
            measures=["map"],
            reference_measure="ndcg_cut.10",
            resamples=0,
        )


def test_cli_scatter_tsv_holds_the_figures_points(cli, user_error, tmp_path):
    """--scatter: every (run, topic) pair of both tables and the runs' scores (query all), the
    values read back equal to the two score tables."""
    human, strict = _tiny_tables(cli, tmp_path)
    out = tmp_path / "scatter.tsv"
    r = cli("evaluate", "meta", f"strict={strict}", "-R", f"human={human}", "-m", "P.5", "--resamples", "0",
            "--scatter", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert f"wrote {out}" in r.stderr
    rows = [line.split("\t") for line in out.read_text().splitlines()]
    assert rows[0] == ["condition", "measure", "reference_measure", "run", "query", "evaluation", "reference"]
    x, y = read_score_table(strict), read_score_table(human)
    points = {(run, q): (float(a), float(b)) for _, _, _, run, q, a, b in rows[1:]}
    assert len(points) == len(rows) - 1 == 3 * 5 + 3
    for (run, q), (a, b) in points.items():
        if q != "all":
            xq, yq = x.per_query[x.resolve("P.5")], y.per_query[y.resolve("P.5")]
            assert a == pytest.approx(xq[run][q]) and b == pytest.approx(yq[run][q])
    assert {q for _, q in points} == {"q1", "q2", "q3", "q4", "q5", "all"}
    user_error(
        cli("evaluate", "meta", "a.jsonl", "-R", "b.jsonl", "--confusion", "--scatter", out), "--scatter"
    )
