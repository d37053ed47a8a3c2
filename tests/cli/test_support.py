"""`rubric evaluate support` end to end: TREC RAG answers with citations, MS MARCO v2.1-style
segments, a real OpenAI-compatible server on 127.0.0.1 that judges support by a script, and the
track's weighted precision and recall computed by hand.

The server's judge: a statement whose every word is in the cited text has Full Support, one with
at least half its words there Partial Support, else No Support; a statement holding "[verbose]"
gets its level inside a sentence of prose, one holding "[mute]" never a level (always unreadable).
"""

from __future__ import annotations

import json
import re

import pytest

from helpers.openai_server import serve, words
from rubric.evaluate.support import answer_support
from rubric.grading.support import parse_support
from rubric.llm.lists import ParseError

S = {
    "a": "msmarco_v2.1_doc_00_100#0_100",
    "b": "msmarco_v2.1_doc_00_100#1_1394",
    "c": "msmarco_v2.1_doc_07_5#3_977",
}
SEGMENTS = [
    {"docid": S["a"], "url": "u", "title": "", "headings": "", "segment": "Bees collect nectar from flowers.",
     "start_char": 0, "end_char": 33},
    {"docid": S["b"], "url": "u", "title": "", "headings": "", "segment": "Honey is stored in wax combs.",
     "start_char": 34, "end_char": 63},
    {"docid": S["c"], "url": "u", "title": "Roads", "headings": "", "segment": "Cars drive on roads.",
     "start_char": 0, "end_char": 20},
]  # fmt: skip
ANSWERS = [
    {"run_id": "runA", "topic_id": "q1", "topic": "bees", "references": [S["a"], S["b"], S["c"]], "answer": [
        {"text": "Bees collect nectar from flowers.", "citations": [0, 2]},  # full, no
        {"text": "Honey is stored in wax combs by bees.", "citations": [1]},  # 6 of 8 words: partial
        {"text": "Bees dance.", "citations": []},  # uncited: recall 0
    ]},
    {"run_id": "runA", "topic_id": "q2", "topic": "cars", "references": [S["c"]],
     "answer": [{"text": "Cars drive on roads.", "citations": [0]}]},  # full
    {"run_id": "runB", "topic_id": "q1", "topic": "bees", "references": [],
     "answer": [{"text": "Honey is sweet.", "citations": []}]},  # no citation: no precision
    {"run_id": "runB", "topic_id": "q2", "topic": "cars", "references": [S["b"]],
     "answer": [{"text": "[verbose] Honey is stored in wax combs.", "citations": [0]}]},  # full
]  # fmt: skip


def judge(user: str, system: str | None) -> str:
    m = re.search(r"Statement: (.*)\nCitation: (.*)\n", user)
    assert m, user
    statement, citation = m.group(1), m.group(2)
    if "[mute]" in statement:
        return "I cannot tell."
    said = [w for w in words(statement) if w != "verbose"]
    share = sum(w in set(words(citation)) for w in said) / len(said)
    level = "Full Support" if share == 1 else "Partial Support" if share >= 0.5 else "No Support"
    return f"Having read both, I would say {level.lower()} is right." if "[verbose]" in statement else level


def write_jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.fixture
def files(tmp_path):
    return write_jsonl(tmp_path / "answers.jsonl", ANSWERS), write_jsonl(
        tmp_path / "segments.jsonl", SEGMENTS
    )


def llm(url, tmp_path):
    return ["--model", "judge", "--base-url", url, "--retry-base", "0.01", "--cache", tmp_path / "c.sqlite"]


def leaderboard(stdout: str) -> dict[tuple[str, str], tuple[float, int]]:
    rows = [line.split("\t") for line in stdout.splitlines()[1:]]
    return {(r[0], r[1]): (float(r[2]), int(r[4])) for r in rows}


def test_support_judges_every_cited_pair_and_scores_by_hand(cli, tmp_path, files):
    answers, segments = files
    out = tmp_path / "support.jsonl"
    with serve(answer=judge) as srv:
        r = cli("evaluate", "support", answers, "--segments", segments, "-o", out, *llm(srv.url, tmp_path))
        asked = [json.loads(json.dumps(q)) for q in srv.requests]
    assert r.returncode == 0, r.stderr
    # runA: precision over its pairs (1 + 0 + 0.5) / 3 on q1 and 1 on q2; recall (1 + 0.5 + 0) / 3 and 1
    # runB: q1 cites nothing (no precision, recall 0), q2 fully supported
    assert leaderboard(r.stdout) == {
        ("runA", "support_precision"): (pytest.approx(0.75), 2),
        ("runA", "support_recall"): (pytest.approx(0.75), 2),
        ("runB", "support_precision"): (pytest.approx(1.0), 1),
        ("runB", "support_recall"): (pytest.approx(0.5), 2),
    }
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(x["run_id"], x["topic_id"], x["failed_pairs"]) for x in records] == [
        ("runA", "q1", 0), ("runA", "q2", 0), ("runB", "q1", 0), ("runB", "q2", 0)
    ]  # fmt: skip
    first = records[0]["sentences"]
    assert first[0]["citations"] == [
        {"docid": S["a"], "support": "full_support"},
        {"docid": S["c"], "support": "no_support"},
    ]
    assert first[1]["citations"] == [{"docid": S["b"], "support": "partial_support"}]
    assert records[0]["prompt_class"] == "TREC24Support" and records[0]["llm"] == "judge"
    # 5 pairs: one prompt each (the paper's, statement and cited segment text filled in)
    prompts = [m["content"] for q in asked for m in q["body"]["messages"] if m["role"] == "user"]
    assert len(prompts) == 5
    assert any(
        p.startswith(
            "In this task, you will evaluate whether each statement is supported by its corresponding"
        )
        and p.endswith("Statement: Cars drive on roads.\nCitation: Roads Cars drive on roads.\n")
        for p in prompts
    )  # an MS MARCO v2.1 segment's text is its title and segment
    assert "wrote 4 judged answers (2 runs, 5 sentence-citation pairs)" in r.stderr

    with serve(answer=judge) as again:  # a rerun asks nothing: every judgment is in the cache
        rerun = cli("evaluate", "support", answers, "--segments", segments, "-o", tmp_path / "again.jsonl",
                    *llm(again.url, tmp_path), "--format", "json")  # fmt: skip
        assert again.answered == 0
    assert rerun.returncode == 0 and (tmp_path / "again.jsonl").read_text() == out.read_text()
    assert {(e["run"], e["measure"]) for e in json.loads(rerun.stdout)} == set(leaderboard(r.stdout))


def test_a_pair_never_judged_is_listed_and_its_answer_left_out(cli, tmp_path, files):
    answers, segments = files
    rows = [dict(a) for a in ANSWERS]
    rows[1] = dict(rows[1], answer=[{"text": "[mute] Cars drive on roads.", "citations": [0]}])
    write_jsonl(answers, rows)
    out = tmp_path / "support.jsonl"
    with serve(answer=judge) as srv:
        r = cli("evaluate", "support", answers, "--segments", segments, "-o", out, *llm(srv.url, tmp_path),
                "--parse-retries", "1")  # fmt: skip
    assert r.returncode == 1, r.stderr
    assert (
        "failed: run runA topic q2 sentence 1 citation msmarco_v2.1_doc_07_5#3_977: unreadable answer"
        in r.stderr
    )
    assert "1 sentence-citation pair failed" in r.stderr
    assert "run runA topic q2: left out" in r.stderr
    assert leaderboard(r.stdout)[("runA", "support_precision")] == (pytest.approx(0.5), 1)  # q1 only
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert records[1]["failed_pairs"] == 1 and records[1]["sentences"][0]["citations"][0]["support"] is None


def test_segments_sharing_no_id_with_the_citations_is_one_clear_error(cli, user_error, tmp_path, files):
    answers, _ = files
    other = write_jsonl(tmp_path / "other.jsonl", [dict(SEGMENTS[0], docid="msmarco_v2.1_doc_99_1#0_1")])
    out = tmp_path / "support.jsonl"
    r = cli("evaluate", "support", answers, "--segments", other, "-o", out, "--model", "m", "--base-url",
            "http://127.0.0.1:9/v1")  # fmt: skip
    user_error(r, "--segments", "none of the 3 cited segment ids is in it")
    assert not out.exists()
    some = write_jsonl(tmp_path / "some.jsonl", SEGMENTS[:2])
    r = cli("evaluate", "support", answers, "--segments", some, "-o", out, "--model", "m", "--base-url",
            "http://127.0.0.1:9/v1")  # fmt: skip
    user_error(r, "no text for 1 of the 3 cited segments (e.g. msmarco_v2.1_doc_07_5#3_977)")


@pytest.mark.parametrize(
    ("answer", "level"),
    [
        ("Full Support", "full_support"),
        ("partial support", "partial_support"),
        ('"No Support"', "no_support"),
        ("No_Support.", "no_support"),
        ("Partial Support: the date is missing, so not full support", "partial_support"),
        ("The citation gives Full Support.", "full_support"),
        ("It is not supported", "no_support"),
    ],
)
def test_parse_support(answer, level):
    assert parse_support(answer) == level


@pytest.mark.parametrize("answer", ["", "Yes", "maybe full support or maybe partial support", "supportive"])
def test_parse_support_refuses(answer):
    with pytest.raises(ParseError):
        parse_support(answer)


def test_answer_support_by_hand():
    sentences = [
        {"citations": [{"support": "full_support"}, {"support": "partial_support"}]},
        {"citations": [{"support": "no_support"}]},
        {"citations": []},
    ]
    assert answer_support(sentences) == {"support_precision": 0.5, "support_recall": pytest.approx(1 / 3)}
    assert answer_support([{"citations": []}]) == {"support_precision": None, "support_recall": 0.0}
    assert answer_support([{"citations": [{"support": None}]}]) is None
