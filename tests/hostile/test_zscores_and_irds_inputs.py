"""Bad z-score files (`evaluate leaderboard --zscores`) and bad ir_datasets ids (``irds:ID`` for
topics, qrels and passage texts): one `rubric: error:` line naming the file and line or the id,
exit 2, no output written."""

from __future__ import annotations

import pytest

QRELS = "q1 0 d1 1\nq1 0 d3 0\n"
RUN = "q1 Q0 d1 1 2.0 r\nq1 Q0 d3 2 1.0 r\n"


@pytest.fixture
def board(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return [
        "evaluate",
        "leaderboard",
        "--qrels",
        qrels,
        "--run",
        run,
        "-m",
        "map",
        "-o",
        tmp_path / "out.tsv",
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 map 0.1\n", "z.txt:1: a z-score line is 'qid measure mean std_dev', found 3 fields"),
        ("q1 map 0.1 0.2 extra\n", "z.txt:1: a z-score line is 'qid measure mean std_dev', found 5 fields"),
        ("q1 map mean 0.2\n", "z.txt:1: mean and std_dev must be numbers, found mean 0.2"),
        ("q1 map 0.1 0.2\nq1 map 0.1 0.3\n", "z.txt:2: query q1 measure map again, with other numbers"),
        ("", "z.txt: holds no z-score lines"),
        (b"q1 map 0.1 \xff\n", "z.txt:1"),
    ],
)
def test_bad_zscore_files(cli, user_error, board, tmp_path, text, message):
    z = tmp_path / "z.txt"
    z.write_bytes(text if isinstance(text, bytes) else text.encode())
    user_error(cli(*board, "--zscores", z), message)
    assert not (tmp_path / "out.tsv").exists()


def test_a_nan_zscore_is_read_as_trec_eval_reads_it_and_said(cli, board, tmp_path):
    """trec_eval's own zscores_file has `nan nan` lines (set_F) and prints nan for them; the table
    shows an empty cell, so a warning names the first such line (issue 33: it was silent)."""
    z = tmp_path / "z.txt"
    z.write_text("q1 map nan 0.2\nq1 P_10 0.1 inf\n")
    result = cli(*board, "--zscores", z)
    assert result.returncode == 0, result.stderr
    assert "z.txt:1: a mean or std_dev that is not a finite number (2 lines)" in result.stderr
    out = tmp_path / "out.tsv"
    out.unlink()
    result = cli(*board[:-2], "--zscores", z, "-f", "trec_eval")
    assert result.returncode == 0 and result.stdout.split() == ["Zmap", "all", "nan"]


def test_zscores_missing_file_and_with_complete(cli, user_error, board, tmp_path):
    user_error(cli(*board, "--zscores", tmp_path / "absent.txt"), "absent.txt")
    z = tmp_path / "z.txt"
    z.write_text("q1 map 0.1 0.2\n")
    user_error(cli(*board, "--zscores", z, "-c"), "--zscores: not with -c/--complete")
    assert not (tmp_path / "out.tsv").exists()


@pytest.fixture
def irds(tmp_path):
    pytest.importorskip("ir_datasets")
    from helpers import irds_local as local

    return local


def test_bad_ir_datasets_ids(cli, user_error, irds, tmp_path):
    run = tmp_path / "run.txt"
    run.write_text(RUN)
    out = tmp_path / "p.jsonl.gz"
    good = irds.register(tmp_path / "good")
    no_docs = irds.register(tmp_path / "nodocs", docs=False)
    no_queries = irds.register(tmp_path / "noq", queries=False)
    no_qrels = irds.register(tmp_path / "noqrels", qrels=False)
    convert = ["convert", "runs", run, "-o", out]
    cases = [
        ([*convert, "--topics", "irds:no/such", "-C", f"irds:{good}"],
         "irds:no/such: no such ir_datasets dataset"),
        ([*convert, "--topics", "irds:", "-C", f"irds:{good}"], "irds:: give a dataset id after irds:"),
        ([*convert, "--topics", f"irds:{no_queries}", "-C", f"irds:{good}"],
         f"irds:{no_queries}: this ir_datasets dataset has no queries"),
        ([*convert, "--topics", f"irds:{good}", "-C", f"irds:{no_docs}"],
         f"irds:{no_docs}: this ir_datasets dataset has no documents"),
        ([*convert, "--topics", f"irds:{good}", "-C", f"irds:{good}", "--qrels", f"irds:{no_qrels}"],
         f"irds:{no_qrels}: this ir_datasets dataset has no relevance judgments"),
        (["evaluate", "leaderboard", "--qrels", f"irds:{no_qrels}", "--run", run, "-m", "map"],
         f"irds:{no_qrels}: this ir_datasets dataset has no relevance judgments"),
        (["evaluate", "leaderboard", "--qrels", "irds:msmarco-passage/nope", "--run", run, "-m", "map"],
         "irds:msmarco-passage/nope: no such ir_datasets dataset"),
    ]  # fmt: skip
    for args, message in cases:
        user_error(cli(*args), message)
        assert not out.exists()
    gone = irds.register(tmp_path / "gone")
    (tmp_path / "gone" / "queries.tsv").unlink()
    user_error(cli(*convert, "--topics", f"irds:{gone}", "-C", f"irds:{good}"),
               f"irds:{gone}: ir_datasets could not provide the queries")  # fmt: skip
    assert not out.exists()
