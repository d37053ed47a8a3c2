"""List parsing of LLM answers and item ids (pure functions, no LLM)."""

from __future__ import annotations

import hashlib

import pytest

from rubric.bank.ids import item_id
from rubric.llm.lists import ParseError, parse_labels, parse_list

LABELS = {"support": "support", "partial_support": "partial_support", "not_support": "not_support"}


@pytest.mark.parametrize(
    "answer",
    [
        '{"questions": ["What is A?", "What is B?"]}',
        '```json\n{"questions": ["What is A?", "What is B?"]}\n```',
        'Sure, here you go: {"questions": ["What is A?", "What is B?"]} Hope it helps!',
        "Here they are:\n1. What is A?\n2) What is B?\nThanks",
        "- What is A?\n* What is B?",
        "['What is A?', 'What is B?']",
        '{"questions": [{"question": "What is A?"}, {"question": "What is B?"}]}',
        '{"questions": ["What is A?", "What is B?", "What is A?"]}',
    ],
)
def test_parse_list_accepts_the_shapes_llms_answer_with(answer):
    assert parse_list(answer, key="questions") == ["What is A?", "What is B?"]


@pytest.mark.parametrize(
    "answer",
    [
        # castorini/nuggetizer's own format: a Python list, often in a ```python fence (it strips
        # the fences and reads the rest with ast.literal_eval)
        "```python\n['Bees make honey', \"Honey's water content is low\"]\n```",
        "['Bees make honey', \"Honey's water content is low\"]",
        '["Bees make honey", "Honey\'s water content is low"]',
        # what small models write, copying the prompt's own [1] passage numbering
        "[1] Bees make honey\n[2] Honey's water content is low",
        'Nuggets:\n[1] "Bees make honey",\n[2] "Honey\'s water content is low"',
    ],
)
def test_parse_list_reads_the_nuggetizer_formats(answer):
    assert parse_list(answer) == ["Bees make honey", "Honey's water content is low"]


def test_one_bracket_numbered_line_is_its_text_not_a_list_of_a_number():
    assert parse_list("[1] Bees make honey") == ["Bees make honey"]
    assert parse_labels("[1] vital\n[2] okay", {"vital": "vital", "okay": "okay"}, 2) == ["vital", "okay"]


def test_parse_list_picks_the_asked_key_among_several_lists():
    assert parse_list('{"notes": ["x"], "nuggets": ["a", "b"]}', key="nuggets") == ["a", "b"]


@pytest.mark.parametrize("answer", ['{"questions": ["a", "b"', "I cannot help with that.", ""])
def test_parse_list_rejects_answers_without_a_list(answer):
    with pytest.raises(ParseError):
        parse_list(answer, key="questions")


def test_parse_labels_normalises_and_checks_the_count():
    assert parse_labels('["Support", "partial support", "not-support"]', LABELS, 3) == [
        "support",
        "partial_support",
        "not_support",
    ]
    with pytest.raises(ParseError, match="2 labels for 3"):
        parse_labels('["support", "support"]', LABELS, 3)
    with pytest.raises(ParseError, match="unknown label"):
        parse_labels('["support", "maybe"]', LABELS, 2)


def test_item_id_is_md5_of_the_stripped_text():
    digest = hashlib.md5(b"Rooted in blues").hexdigest()
    assert item_id("940547", "  Rooted in blues \n") == f"940547/{digest}"
    assert item_id("tqa2:L_0002", "Rooted in blues", "T_0016") == f"tqa2:L_0002/T_0016/{digest}"
