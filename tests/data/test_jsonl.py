"""Streaming JSONL: exact errors with file:line and field, atomic writes, gzip by content."""

from __future__ import annotations

import gzip
import json
import os

import pytest

from rubric.data.files import atomic_write, read_text
from rubric.data.jsonl import read_bank, read_passages, write_passages
from rubric.errors import UserError


def passage(pid: str = "p1") -> dict:
    return {
        "paragraph_id": pid,
        "text": "t",
        "paragraph": "",
        "paragraph_data": {"judgments": [], "rankings": []},
    }


def write_lines(path, lines, compress=True):
    data = "".join(line + "\n" for line in lines).encode()
    path.write_bytes(gzip.compress(data) if compress else data)


def test_read_write_round_trip_gzip_and_plain(tmp_path):
    src = tmp_path / "in.jsonl.gz"
    write_lines(src, [json.dumps(["q1", [passage("a"), passage("b")]]), json.dumps(["q2", [passage("c")]])])
    queries = list(read_passages(src))
    assert [q.queryId for q in queries] == ["q1", "q2"]
    out = tmp_path / "out.jsonl"  # plain, by name
    write_passages(out, queries)
    assert not out.read_bytes().startswith(b"\x1f\x8b")
    assert [q.to_json() for q in read_passages(out)] == [q.to_json() for q in queries]
    out_gz = tmp_path / "out.jsonl.gz"
    write_passages(out_gz, queries)
    assert out_gz.read_bytes()[:2] == b"\x1f\x8b"


def test_gzip_detected_by_content_not_name(tmp_path):
    src = tmp_path / "passages.jsonl"  # gzip bytes under a plain name
    write_lines(src, [json.dumps(["q1", [passage()]])])
    assert len(list(read_passages(src))) == 1


def test_truncated_gzip_is_an_error(tmp_path):
    src = tmp_path / "p.jsonl.gz"
    lines = [json.dumps([f"q{j}", [passage(f"p{i}") for i in range(50)]]) for j in range(20)]
    write_lines(src, lines)
    data = src.read_bytes()
    src.write_bytes(data[: len(data) // 2])
    with pytest.raises(UserError, match=r"p\.jsonl\.gz: damaged gzip file"):
        list(read_passages(src))


def test_non_json_line_names_file_and_line(tmp_path):
    src = tmp_path / "p.jsonl"
    write_lines(src, [json.dumps(["q1", [passage()]]), "{not json"], compress=False)
    with pytest.raises(UserError, match=r"p\.jsonl:2: not valid JSON"):
        list(read_passages(src))


def test_missing_paragraph_id_names_line_and_field(tmp_path):
    src = tmp_path / "p.jsonl"
    bad = passage()
    del bad["paragraph_id"]
    write_lines(src, [json.dumps(["q1", [passage()]]), json.dumps(["q2", [passage(), bad]])], compress=False)
    with pytest.raises(UserError, match=r"p\.jsonl:2: paragraphs\[1\]\.paragraph_id: Field required"):
        list(read_passages(src))


def test_wrong_line_shape(tmp_path):
    src = tmp_path / "p.jsonl"
    write_lines(src, [json.dumps({"paragraph_id": "x"})], compress=False)
    with pytest.raises(UserError, match=r"p\.jsonl:1: expected a JSON array"):
        list(read_passages(src))


def test_bank_errors_name_the_field(tmp_path):
    src = tmp_path / "bank.jsonl"
    write_lines(src, [json.dumps({"items": []})], compress=False)
    with pytest.raises(UserError, match=r"bank\.jsonl:1: query_id: Field required"):
        list(read_bank(src))


def test_atomic_write_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.jsonl.gz"
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write("partial\n")
            raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_replaces_old_file_only_when_done(tmp_path):
    target = tmp_path / "out.txt"
    target.write_text("old\n")
    with pytest.raises(RuntimeError):
        with atomic_write(target) as f:
            f.write("new\n")
            raise RuntimeError("crash")
    assert target.read_text() == "old\n"
    with atomic_write(target) as f:
        f.write("new\n")
    assert read_text(target) == "new\n"
    umask = os.umask(0)
    os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o666 & ~umask


def test_gzip_output_is_reproducible(tmp_path):
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    for path in (a, b):
        with atomic_write(path) as f:
            f.write("same\n")
    assert a.read_bytes() == b.read_bytes()
