"""The file models keep unknown fields, omit unset ones, and validate what they must."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from rubric.data.models import ExamGrades, FullParagraphData, Grades, SelfRating, TestBank


def graded_passage() -> dict:
    return {
        "paragraph_id": "p1",
        "text": "Bees make honey.",
        "paragraph": "",
        "paragraph_data": {
            "judgments": [{"paragraphId": "p1", "query": "q1", "relevance": 2, "titleQuery": "bees"}],
            "rankings": [{"method": "bm25", "paragraphId": "p1", "queryId": "q1", "rank": 1, "score": 3.5}],
        },
        "exam_grades": [
            {
                "correctAnswered": ["q1/a"],
                "wrongAnswered": ["q1/b"],
                "answers": [["q1/a", "4"], ["q1/b", "0"]],
                "llm_response_errors": {},
                "llm": "google/flan-t5-large",
                "llm_options": {},
                "exam_ratio": 0.5,
                "prompt_info": {
                    "prompt_class": "QuestionSelfRatedUnanswerablePromptWithChoices",
                    "orig_prompt_class": "unknown",
                    "before_conversion_ids": None,
                    "is_self_rated": True,
                },
                "self_ratings": [
                    {"question_id": "q1/a", "self_rating": 4},
                    {"question_id": "q1/b", "self_rating": 0},
                ],
                "prompt_type": "question",
            }
        ],
        "grades": [
            {
                "correctAnswered": True,
                "answer": "yes",
                "llm": "google/flan-t5-large",
                "llm_options": {},
                "prompt_info": {"prompt_class": "HELM", "is_self_rated": False},
                "self_ratings": 1,
                "prompt_type": "direct",
            }
        ],
        "our_future_field": {"kept": [1, 2]},
    }


def test_round_trip_keeps_unknown_fields_and_nulls_inside_them():
    raw = graded_passage()
    p = FullParagraphData.model_validate(raw)
    assert p.to_json() == raw


def test_unset_declared_fields_are_omitted_on_write():
    g = ExamGrades(llm="m", exam_ratio=1.0)
    out = g.to_json()
    assert "relevance_label" not in out and "self_ratings" not in out and "prompt_info" not in out
    assert out["llm"] == "m"


def test_self_rating_item_id_for_questions_and_nuggets():
    assert SelfRating(question_id="q/1", self_rating=3).item_id == "q/1"
    assert SelfRating(nugget_id="q/2", self_rating=0).item_id == "q/2"


def test_passage_requires_paragraph_id():
    raw = graded_passage()
    del raw["paragraph_id"]
    with pytest.raises(ValidationError) as e:
        FullParagraphData.model_validate(raw)
    assert e.value.errors()[0]["loc"] == ("paragraph_id",)


def test_judgment_of_a_passage():
    p = FullParagraphData.model_validate(graded_passage())
    assert p.judgment() == 2 and p.judgment("q1") == 2 and p.judgment("q9") is None


def test_grades_keep_original_number_answers():
    g = ExamGrades.model_validate({"llm": "m", "answers": [["aggregate", 2]]})
    assert g.to_json()["answers"] == [["aggregate", 2]]
    d = Grades.model_validate({"correctAnswered": False, "answer": "no", "llm": "m"})
    assert d.to_json() == {"correctAnswered": False, "answer": "no", "llm": "m", "llm_options": {}}


def test_bank_items_are_questions_or_nuggets():
    q = TestBank.model_validate(
        {
            "query_id": "1",
            "items": [
                {"query_id": "1", "question_id": "1/x", "question_text": "Why?", "gold_answers": ["a"]}
            ],
        }
    )
    n = TestBank.model_validate(
        {
            "query_id": "1",
            "facet_id": "f",
            "items": [{"query_id": "1", "nugget_id": "1/f/y", "nugget_text": "bees", "importance": "vital"}],
        }
    )
    assert q.kind == "question" and q.items[0].item_text == "Why?"
    assert n.kind == "nugget" and n.items[0].importance == "vital"
    with pytest.raises(ValidationError):
        TestBank.model_validate({"query_id": "1", "items": [{"query_id": "1", "nugget_text": "no id"}]})
