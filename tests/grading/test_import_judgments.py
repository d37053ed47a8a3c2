"""`rubric grade import`: a qrels file's labels into a passages file as grades or judgments (the
original's exam_import_judgments), then used by the reports like any prompt's grades."""

from __future__ import annotations

import gzip
import json

import pytest

from helpers import TINY


def _pool(cli, tmp_path):
    out = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "--topics", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    return out


def _passages(path):
    return {
        (qid, p["paragraph_id"]): p
        for line in gzip.decompress(path.read_bytes()).decode().splitlines()
        for qid, ps in [json.loads(line)]
        for p in ps
    }


def test_labels_become_direct_grades_and_qrels_give_them_back(cli, tmp_path):
    pool = _pool(cli, tmp_path)
    pairs = list(_passages(pool))
    labels = tmp_path / "other.qrels"
    labels.write_text("".join(f"{q} 0 {d} {i % 4}\n" for i, (q, d) in enumerate(pairs)) + "q1 0 nowhere 2\n")
    out = tmp_path / "imported.jsonl.gz"
    r = cli("grade", "import", pool, "--qrels", labels, "-o", out)
    assert r.returncode == 0, r.stderr
    assert f"imported {len(pairs)} labels" in r.stderr and "1 qrels lines name a passage" in r.stderr
    for i, (key, p) in enumerate(_passages(out).items()):
        (g,) = p["grades"]
        assert (g["llm"], g["self_ratings"], g["relevance_label"], g["answer"]) == (
            "imported",
            i % 4,
            i % 4,
            str(i % 4),
        )
        assert g["correctAnswered"] is (i % 4 > 0) and g["prompt_type"] == "direct_grading"
        assert g["prompt_info"] == {"prompt_class": "QrelImport", "qrels_file": str(labels)}
        assert p["paragraph_data"]["judgments"] == _passages(pool)[key]["paragraph_data"]["judgments"]
    back = tmp_path / "back.qrels"
    q = cli("evaluate", "qrels", out, "--prompt-class", "QrelImport", "-o", back)
    assert q.returncode == 0, q.stderr
    assert back.read_text().splitlines() == labels.read_text().splitlines()[:-1]
    again = cli("grade", "import", out, "--qrels", labels, "-o", tmp_path / "twice.jsonl.gz")
    assert again.returncode == 0
    assert all(len(p["grades"]) == 1 for p in _passages(tmp_path / "twice.jsonl.gz").values())  # replaced


def test_labels_as_judgments_replace_or_append(cli, tmp_path):
    pool = _pool(cli, tmp_path)
    (q, d) = next(iter(_passages(pool)))
    labels = tmp_path / "l.qrels"
    labels.write_text(f"{q} 0 {d} 3\n")
    out = tmp_path / "j.jsonl.gz"
    r = cli(
        "grade",
        "import",
        pool,
        "--qrels",
        labels,
        "--as",
        "judgments",
        "--topics",
        TINY / "queries.tsv",
        "-o",
        out,
    )
    assert r.returncode == 0, r.stderr
    (j,) = _passages(out)[(q, d)]["paragraph_data"]["judgments"]
    assert (j["query"], j["relevance"]) == (q, 3) and j["titleQuery"]
    assert "grades" not in _passages(out)[(q, d)] or not _passages(out)[(q, d)]["grades"]
    out2 = tmp_path / "a.jsonl.gz"
    r = cli("grade", "import", pool, "--qrels", labels, "--as", "both", "--append-judgments", "-o", out2)
    assert r.returncode == 0, r.stderr
    before = _passages(pool)[(q, d)]["paragraph_data"]["judgments"]
    assert _passages(out2)[(q, d)]["paragraph_data"]["judgments"][:-1] == before


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--as", "labels"], "--as': 'labels' is not one of 'grades', 'judgments', 'both'"),
        (["--append-judgments"], "--append-judgments: only with --as judgments or --as both"),
        (["--prompt-class", " "], "--prompt-class: must not be empty"),
    ],
)
def test_bad_options_are_one_line(cli, user_error, tmp_path, args, fragment):
    out = tmp_path / "o.jsonl.gz"
    user_error(
        cli("grade", "import", "missing.jsonl.gz", "--qrels", "missing.qrels", "-o", out, *args), fragment
    )
    assert not out.exists()
