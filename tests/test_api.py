"""The public API at ``rubric``: light to import, every name resolves, the documented example runs
and gives what the commands give."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
TINY = ROOT / "examples" / "tiny"
HEAVY = ("torch", "transformers", "openai", "pandas")


def _python(code: str) -> str:
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC), "RUBRIC_CACHE_DIR": os.environ["RUBRIC_CACHE_DIR"]},  # this session's
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_import_rubric_and_every_public_name_load_nothing_heavy():
    """`import rubric`, and touching every exported name, imports neither torch, transformers nor
    openai: they load only when a backend is built."""
    probe = (
        "import sys, rubric; rubric.leaderboard; rubric.grade; rubric.compare\n"
        f"before = sorted(m for m in {HEAVY!r} if m in sys.modules)\n"
        "names = [getattr(rubric, n) for n in rubric.__all__]\n"
        f"print(before, sorted(m for m in {HEAVY!r} if m in sys.modules), len(names))"
    )
    import rubric

    assert _python(probe).strip() == f"[] [] {len(rubric.__all__)}"


def test_a_report_shows_as_a_table_without_pandas_and_imports_it_for_a_dataframe():
    """pandas is the `notebook` extra: a report's repr and HTML table need nothing, and only
    `to_dataframe()` imports it."""
    probe = (
        "import sys, rubric\n"
        "b = rubric.leaderboard('examples/tiny/qrels.txt', ['examples/tiny/runs'], 'nDCG@10', level=2)\n"
        "repr(b); b._repr_html_(); before = 'pandas' in sys.modules\n"
        "print(before, b.to_dataframe().shape, 'pandas' in sys.modules)"
    )
    assert _python(probe).strip() == "False (3, 5) True"


def test_an_unknown_name_is_an_attribute_error():
    import rubric

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        rubric.nope  # noqa: B018
    assert {"grade", "leaderboard", "compare", "nugget_scores", "read_bank"} <= set(dir(rubric))


def test_compare_takes_qrels_and_runs_and_equals_the_command(cli, tmp_path):
    """`rubric.compare(qrels, runs, measures)` scores the runs itself; its TSV is the command's."""
    import rubric

    report = rubric.compare(TINY / "qrels.txt", [TINY / "runs"], ["nDCG@10", "P@5"], test="t")
    assert {(r.run_a, r.run_b) for r in report.rows} == {
        ("bm25", "dense-rerank"),
        ("bm25", "title-match"),
        ("dense-rerank", "title-match"),
    }
    assert len(report.rows) == 6 and all(0 <= r.p_adjusted <= 1 for r in report.rows)
    command = cli("evaluate", "compare", "--qrels", TINY / "qrels.txt", "-r", TINY / "runs", "-m", "nDCG@10",
                  "-m", "P@5")  # fmt: skip
    assert command.returncode == 0, command.stderr
    assert report.to_tsv() == command.stdout
    rows = json.loads(report.to_json())
    assert rows[0]["run_a"] == "bm25" and rows[0]["significant"] in ("yes", "no")
    assert "\\begin{tabular}" in report.to_latex()


def test_pool_checks_and_pools_as_the_command_does(cli, tmp_path):
    """`rubric.pool` takes the command's route: the same options refused before any file is
    read, the same passages written by `rubric convert runs`."""
    import rubric
    from rubric.data.jsonl import read_passages
    from rubric.errors import UserError

    missing = tmp_path / "no-such-queries.json"
    with pytest.raises(UserError, match="name_from: expected one of tag, file, got 'x'"):
        rubric.pool(missing, [TINY / "runs"], TINY / "collection.tsv", name_from="x")
    with pytest.raises(UserError, match="give at least one run"):
        rubric.pool(missing, [], TINY / "collection.tsv")
    passages = rubric.pool(
        TINY / "queries.json", [TINY / "runs"], TINY / "collection.tsv", qrels=TINY / "qrels.txt"
    )
    out = tmp_path / "pool.jsonl.gz"
    command = cli("convert", "runs", "--topics", TINY / "queries.json", "-C", TINY / "collection.tsv",
                  "--qrels", TINY / "qrels.txt", "-o", out, TINY / "runs")  # fmt: skip
    assert command.returncode == 0, command.stderr
    assert [q.model_dump() for q in passages] == [q.model_dump() for q in read_passages(out)]


def test_nugget_scores_is_a_report_that_equals_the_command(cli, tmp_path):
    import rubric

    report = rubric.nugget_scores(TINY / "assigned-manual.jsonl")
    assert isinstance(report, rubric.Report)
    assert report.runs == ["dense-rerank", "bm25", "title-match"]
    per_query = tmp_path / "per-query.tsv"
    for fmt, text in (("tsv", report.to_tsv()), ("json", report.to_json()), ("latex", report.to_latex())):
        args = ["evaluate", "nuggets", TINY / "assigned-manual.jsonl", "--format", fmt]
        command = cli(*args, "-o", per_query)
        assert command.returncode == 0, command.stderr
        assert command.stdout == text
    assert per_query.read_text() == report.per_query_tsv()
    assert report.get("bm25", "V_strict").value == pytest.approx(report.values("V_strict")["bm25"])
