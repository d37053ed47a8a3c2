"""Today's standard 0-3 judge prompts (UMBRELA, LLMJudge) and the parser of their answers."""

from __future__ import annotations

import pytest

from rubric.prompting.parse import get_parser
from rubric.prompting.prompts import get_prompt


@pytest.mark.parametrize("name", ["UMBRELA", "LLMJudge"])
def test_shipped_as_direct_prompts_with_the_umbrela_parser(name):
    p = get_prompt(name)
    assert (p.kind, p.parser, p.placeholders) == ("direct", "umbrela", ["query", "context"])
    assert p.prompt_type == "direct_grading" and p.prompt_info["prompt_class"] == name
    assert p.prompt_info["is_self_rated"] is True
    text = p.render(query="what is a koala", context="Koalas are marsupials.")
    assert "what is a koala" in text and "Koalas are marsupials." in text


def test_llmjudge_answers_with_one_token_umbrela_does_not():
    assert get_prompt("LLMJudge").choices == ("0", "1", "2", "3")  # "Score:" -> one digit
    assert get_prompt("UMBRELA").choices is None  # "##final score: N" needs generation


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        ("##final score: 2", 2),
        ("##final score: 0", 0),
        ("M: 2\nT: 1\nO: 3\n##final score: 3", 3),
        ("##M: 2, ##T: 1, ##O: 1", 1),  # no final score line: the overall (O) score
        ("Measure (M): 2\nTrust (T): 3\nFinal score (O): 1", 1),
        ('{"final_score": 1}', 1),
        ("The final score is 3.", 3),
        ("Score: 2", 2),
        ("2", 2),
        (" 3\n", 3),
        ("I would give it a score of 1 out of 3", 1),
        ("It falls into relevance category 2.", 2),
        ("The passage is relevant.", 0),  # nothing to read: 0, as UMBRELA records it
        ("", 0),
        ("3.5", 3),  # UMBRELA takes the digit inside the number
    ],
)
def test_umbrela_parser_on_real_looking_answers(answer, grade):
    assert get_parser("umbrela").parse(answer) == grade
