"""Grade records, written as the original Autograding Workbench wrote them.

Per passage, one ``exam_grades`` record per (prompt, LLM) with ``answers`` [[item_id, answer]]
for every item in bank order, ``correctAnswered`` (items with grade >= 1), ``wrongAnswered``,
``exam_ratio`` = correct / items, and ``self_ratings`` for self-rated prompts (with our
``expected_rating``: the probability-weighted grade over the answer tokens, where the backend
read the answer distribution). Direct prompts fill ``grades`` records (``answer``,
``self_ratings`` = the grade, ``correctAnswered`` = grade >= 1). A record with the same prompt
class and LLM is replaced in place (:func:`put`), so grading a file again with another prompt
adds to it.

Prompt-free graders that compute a number before bucketing it into a grade (the embedding
grader's cosine similarity) have it kept as ``similarity`` next to each ``self_rating`` (direct
grades: in the record), rounded to 4 decimals. It is a field the original tool does not know;
files keep loading there and every later phase here reads the grade as before.
"""

from __future__ import annotations

from typing import Any

from rubric.data.models import (
    ExamGrades,
    FullParagraphData,
    Grades,
    NuggetItem,
    PromptInfo,
    QuestionItem,
    SelfRating,
)
from rubric.grading.verification import Verdict
from rubric.llm.base import Answer
from rubric.prompting.parse import Parser
from rubric.prompting.prompts import Prompt

DIRECT_PROMPT_TYPE = "direct_grading"  # the original tool's prompt_type of direct grades
DIGITS = 4  # expected ratings and similarities are rounded, so files do not change with float noise


def prompt_info(prompt: Prompt, **extra: Any) -> PromptInfo:
    return PromptInfo(**{**extra, **prompt.prompt_info, "prompt_class": prompt.name})


def exam_record(
    prompt: Prompt, parser: Parser, items: list, got: list[Answer], *, llm: str, options: dict[str, Any]
) -> ExamGrades:
    """The record of a question or nugget prompt for one passage (one answer per item)."""
    grades = [
        parser.parse(r.text, _gold(it) if parser.needs_gold_answers else None)
        for it, r in zip(items, got, strict=True)
    ]
    correct = [it.item_id for it, g in zip(items, grades, strict=True) if g >= 1]
    wrong = [it.item_id for it, g in zip(items, grades, strict=True) if g < 1]
    self_rated = bool(prompt.prompt_info.get("is_self_rated", parser.choices is not None))
    ratings = None
    if self_rated:
        ratings = []
        for it, g, r in zip(items, grades, got, strict=True):
            field_name = "nugget_id" if isinstance(it, NuggetItem) else "question_id"
            ratings.append(
                SelfRating(
                    **{field_name: it.item_id},
                    self_rating=g,
                    expected_rating=expected(parser, r),
                    **similarity(r),
                )
            )
    return ExamGrades(
        correctAnswered=correct,
        wrongAnswered=wrong,
        answers=[(it.item_id, r.text) for it, r in zip(items, got, strict=True)],
        llm=llm,
        llm_options=options,
        exam_ratio=len(correct) / len(items),
        prompt_info=prompt_info(prompt),
        self_ratings=ratings,
        prompt_type=prompt.prompt_type or prompt.kind,
    )


def verify_record(
    prompt: Prompt, extract: Prompt, items: list, got: list[Verdict], *, llm: str, options: dict[str, Any]
) -> ExamGrades:
    """Answers from the extraction stage, correct / wrong from the verification stage; questions
    without gold answers are in neither list (see :mod:`rubric.grading.verification`)."""
    correct = [it.item_id for it, v in zip(items, got, strict=True) if v.correct is True]
    wrong = [it.item_id for it, v in zip(items, got, strict=True) if v.correct is False]
    return ExamGrades(
        correctAnswered=correct,
        wrongAnswered=wrong,
        answers=[(it.item_id, v.answer) for it, v in zip(items, got, strict=True)],
        llm=llm,
        llm_options=options,
        exam_ratio=len(correct) / max(len(correct) + len(wrong), 1),
        prompt_info=prompt_info(prompt, orig_prompt_class=extract.name),
        self_ratings=None,
        prompt_type=prompt.prompt_type or "question",
    )


def direct_record(
    prompt: Prompt,
    parser: Parser,
    answer: Answer,
    llm: str,
    options: dict[str, Any],
    *,
    grade: int | None = None,
) -> Grades:
    """The record of a direct prompt for one (passage, query): ``grade`` when the grader gave it
    on the prompt's scale (a :class:`~rubric.llm.base.ScaleGrader`), else the parse of the answer."""
    if grade is None:
        grade = parser.parse(answer.text)
    return Grades(
        correctAnswered=grade >= 1,
        answer=answer.text,
        llm=llm,
        llm_options=options,
        prompt_info=prompt_info(prompt),
        self_ratings=grade,
        prompt_type=prompt.prompt_type or DIRECT_PROMPT_TYPE,
        expected_rating=expected(parser, answer),
        **similarity(answer),
    )


def _gold(item: QuestionItem | NuggetItem) -> list[str]:
    return list(item.gold_answers or []) if isinstance(item, QuestionItem) else []


def expected(parser: Parser, answer: Answer) -> float | None:
    """Probability-weighted grade over the parser's one-token choices (rounded for stable files)."""
    if parser.choices is None:
        return None
    value = answer.expected({c: float(g) for c, g in parser.choice_grades.items()})
    return None if value is None else round(value, DIGITS)


def similarity(answer: Answer) -> dict[str, float]:
    """``{"similarity": x}`` for answers with a score (prompt-free graders), else nothing."""
    return {} if answer.score is None else {"similarity": round(answer.score, DIGITS)}


def put(passage: FullParagraphData, record: ExamGrades | Grades) -> None:
    """Replace the record with the same prompt class and LLM in place, else append it."""
    field_name = "grades" if isinstance(record, Grades) else "exam_grades"
    kept = list(getattr(passage, field_name) or [])
    for i, old in enumerate(kept):
        if old.prompt_class == record.prompt_class and old.llm == record.llm:
            kept[i] = record
            break
    else:
        kept.append(record)
    setattr(passage, field_name, kept)
