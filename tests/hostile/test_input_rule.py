"""The input rule, for every reader: '-' and pipes, gzip by content on the stream, no byte-order
mark, finite scores and grades, repeated ids never silently dropped."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path

import pytest

from helpers import faults

rubric, assert_one_error = faults.rubric, faults.assert_one_error
RATING = faults.graded_fixture.RATING
BOM = b"\xef\xbb\xbf"
EXAMPLE = faults.EXAMPLE


@pytest.fixture
def f(tmp_path) -> dict[str, Path]:
    return faults.valid_inputs(tmp_path / "in")


def _leaderboard(*args: object, **kw) -> bytes:
    r = rubric("evaluate", "leaderboard", *args, "-m", "nDCG@10", "-m", "P@5", timeout=120, **kw)
    assert r.returncode == 0, r.stderr
    return r.stdout


# --- standard input, pipes, fifos, process substitution ----------------------------------------


@pytest.fixture
def run_gz(tmp_path) -> Path:
    path = tmp_path / "bm25.run.gz"
    path.write_bytes(gzip.compress((EXAMPLE / "runs" / "bm25.run").read_bytes()))
    return path


def test_a_run_piped_through_zcat_equals_the_file(run_gz):
    """Acceptance: `zcat run.gz | rubric evaluate leaderboard --qrels Q --run - -m nDCG@10`."""
    qrels = EXAMPLE / "qrels.txt"
    expected = _leaderboard("--qrels", qrels, "--run", run_gz)
    with subprocess.Popen(["zcat", run_gz], stdout=subprocess.PIPE) as zcat:
        assert _leaderboard("--qrels", qrels, "--run", "-", stdin=zcat.stdout) == expected
    # gzip bytes on a pipe: detected on the stream, the first bytes are not lost
    with run_gz.open("rb") as raw, subprocess.Popen(["cat"], stdin=raw, stdout=subprocess.PIPE) as cat:
        assert _leaderboard("--qrels", qrels, "--run", "-", stdin=cat.stdout) == expected
    assert _leaderboard("--qrels", "-", "--run", run_gz, input=qrels.read_bytes()) == expected


@pytest.mark.subprocess
def test_process_substitution_dev_stdin_and_a_fifo(run_gz, tmp_path):
    """Acceptance: `--run <(zcat run.gz)` equals the file (bash, a real /dev/fd path)."""
    qrels = EXAMPLE / "qrels.txt"
    expected = _leaderboard("--qrels", qrels, "--run", run_gz)
    r = faults.bash(
        f"rubric evaluate leaderboard --qrels <(cat {qrels}) --run <(zcat {run_gz}) -m nDCG@10 -m P@5"
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected
    r = faults.bash(
        f"zcat {run_gz} | rubric evaluate leaderboard --qrels {qrels} --run /dev/stdin -m nDCG@10 -m P@5"
    )
    assert r.stdout == expected
    fifo = tmp_path / "run.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(run_gz.read_bytes()), daemon=True)
    writer.start()
    assert _leaderboard("--qrels", qrels, "--run", fifo) == expected
    writer.join(timeout=60)


def test_stdin_for_every_kind_of_file(f, tmp_path):
    # passages file (gzip) on stdin
    r = rubric("evaluate", "qrels", "-", "--prompt-class", RATING, "-o", "-", input=f["graded"].read_bytes())
    assert r.returncode == 0 and len(r.stdout.splitlines()) > 3, r.stderr
    # a bank and a passages file told apart on a pipe (read once)
    for key in ("bank", "graded"):
        r = rubric("convert", "check", "-", input=f[key].read_bytes())
        assert r.returncode == 0 and r.stdout.startswith(b"-: "), r.stderr
    # queries, collection and a run through stdin give the same pool as files
    args = [
        "convert",
        "runs",
        "--topics",
        f["queries.tsv"],
        "-C",
        f["collection.tsv"],
        f["run.alpha"],
        "-o",
        "-",
    ]
    expected = rubric(*args).stdout
    for i, key in ((3, "queries.tsv"), (5, "collection.tsv"), (6, "run.alpha")):
        piped = [*args[:i], "-", *args[i + 1 :]]
        r = rubric(*piped, input=f[key].read_bytes())
        assert r.returncode == 0, r.stderr
        assert r.stdout == expected, key
    r = rubric("bank", "show", "-", input=f["bank"].read_bytes())
    assert r.returncode == 0 and b"what is a cat?" in r.stdout


def test_standard_input_twice_is_an_error_not_an_empty_file(f):
    r = rubric(
        "evaluate",
        "leaderboard",
        "--qrels",
        "-",
        "--run",
        "-",
        "-m",
        "P@5",
        input=f["qrels.txt"].read_bytes(),
    )
    assert_one_error(r, "-: already read by this command", "read only once")


# --- a UTF-8 byte-order mark -------------------------------------------------------------------


def _with_bom(src: Path, dst: Path) -> Path:
    dst.write_bytes(BOM + src.read_bytes())
    return dst


def test_example_leaderboard_is_identical_with_a_bom_in_run_and_qrels(tmp_path):
    """Acceptance: the BOM glued itself to the first query id (bm25 nDCG@10 0.7782, not 0.8275)."""
    runs = tmp_path / "runs"
    runs.mkdir()
    for run in (EXAMPLE / "runs").iterdir():
        _with_bom(run, runs / run.name)
    qrels = _with_bom(EXAMPLE / "qrels.txt", tmp_path / "qrels.txt")
    plain = _leaderboard("--qrels", EXAMPLE / "qrels.txt", "--run", EXAMPLE / "runs")
    assert b"bm25\tnDCG@10\t0.8275" in plain
    assert _leaderboard("--qrels", qrels, "--run", runs) == plain
    gz = tmp_path / "bom.run.gz"
    gz.write_bytes(gzip.compress(BOM + (EXAMPLE / "runs" / "bm25.run").read_bytes()))
    assert b"bm25\tnDCG@10\t0.8275" in _leaderboard("--qrels", qrels, "--run", gz)


def test_a_bom_is_dropped_from_queries_collections_passages_and_banks(f, tmp_path):
    args = [
        "convert",
        "runs",
        "--topics",
        f["queries.tsv"],
        "-C",
        f["collection.tsv"],
        f["run.alpha"],
        "-o",
        "-",
    ]
    expected = rubric(*args).stdout
    boms = [*args]
    boms[3] = _with_bom(f["queries.tsv"], tmp_path / "q.tsv")
    boms[5] = _with_bom(f["collection.tsv"], tmp_path / "c.tsv")
    r = rubric(*boms)
    assert r.returncode == 0, r.stderr
    assert r.stdout == expected
    queries_json = tmp_path / "q.json"
    queries_json.write_bytes(BOM + json.dumps({"q1": "how do bees make honey"}).encode())
    assert b'"q1"' in rubric("convert", "queries", queries_json, "-o", "-").stdout
    for key in ("graded", "bank"):
        plain = gzip.decompress(f[key].read_bytes())
        bommed = tmp_path / f"{key}.jsonl"
        bommed.write_bytes(BOM + plain)
        r = rubric("convert", "check", bommed)
        assert r.returncode == 0, r.stderr
        assert r.stdout.replace(str(bommed).encode(), b"X") == rubric(
            "convert", "check", f[key]
        ).stdout.replace(str(f[key]).encode(), b"X")


# --- non-finite scores and grades ---------------------------------------------------------------


@pytest.mark.parametrize("score", ["nan", "inf", "-inf", "1e39", "-Infinity"])
def test_a_run_score_that_is_not_finite_is_refused_with_file_and_line(f, tmp_path, score):
    run = tmp_path / "bad.run"
    run.write_text(f"q1 Q0 d1 1 3.5 bad\nq1 Q0 d2 2 {score} bad\n")
    out = tmp_path / "pool.jsonl.gz"
    r = rubric("convert", "runs", "--topics", f["queries.tsv"], "-C", f["collection.tsv"], run, "-o", out)
    assert_one_error(r, f"{run}:2: score must be a finite number", repr(score))
    assert not out.exists()  # before: written with "score": null, which our own reader refused
    r = rubric("evaluate", "leaderboard", "--qrels", f["qrels.txt"], "--run", run, "-m", "P@5")
    assert_one_error(r, f"{run}:2:")


def test_largest_float32_score_is_fine(f, tmp_path):
    run = tmp_path / "edge.run"
    run.write_text("q1 Q0 d1 1 3.4e38 edge\nq1 Q0 d2 2 -3.4e38 edge\n")
    r = rubric("evaluate", "leaderboard", "--qrels", f["qrels.txt"], "--run", run, "-m", "P@5")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_non_finite_number_in_a_passages_file_is_refused(f, tmp_path, value):
    graded = tmp_path / "g.jsonl"
    p = faults.passage("d1")
    p["paragraph_data"]["rankings"] = [
        {"method": "r", "paragraphId": "d1", "queryId": "q1", "rank": 1, "score": 0}
    ]
    text = json.dumps(["q1", [p]]).replace('"score": 0', f'"score": {value}')
    graded.write_text(text + "\n")
    assert_one_error(rubric("convert", "check", graded), f"{graded}:1:")


def test_a_relevance_beyond_a_32_bit_integer_is_refused(f, tmp_path):
    qrels = tmp_path / "q.txt"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 1e39\n")
    r = rubric("evaluate", "leaderboard", "--qrels", qrels, "--run", f["run.alpha"], "-m", "P@5")
    assert_one_error(r, f"{qrels}:2: relevance 1e39 is out of range")


# --- repeated ids ------------------------------------------------------------------------------


def test_qrels_judging_a_document_twice_name_both_lines(f, tmp_path):
    """trec_eval stops on a duplicate too ("duplicate docs"); we also say where."""
    qrels = tmp_path / "dup.qrels"
    qrels.write_text("q1 0 d1 2\nq1 0 d2 0\n# note\nq1 0 d1 2\n")
    r = rubric("evaluate", "leaderboard", "--qrels", qrels, "--run", f["run.alpha"], "-m", "P@5")
    assert_one_error(r, f"{qrels}:4: query q1 document d1 is judged again (first on line 1)")


def test_queries_with_two_texts_for_one_id_name_both_lines(f, tmp_path):
    tsv = tmp_path / "q.tsv"
    tsv.write_text("q1\tbees\nq2\tsky\nq1\tbees\nq1\ttides\n")  # an exact repeat is harmless
    assert_one_error(rubric("convert", "queries", tsv, "-o", "-"), f"{tsv}:4: query q1 again", f"{tsv}:1")
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text('{"qid": "1", "query": "a"}\n{"qid": "1", "query": "b"}\n')
    assert_one_error(
        rubric("convert", "queries", jsonl, "-o", "-"), f"{jsonl}:2: query 1 again", f"{jsonl}:1"
    )
    obj = tmp_path / "q.json"
    obj.write_text('{\n "1": "a",\n "2": "b",\n "1": "c"\n}\n')  # json.loads would keep the last silently
    assert_one_error(rubric("convert", "queries", obj, "-o", "-"), f"{obj}:4: query 1 again", f"{obj}:2")


def test_a_collection_with_two_texts_for_one_pooled_id_names_both(f, tmp_path):
    coll = tmp_path / "c.tsv"
    coll.write_bytes(f["collection.tsv"].read_bytes() + b"d1\tanother text\n")
    args = ["convert", "runs", "--topics", f["queries.tsv"], f["run.alpha"], "-o", tmp_path / "p.jsonl.gz"]
    line = len(f["collection.tsv"].read_text().splitlines()) + 1
    assert_one_error(rubric(*args, "-C", coll), f"{coll}:{line}: document d1 again", f"{coll}:1")
    # the same passage in two collection files is harmless
    r = rubric(*args, "-C", f["collection.tsv"], "-C", f["collection.tsv"])
    assert r.returncode == 0, r.stderr


def test_a_bank_with_two_lines_for_one_query_names_both(f, tmp_path):
    lines = gzip.decompress(f["bank"].read_bytes()).decode().splitlines()
    bank = tmp_path / "bank.jsonl"
    bank.write_text("\n".join([*lines, lines[0]]) + "\n")
    assert_one_error(
        rubric("bank", "show", bank),
        f"{bank}:{len(lines) + 1}: a second bank for query q1 (the first is on line 1)",
    )


def test_passages_file_lines_of_one_query_are_merged_not_dropped(tmp_path):
    """The original workbench writes some files one passage per line; each line is kept."""
    one_per_line = tmp_path / "p.jsonl"
    faults.write_jsonl(
        one_per_line,
        [["q1", [faults.passage(f"d{i}", judgment=i % 3)]] for i in range(1, 6)]
        + [["q2", [faults.passage("x", judgment=1)]]],
    )
    r = rubric("convert", "check", one_per_line)
    assert r.returncode == 0, r.stderr
    assert b"2 queries, 6 passages, 6 judged" in r.stdout


def test_a_passage_twice_in_one_query_names_both_lines(tmp_path):
    path = tmp_path / "p.jsonl"
    faults.write_jsonl(
        path, [["q1", [faults.passage("d1")]], ["q2", [faults.passage("d1")]], ["q1", [faults.passage("d1")]]]
    )
    assert_one_error(rubric("convert", "check", path), f"{path}:3: passage d1 of query q1 is also on line 1")
    faults.write_jsonl(path, [["q1", [faults.passage("d1"), faults.passage("d1")]]])
    assert_one_error(
        rubric("convert", "check", path), f"{path}:1: passage d1 of query q1 is also on the same line"
    )


def test_per_item_qrels_and_facets_repeated(f, tmp_path):
    items = tmp_path / "items.qrels"
    items.write_text("q1 i1 d1 4\nq1 i2 d1 3\nq1 i1 d1 5\n")
    r = rubric("evaluate", "leaderboard", "--qrels", items, "--run", f["run.alpha"], "-m", "alpha_nDCG@10")
    assert_one_error(r, f"{items}:3: query q1 item i1 document d1 is graded again (first on line 1)")


# --- encodings ---------------------------------------------------------------------------------


def test_utf16_and_latin1_say_what_is_wrong(f, tmp_path):
    utf16 = tmp_path / "q16.tsv"
    utf16.write_bytes(f["queries.tsv"].read_text().encode("utf-16"))
    assert_one_error(
        rubric("convert", "queries", utf16, "-o", "-"), f"{utf16}: UTF-16 text; convert it to UTF-8"
    )
    latin = tmp_path / "coll.tsv"
    latin.write_bytes(f["collection.tsv"].read_bytes() + "d9\tcaf\xe9\n".encode("latin-1"))
    line = len(f["collection.tsv"].read_text().splitlines()) + 1
    r = rubric(
        "convert",
        "runs",
        "--topics",
        f["queries.tsv"],
        "-C",
        latin,
        f["run.alpha"],
        "-o",
        tmp_path / "o.jsonl",
    )
    assert_one_error(r, f"{latin}:{line}: not UTF-8 text")


def test_line_ends_other_than_newline_stay_inside_a_line(tmp_path):
    """U+2028 and form feeds inside a query text are text, not line breaks (trec_eval splits at \\n)."""
    tsv = tmp_path / "q.tsv"
    tsv.write_text("q1\tone\u2028two\x0cthree\r\nq2\tsky\n", newline="")
    r = rubric("convert", "queries", tsv, "-o", "-", "-f", "jsonl")
    assert r.returncode == 0, r.stderr
    assert [json.loads(x)["qid"] for x in r.stdout.decode().split("\n") if x] == ["q1", "q2"]


def test_shipped_examples_still_read(tmp_path):
    """The bundled example through every reader, as a guard for the rules above."""
    out = tmp_path / "pool.jsonl.gz"
    runs = sorted((EXAMPLE / "runs").iterdir())
    r = rubric(
        "convert", "runs", "--topics", EXAMPLE / "queries.json", "-C", EXAMPLE / "collection.tsv",
        "--qrels", EXAMPLE / "qrels.txt", *runs, "-o", out,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    for bank in ("questions.jsonl", "nuggets.jsonl"):
        assert rubric("bank", "show", EXAMPLE / bank).returncode == 0
    shutil.rmtree(tmp_path)
