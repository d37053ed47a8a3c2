"""A small hand-made graded passages file and bank with known grades (shared by verify tests).

Two queries; q1 has three questions, q2 two. Grades are chosen so every report has a known
answer: p2 is judged relevant but no item reaches 4 (uncovered), item "b" gets 5 and 4 on
non-relevant passages (spurious), p5's text and answers try to inject HTML, p6 is ungraded and
r3 has no judgment.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from rubric.data.jsonl import write_bank, write_passages
from rubric.data.models import (
    ExamGrades,
    FullParagraphData,
    Grades,
    Judgment,
    ParagraphData,
    PromptInfo,
    QueryWithFullParagraphList,
    QuestionItem,
    SelfRating,
    TestBank,
)

RATING = "QuestionSelfRatedUnanswerablePromptWithChoices"
ANSWER = "QuestionCompleteConciseUnanswerablePromptWithChoices"
DIRECT = "Sun"
LLM = "google/flan-t5-large"
XSS = '<script>document.body.dataset.pwned=1</script><img src=x onerror="document.body.dataset.pwned=2">'

QUESTIONS = {
    "q1": {"a": "what is a cat?", "b": "how long do cats live?", "c": "what do cats eat?"},
    "q2": {"d": "what is rubric evaluation?", "e": "who wrote trec_eval?"},
}
QUERY_TEXT = {"q1": "cats", "q2": "rubric & <evaluation>"}


def item_id(qid: str, text: str) -> str:
    return f"{qid}/{hashlib.md5(text.strip().encode()).hexdigest()}"


def iid(qid: str, key: str) -> str:
    return item_id(qid, QUESTIONS[qid][key])


# passage -> (judgment, {item key: grade}, direct grade); None grades = ungraded passage
PASSAGES = {
    "q1": {
        "p1": (3, {"a": 5, "b": 4, "c": 0}, 1),
        "p2": (2, {"a": 1, "b": 0, "c": 0}, 1),
        "p3": (0, {"a": 0, "b": 5, "c": 0}, 0),
        "p4": (1, {"a": 0, "b": 4, "c": 2}, 1),
        "p5": (0, {"a": 0, "b": 0, "c": 3}, 0),
        "p6": (2, None, None),
    },
    "q2": {
        "r1": (2, {"d": 4, "e": 4}, 1),
        "r2": (0, {"d": 0, "e": 5}, 0),
        "r3": (None, {"d": 2, "e": 0}, 0),
    },
}


def answer_text(pid: str, key: str) -> str:
    return XSS if pid == "p5" else f"answer {pid}-{key}"


def passage(qid: str, pid: str) -> FullParagraphData:
    judgment, grades, direct = PASSAGES[qid][pid]
    judgments = (
        []
        if judgment is None
        else [Judgment(paragraphId=pid, query=qid, relevance=judgment, titleQuery=QUERY_TEXT[qid])]
    )
    text = f"passage {pid} about {QUERY_TEXT[qid]}" if pid != "p5" else f"evil {XSS}"
    p = FullParagraphData(paragraph_id=pid, text=text, paragraph_data=ParagraphData(judgments=judgments))
    if grades is None:
        return p
    ids = {k: iid(qid, k) for k in grades}
    rating = ExamGrades(
        correctAnswered=[ids[k] for k, g in grades.items() if g >= 4],
        wrongAnswered=[ids[k] for k, g in grades.items() if g < 4],
        answers=[(ids[k], str(g)) for k, g in grades.items()],
        llm=LLM,
        prompt_info=PromptInfo(prompt_class=RATING, is_self_rated=True),
        self_ratings=[SelfRating(question_id=ids[k], self_rating=g) for k, g in grades.items()],
        prompt_type="question",
    )
    answers = ExamGrades(
        correctAnswered=[ids[k] for k, g in grades.items() if g >= 1],
        wrongAnswered=[ids[k] for k, g in grades.items() if g < 1],
        answers=[(ids[k], answer_text(pid, k)) for k in grades],
        llm=LLM,
        prompt_info=PromptInfo(prompt_class=ANSWER, is_self_rated=False),
        prompt_type="question",
    )
    direct_grade = Grades(
        correctAnswered=bool(direct),
        answer="yes" if direct else "no",
        llm=LLM,
        prompt_info=PromptInfo(prompt_class=DIRECT, is_self_rated=True),
        self_ratings=direct,
        prompt_type="direct",
    )
    p.exam_grades = [rating, answers]
    p.grades = [direct_grade]
    return p


def write_graded(path: Path) -> Path:
    write_passages(
        path,
        [
            QueryWithFullParagraphList(queryId=q, paragraphs=[passage(q, pid) for pid in ps])
            for q, ps in PASSAGES.items()
        ],
    )
    return path


def bank(questions: dict[str, dict[str, str]] | None = None) -> list[TestBank]:
    questions = questions or QUESTIONS
    return [
        TestBank(
            query_id=q,
            query_text=QUERY_TEXT[q],
            items=[QuestionItem(query_id=q, question_id=item_id(q, t), question_text=t) for t in qs.values()],
        )
        for q, qs in questions.items()
    ]


def write_bank_file(path: Path, questions: dict[str, dict[str, str]] | None = None) -> Path:
    write_bank(path, bank(questions))
    return path
