"""The real `rubric evaluate` CLI end to end on the tiny fixture."""

from __future__ import annotations

import json


def test_leaderboard_tsv_json_and_trec_eval(cli, tiny, tmp_path):
    runs = ["--run", tiny / "run.alpha", "--run", tiny / "run.beta"]
    result = cli(
        "evaluate", "leaderboard", "--qrels", tiny / "qrels.txt", *runs, "-m", "nDCG@10", "-m", "map"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:3] == [
        "run\tmeasure\tvalue\tstderr\tn_queries",
        "alpha\tnDCG@10\t0.7355\t0.0845\t3",
        "alpha\tmap\t0.5185\t0.0807\t3",
    ]
    out = tmp_path / "lb.json"
    args = ["evaluate", "leaderboard", "--qrels", tiny / "qrels.txt", *runs]
    result = cli(*args, "-m", "map", "-c", "-f", "json", "-o", out)
    assert result.returncode == 0, result.stderr
    rows = json.loads(out.read_text())
    assert [(r["run"], r["n_queries"]) for r in rows] == [("alpha", 3), ("beta", 3)]
    result = cli("evaluate", "leaderboard", "--qrels", tiny / "qrels.txt", "--run", tiny / "run.beta",
                 "-m", "official", "-f", "trec_eval")  # fmt: skip
    assert result.stdout.startswith("runid                 \tall\tbeta\nnum_q                 \tall\t2\n")


def test_leaderboard_name_from_file_and_errors(cli, user_error, tiny, tmp_path):
    twin = tmp_path / "input.twin"
    twin.write_text((tiny / "run.alpha").read_text())
    args = [
        "evaluate",
        "leaderboard",
        "--qrels",
        tiny / "qrels.txt",
        "--run",
        tiny / "run.alpha",
        "--run",
        twin,
    ]
    user_error(cli(*args, "-m", "map"), "run name 'alpha' is also the name of", "--name-from file")
    result = cli(*args, "-m", "map", "--name-from", "file")
    assert result.returncode == 0 and "\ntwin\tmap\t" in result.stdout
    user_error(cli(*args[:-2], "-m", "nDCG@ten"), "-m: nDCG@ten: the cutoff after @ must be a positive")
    user_error(cli(*args[:-2], "-m", "map", "-f", "xml"), "--format")
    bad = tmp_path / "bad.run"
    bad.write_text("q1 Q0 d1 1 1.0 r\nq1 Q0 d2 1\n")
    user_error(
        cli("evaluate", "leaderboard", "--qrels", tiny / "qrels.txt", "--run", bad, "-m", "map"), "bad.run:2:"
    )
    out = tmp_path / "out.tsv"
    user_error(
        cli(*args[:-2], "--run", tmp_path / "missing", "-m", "map", "-o", out), "missing: no such file"
    )
    assert not out.exists()


def test_correlate_leaderboard_and_sweep(cli, user_error, tiny, tmp_path):
    lb = tmp_path / "lb.tsv"
    lb.write_text("run\tmeasure\tvalue\tstderr\tn_queries\na\tmap\t0.5\t\t3\nb\tmap\t0.4\t\t3\nc\tmap\t0.1\t\t3\n"
                  "d\tmap\t0.3\t\t3\n")  # fmt: skip
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2, "c": 3, "e": 4}))
    result = cli("evaluate", "correlate", "--leaderboard", lb, "--official", official)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "runs\tspearman\tkendall\n3\t1.0000\t1.0000\n"
    assert "left out runs not on the official leaderboard: d" in result.stderr
    assert "e" in result.stderr.splitlines()[-1]
    official.write_text(json.dumps({"alpha": 2, "beta": 1, "gamma": 3}))
    gamma = tmp_path / "run.gamma"
    gamma.write_text("q1 Q0 d4 1 1.0 gamma\nq2 Q0 d7 1 1.0 gamma\n")
    result = cli("evaluate", "correlate", "--sweep", "--official", official, "--qrels", tiny / "qrels.txt",
                 "--run", tiny / "run.alpha", "--run", tiny / "run.beta", "--run", gamma, "-m", "map",
                 "-m", "P.1", "-l", "1", "-l", "3")  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "method\tmin_rating\ttrec_eval_metric\tspearman\tkendall"
    assert [line.split("\t")[1:3] for line in lines[1:]] == [
        ["1", "map"],
        ["3", "map"],
        ["1", "P.1"],
        ["3", "P.1"],
    ]
    user_error(cli("evaluate", "correlate", "--sweep", "--official", official, "-m", "map"), "--qrels")
    user_error(cli("evaluate", "correlate", "--official", official), "--leaderboard")


def test_compare(cli, user_error, tiny):
    args = ["evaluate", "compare", "--qrels", tiny / "qrels.txt", "--run", tiny / "run.alpha"]
    result = cli(
        *args, "--run", tiny / "run.beta", "-m", "nDCG@10", "-m", "P@1", "--test", "randomization", "-c"
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["run_a", "run_b", "measure"]
    assert [line.split("\t")[:3] for line in lines[1:]] == [
        ["alpha", "beta", "nDCG@10"],
        ["alpha", "beta", "P@1"],
    ]
    assert all(line.split("\t")[9] == "3" for line in lines[1:])
    user_error(cli(*args, "-m", "map"), "at least two runs")
    user_error(cli(*args, "--run", tiny / "run.beta", "-m", "map", "--correction", "fdr"), "--correction")
