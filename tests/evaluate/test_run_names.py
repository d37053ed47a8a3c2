"""Runs named on the command line (``--run NAME=PATH``): the toolkits' runs that share a tag and a
file name (every first-stage run ``trec_results_dl20.txt``, tagged ``rank``) are told apart, in
every command that reads runs, and two runs of one name are an error naming both files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from helpers import FIXTURES
from rubric.data.jsonl import read_passages
from rubric.data.named import split_named
from rubric.data.trec import read_runs, run_sources

TINY = FIXTURES / "tiny"


@pytest.fixture
def twins(tmp_path: Path) -> tuple[Path, Path]:
    """Two different runs, both tagged ``rank`` and both called ``trec_results.txt``."""
    paths = []
    for name, source in (("a", "run.alpha"), ("b", "run.beta")):
        (tmp_path / name).mkdir()
        lines = [" ".join(line.split()[:5] + ["rank"]) for line in (TINY / source).read_text().splitlines()]
        path = tmp_path / name / "trec_results.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(path)
    return paths[0], paths[1]


def test_split_named_keeps_paths_paths(tmp_path: Path):
    assert split_named("bm25=runs/a.txt") == ("bm25", "runs/a.txt")
    assert split_named("runs/x=y.txt") == (None, "runs/x=y.txt")  # a name holds no slash
    odd = tmp_path / "a=b.run"
    odd.write_text("")
    assert split_named(str(odd)) == (None, str(odd))  # an existing file is a file
    assert split_named("=x") == (None, "=x") and split_named("x=") == (None, "x=")


def test_leaderboard_reports_two_named_rows(cli, twins):
    a, b = twins
    r = cli("evaluate", "leaderboard", "--run", f"bm25={a}", "--run", f"rm3={b}", "--qrels",
            TINY / "qrels.txt", "-m", "P.5")  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()[1:]]
    assert sorted(row[0] for row in rows) == ["bm25", "rm3"]
    plain = cli("evaluate", "leaderboard", "--run", TINY / "run.alpha", "--run", TINY / "run.beta",
                "--qrels", TINY / "qrels.txt", "-m", "P.5")  # fmt: skip
    by_tag = {line.split("\t")[0]: line.split("\t")[2] for line in plain.stdout.splitlines()[1:]}
    assert {row[0]: row[2] for row in rows} == {"bm25": by_tag["alpha"], "rm3": by_tag["beta"]}
    assert "scored 2 runs" in r.stderr


@pytest.mark.parametrize("name_from", ["tag", "file"])
def test_same_name_is_an_error_naming_both_files(cli, user_error, twins, name_from):
    a, b = twins
    r = cli("evaluate", "leaderboard", "--run", a, "--run", b, "--qrels", TINY / "qrels.txt", "-m", "P.5",
            "--name-from", name_from)  # fmt: skip
    user_error(r, str(a), str(b), "--run NAME=PATH")


def test_one_name_given_twice_is_an_error(cli, user_error, twins):
    a, b = twins
    r = cli("evaluate", "leaderboard", "--run", f"x={a}", "--run", f"x={b}", "--qrels", TINY / "qrels.txt",
            "-m", "P.5")  # fmt: skip
    user_error(r, "run name 'x'", str(a), str(b))


def test_a_name_names_one_file_not_a_directory(cli, user_error, twins):
    r = cli(
        "evaluate", "leaderboard", "--run", f"x={twins[0].parent}", "--qrels", TINY / "qrels.txt", "-m", "P.5"
    )
    user_error(r, "NAME=PATH names one run file")


def test_compare_convert_and_sweep_take_names(cli, twins, tmp_path):
    a, b = twins
    named = ["--run", f"bm25={a}", "--run", f"rm3={b}"]
    r = cli("evaluate", "compare", *named, "--qrels", TINY / "qrels.txt", "-m", "P.5")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[1].split("\t")[:2] == ["bm25", "rm3"]
    out = tmp_path / "pool.jsonl.gz"
    r = cli("convert", "runs", "--queries", TINY / "queries.tsv", "--collection", TINY / "collection.tsv",
            f"bm25={a}", "--runs", f"rm3={b}", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "from 2 runs" in r.stderr
    methods = {e.method for q in read_passages(out) for p in q.paragraphs for e in p.paragraph_data.rankings}
    assert methods == {"bm25", "rm3"}
    third = tmp_path / "c" / "trec_results.txt"
    third.parent.mkdir()
    shutil.copy(a, third)
    official = tmp_path / "official.json"
    official.write_text('{"bm25": 1, "rm3": 2, "third": 3}')
    r = cli("evaluate", "correlate", "--sweep", "--qrels", TINY / "qrels.txt", *named,
            "--run", f"third={third}", "--official", official, "-m", "P.5")  # fmt: skip
    assert r.returncode == 0, r.stderr
    r = cli("evaluate", "correlate", "--sweep", "--qrels", TINY / "qrels.txt", "--run", a, "--run", b,
            "--official", official, "-m", "P.5", "--name-from", "file")  # fmt: skip
    assert r.returncode == 2 and "--run NAME=PATH" in r.stderr


def test_library_read_runs_and_sources(twins):
    a, b = twins
    assert [name for _, name in run_sources([f"bm25={a}", b], name_from="file")] == ["bm25", "trec_results"]
    assert [run.name for run in read_runs([f"one={a}", f"two={b}"])] == ["one", "two"]
