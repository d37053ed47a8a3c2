"""`rubric evaluate support` given nonsense: one error naming the file (and the run, topic and
sentence) or the option, exit 2, no output, and no request sent (no server listens)."""

from __future__ import annotations

import json

import pytest

from helpers import faults

NOWHERE = ["--model", "m", "--base-url", "http://127.0.0.1:9/v1", "--max-retries", "0"]
GOOD = {
    "run_id": "r",
    "topic_id": "q1",
    "references": ["d1", "d2"],
    "answer": [{"text": "s", "citations": [0]}],
}


def inputs(tmp_path, answers):
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(a) + "\n" for a in answers))
    segments = tmp_path / "segments.tsv"
    segments.write_text("d1\tone\nd2\ttwo\n")
    return path, segments


def support(tmp_path, answers, *extra):
    path, segments = inputs(tmp_path, answers)
    out = tmp_path / "support.jsonl"
    r = faults.rubric("evaluate", "support", path, "--segments", segments, "-o", out, *NOWHERE, *extra)
    assert not out.exists()
    return r, path, segments


@pytest.mark.parametrize(
    ("answer", "fragments"),
    [
        (
            {"citations": [2]},
            ["run r topic q1 sentence 1", "cites reference 2, but the answer has 2 references"],
        ),
        ({"citations": [-1]}, ["sentence 1", "cites reference -1"]),
        ({"citations": [True]}, ["a citation must be an index into 'references' or a segment id"]),
        ({"citations": [1.5]}, ["a citation must be"]),
        ({"citations": [{"id": 0}]}, ["a citation must be"]),
        ({"citations": []}, ["the answers cite no segment"]),
    ],
)
def test_bad_citations(tmp_path, answer, fragments):
    r, path, _ = support(tmp_path, [dict(GOOD, answer=[dict({"text": "s"}, **answer)])])
    faults.assert_one_error(r, *fragments)


def test_a_run_answering_a_topic_twice(tmp_path):
    r, _, _ = support(tmp_path, [GOOD, GOOD])
    faults.assert_one_error(r, "run r answers topic q1 twice")


def test_no_answers(tmp_path):
    r, path, _ = support(tmp_path, [])
    faults.assert_one_error(r, f"{path}: the file holds no answers")


def test_missing_fields_name_the_line(tmp_path):
    r, path, _ = support(tmp_path, [GOOD, {"run_id": "r", "topic_id": "q2"}])
    faults.assert_one_error(r, f"{path}:2", "missing field 'answer'")


@pytest.mark.parametrize(
    ("extra", "option"),
    [
        (["--format", "xml"], "--format"),
        (["--prompt", "UMBRELA"], "--prompt"),
        (["--prompt", "NoSuchPrompt"], "NoSuchPrompt"),
        (["--parse-retries", "-1"], "--parse-retries"),
        (["--temperature", "7"], "--temperature"),
    ],
)
def test_bad_options(tmp_path, extra, option):
    r, _, _ = support(tmp_path, [GOOD], *extra)
    faults.assert_one_error(r, option)


def test_output_may_not_be_an_input(tmp_path):
    path, segments = inputs(tmp_path, [GOOD])
    for victim in (path, segments):
        before = victim.read_bytes()
        again = faults.rubric("evaluate", "support", path, "--segments", segments, "-o", victim, *NOWHERE)
        faults.assert_one_error(again, "--output")
        assert victim.read_bytes() == before
