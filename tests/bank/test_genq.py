"""`rubric bank import` of the original workbench's "genq" question sets
(``{query: {facet: {title, facet, questions}}}``), read as its loader read them."""

from __future__ import annotations

import gzip
import hashlib
import json

GENQ = {
    "tqa2:L_0001": {
        "T_0001": {
            "title": "Plants",
            "facet": "Photosynthesis",
            "questions": ["1. How do leaves make sugar?", "2. Which gas do plants take in?", "3. x"],
        },
        "T_0002": {"title": "Plants", "facet": "Roots", "questions": ["1. What do roots absorb?"]},
    },
    "tqa2:L_0002": {"T_0003": {"title": "Rocks", "facet": "Igneous", "questions": ["What is magma?"]}},
}


def test_genq_is_recognised_and_read_as_the_original_did(cli, tmp_path):
    source, out = tmp_path / "naghmeh-questions.json", tmp_path / "bank.jsonl.gz"
    source.write_text(json.dumps(GENQ), encoding="utf-8")
    r = cli("bank", "import", source, "-o", out)
    assert r.returncode == 0, r.stderr
    assert "wrote 2 banks (4 questions, genq)" in r.stderr + r.stdout
    banks = [json.loads(line) for line in gzip.decompress(out.read_bytes()).decode().splitlines()]
    assert [(b["query_id"], b["query_text"]) for b in banks] == [
        ("tqa2:L_0001", "Plants"),
        ("tqa2:L_0002", "Rocks"),
    ]
    items = banks[0]["items"]
    assert [i["question_text"] for i in items] == [
        "How do leaves make sugar?",  # the enumeration "1. " is stripped
        "Which gas do plants take in?",  # "3. x" (one character left) is dropped
        "What do roots absorb?",
    ]
    md5 = hashlib.md5(b"1. How do leaves make sugar?").hexdigest()  # the id hashes the text as written
    assert items[0]["question_id"] == f"tqa2:L_0001/T_0001/{md5}" and items[0]["facet_id"] == "T_0001"
    assert items[2]["question_id"].startswith("tqa2:L_0001/T_0002/")
    same = cli("bank", "import", source, "--format", "genq", "-o", tmp_path / "again.jsonl.gz")
    assert same.returncode == 0 and (tmp_path / "again.jsonl.gz").read_bytes() == out.read_bytes()


def test_a_broken_genq_file_is_one_error_line(cli, tmp_path, user_error):
    source = tmp_path / "genq.json"
    source.write_text(json.dumps({"q1": {"f1": {"title": "t", "questions": "not a list"}}}), encoding="utf-8")
    user_error(cli("bank", "import", source, "-o", tmp_path / "out.jsonl.gz"), f"{source}: query q1 facet f1")
    assert not (tmp_path / "out.jsonl.gz").exists()
    plain = tmp_path / "plain.json"
    plain.write_text(json.dumps({"q1": ["a question?"]}), encoding="utf-8")
    user_error(cli("bank", "import", plain, "--format", "genq", "-o", tmp_path / "o.jsonl.gz"), "not a genq")
