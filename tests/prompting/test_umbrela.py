"""UMBRELA exactly as castorini/umbrela: its parser on its own examples and on 120 answers of every
shape a 0-3 judge writes, and its judge's request (system message, decoding settings) on the wire.

``reference_parse`` is UMBRELA's ``parse_fewshot_response`` (castorini/umbrela,
src/umbrela/utils/common_utils.py, Apache-2.0; copied with its pattern list verbatim, including
its repeated pattern, and only the logging of invalid answers removed), so the workbench's parser
is compared with UMBRELA's own code, not with a restatement of it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rubric.prompting.parse import get_parser
from rubric.prompting.prompts import get_prompt

ANSWERS = Path(__file__).parent.parent / "fixtures" / "umbrela" / "answers.json"


def reference_parse(response: str) -> tuple[int, int]:
    """castorini/umbrela ``parse_fewshot_response`` (Apache-2.0): (grade, 1 if a pattern matched)."""
    response = response.strip().lower()
    valid_res = 1
    answer = ""
    patterns = [
        r'"o"\s*[:-=]?\s*(0|1|2|3)',
        r"\'o\'\s*[:-=]?\s*(0|1|2|3)",
        r"o\s*[:-=]?\s*(0|1|2|3)",
        r'"overall_score"\s*[:-=]?\s*(0|1|2|3)',
        r'"overall"\s*[:-=]?\s*(0|1|2|3)',
        r'"overall score"\s*[:-=]?\s*(0|1|2|3)',
        r'"final score"\s*[:-=]?\s*(0|1|2|3)',
        r"final score\s*[:-=]?\s*(0|1|2|3)",
        r"final score is (0|1|2|3)",
        r'"final_score"\s*[:-=]?\s*(0|1|2|3)',
        r'"score"\s*[:-=]?\s*(0|1|2|3)',
        r'"o_score"\s*[:-=]?\s*(0|1|2|3)',
        r"output score is (0|1|2|3)",
        r"score is (0|1|2|3)",
        r"score of\s+(0|1|2|3)",
        r"assign(?:ing)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
        r"conclude(?:s|d)?\s+with\s+(?:a\s+)?score of\s+(0|1|2|3)",
        r"give(?:n)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
        r"i (?:would )?(?:give|assign)\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
        r"score:\s*(0|1|2|3)",
        r"[a-zA-Z]+\s+is\s+(0|1|2|3)\s",
        r"relevance category\s*[:-=]?\s*(0|1|2|3)",
        r"relevance category\s*[:-=]?\s*(0|1|2|3)",
        r"relevance category is (0|1|2|3)",
        r"it falls into the category (0|1|2|3)",
        r"category\s*(0|1|2|3)",
        r"relevance category (0|1|2|3)",
        r"relevance category for this passage would be (0|1|2|3)",
        r"the relevance category would be (0|1|2|3)",
        r"\n*(0|1|2|3)",
    ]
    for pattern in patterns:
        matched = None
        for m in re.finditer(pattern, response, re.IGNORECASE | re.MULTILINE | re.DOTALL):
            matched = m

        if matched:
            answer = matched.group(1).capitalize()
            break
    if answer == "":
        answer = "0"
        valid_res = 0
    return int(answer), valid_res


# castorini/umbrela tests/test_evaluation_utils.py: its own examples
@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ('{"overall_score": 3}', 3),
        ("I would give it a score of 2.", 2),
        ("final score is 1", 1),
        ("no numeric label present", 0),
    ],
)
def test_umbrelas_own_examples(answer, grade):
    assert get_parser("umbrela").parse(answer) == grade == reference_parse(answer)[0]


def test_the_120_answers_parse_to_umbrelas_grades():
    answers = json.loads(ANSWERS.read_text(encoding="utf-8"))
    assert len(answers) == len(set(answers)) == 120
    ours = [get_parser("umbrela").parse(a) for a in answers]
    theirs = [reference_parse(a)[0] for a in answers]
    assert ours == theirs
    # the list exercises every rule the issue named, not only the easy ones
    assert len(set(theirs)) == 4
    assert sum(1 for a in answers if reference_parse(a)[1] == 0) >= 5  # nothing to read: 0


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("M: 3, T: 2, O: 1\n##final score: 2", 1),  # "O: N" is tried before "##final score"
        ("2.5", 2),  # a digit 0-3 inside a number
        ("10", 0),
        ("Score: 10", 1),
        ("##final score: 10", 1),
        ("Given to 2 readers, final score: 1", 2),  # "o 2" (in "to 2") is an O score to UMBRELA
        ("##FINAL SCORE: 3", 3),  # the reply is lower-cased
    ],
)
def test_the_rules_where_umbrela_surprises(answer, grade):
    assert get_parser("umbrela").parse(answer) == grade == reference_parse(answer)[0]


def test_the_prompt_carries_umbrelas_request_settings():
    p = get_prompt("UMBRELA")
    assert p.system == "You are a helpful assistant."
    assert p.system_api_only
    assert p.decoding == {
        "temperature": 0.0,
        "top_p": 1,
        "max_tokens": 100,
        "frequency_penalty": 0.5,
        "presence_penalty": 0,
    }


def test_requests_carry_umbrelas_messages_and_settings(cli, tmp_path):
    """The test server's log of `rubric grade direct -p UMBRELA --backend openai`: every request
    has UMBRELA's two messages and its settings; its mixed-case replies are read lower-cased;
    the recorded llm_options name the settings; a second run is answered from the cache."""
    from helpers import TINY
    from helpers.openai_server import serve

    passages = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "--topics", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", "-o", passages)  # fmt: skip
    assert r.returncode == 0, r.stderr
    replies = ["M: 3, T: 2, O: 1\n##FINAL SCORE: 2", "2.5", "Score: 10"]

    def answer(user: str, system: str | None) -> str:
        return replies[len(user) % 3]

    out, cache = tmp_path / "umbrela.jsonl.gz", tmp_path / "cache.sqlite"
    with serve(answer=answer) as srv:
        args = ["grade", "direct", passages, "--topics", TINY / "queries.tsv", "-p", "UMBRELA", "--backend",
                "openai", "--model", "gpt-4o", "--base-url", srv.url, "--cache", cache]  # fmt: skip
        r = cli(*args, "-o", out)
        assert r.returncode == 0, r.stderr
        sent = [q["body"] for q in srv.requests]
        assert sent
        template = get_prompt("UMBRELA")
        for body in sent:
            system, user = body["messages"]
            assert system == {"role": "system", "content": "You are a helpful assistant."}
            assert user["role"] == "user" and user["content"].startswith(template.template[:60])
            assert {
                k: body[k]
                for k in ("temperature", "top_p", "max_tokens", "frequency_penalty", "presence_penalty")
            } == {  # fmt: skip
                "temperature": 0.0,
                "top_p": 1,
                "max_tokens": 100,
                "frequency_penalty": 0.5,
                "presence_penalty": 0,
            }
        r = cli(*args, "-o", tmp_path / "again.jsonl.gz")
        assert r.returncode == 0, r.stderr
        assert len(srv.requests) == len(sent)  # the second run: all from the cache
    import gzip

    grades = [
        g
        for line in gzip.decompress(out.read_bytes()).decode().splitlines()
        for p in json.loads(line)[1]
        for g in p["grades"]
    ]
    assert grades
    for g in grades:
        assert g["self_ratings"] == reference_parse(g["answer"])[0]
        assert g["llm_options"]["frequency_penalty"] == 0.5 and g["llm_options"]["system"]
    assert {g["self_ratings"] for g in grades} <= {1, 2}
