"""Pydantic models of every file the workbench reads and writes.

Field names, camelCase included, are those of the original Autograding Workbench (exam_pp), so its
files load here and ours load there. Every model keeps unknown fields (``extra="allow"``) and
writes them back unchanged; declared fields that are ``None`` are left out on write, as the
original does, while unknown fields are written exactly as read (``null`` included). Numbers
must be finite: a ``NaN`` or infinite score or grade is an error, since JSON cannot carry it
(it would be written as ``null`` and fail the next read).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


def _is_none(value: Any) -> bool:
    return value is None


def _omitted_if_none() -> Any:
    """An optional declared field: ``None`` by default, and left out on write when ``None``
    (the original tool's files have no nulls there). Unknown fields are written as read."""
    return Field(None, exclude_if=_is_none)


class Record(BaseModel):
    """Base of all file models: keeps unknown fields, omits unset declared fields on write.

    Omission is per field (``exclude_if``), done by pydantic's serializer; a model-level wrap
    serializer did the same in Python for every record and was a third of the time of writing a
    graded file.
    """

    model_config = ConfigDict(
        extra="allow", populate_by_name=True, validate_assignment=False, allow_inf_nan=False
    )

    def to_json(self) -> dict[str, Any]:
        """The JSON-ready dict of this record as it goes to disk."""
        return self.model_dump(mode="json", by_alias=True)


# ---------------------------------------------------------------------------------------------
# Passages interchange file: one JSON array per line, ["qid", [FullParagraphData, ...]]
# ---------------------------------------------------------------------------------------------


class Judgment(Record):
    """A human (or imported) relevance judgment of a passage for a query."""

    paragraphId: str
    query: str
    relevance: int
    titleQuery: str | None = _omitted_if_none()


class ParagraphRankingEntry(Record):
    """Where a system (``method``) ranked this passage for ``queryId``."""

    method: str
    paragraphId: str
    queryId: str
    rank: int
    score: float


class ParagraphData(Record):
    judgments: list[Judgment] = Field(default_factory=list)
    rankings: list[ParagraphRankingEntry] = Field(default_factory=list)


class SelfRating(Record):
    """A 0-5 self-rating of one test item; exactly one of question_id / nugget_id is set."""

    question_id: str | None = _omitted_if_none()
    nugget_id: str | None = _omitted_if_none()
    self_rating: int
    # Ours: probability-weighted expected grade from the answer-token distribution (fast rating).
    expected_rating: float | None = _omitted_if_none()

    @property
    def item_id(self) -> str:
        return self.question_id if self.question_id is not None else (self.nugget_id or "")


class PromptInfo(Record):
    """How a grade was prompted; ``prompt_class`` names the prompt (original tool's names)."""

    prompt_class: str
    prompt_style: str | None = _omitted_if_none()
    context_first: bool | None = _omitted_if_none()
    check_unanswerable: bool | None = _omitted_if_none()
    check_answer_key: bool | None = _omitted_if_none()
    is_self_rated: bool | None = _omitted_if_none()


PromptType = Literal["question", "nugget", "direct"]


class ExamGrades(Record):
    """Grades of one passage against all items of a bank, for one prompt and LLM."""

    correctAnswered: list[str] = Field(default_factory=list)
    wrongAnswered: list[str] = Field(default_factory=list)
    # [item_id, answer]; answers are strings in our files, the original sometimes wrote numbers.
    answers: list[tuple[str, Any]] = Field(default_factory=list)
    llm: str
    llm_options: dict[str, Any] = Field(default_factory=dict)
    exam_ratio: float | None = _omitted_if_none()
    prompt_info: PromptInfo | None = _omitted_if_none()
    self_ratings: list[SelfRating] | None = _omitted_if_none()
    prompt_type: str | None = _omitted_if_none()
    relevance_label: int | None = _omitted_if_none()

    @property
    def prompt_class(self) -> str:
        return self.prompt_info.prompt_class if self.prompt_info else ""


class Grades(Record):
    """A direct (passage, query) relevance grade, the twin of :class:`ExamGrades`."""

    correctAnswered: bool
    answer: Any = ""
    llm: str
    llm_options: dict[str, Any] = Field(default_factory=dict)
    prompt_info: PromptInfo | None = _omitted_if_none()
    self_ratings: int | None = _omitted_if_none()
    prompt_type: str | None = _omitted_if_none()
    relevance_label: int | None = _omitted_if_none()
    expected_rating: float | None = _omitted_if_none()

    @property
    def prompt_class(self) -> str:
        return self.prompt_info.prompt_class if self.prompt_info else ""


class FullParagraphData(Record):
    """One passage with its text, judgments, rankings and grades."""

    paragraph_id: str
    text: str
    paragraph: Any = ""
    paragraph_data: ParagraphData = Field(default_factory=ParagraphData)
    exam_grades: list[ExamGrades] | None = _omitted_if_none()
    grades: list[Grades] | None = _omitted_if_none()

    def judgment(self, query_id: str | None = None) -> int | None:
        """The (maximum) judged relevance of this passage, for ``query_id`` when given."""
        levels = [
            j.relevance for j in self.paragraph_data.judgments if query_id is None or j.query == query_id
        ]
        return max(levels) if levels else None


class QueryWithFullParagraphList(BaseModel):
    """One line of the passages file: a query id and its passages."""

    queryId: str
    paragraphs: list[FullParagraphData]

    def to_json(self) -> list[Any]:
        return [self.queryId, [p.to_json() for p in self.paragraphs]]


# ---------------------------------------------------------------------------------------------
# Test banks: one JSON object per query (or query facet)
# ---------------------------------------------------------------------------------------------


class QuestionItem(Record):
    query_id: str
    question_id: str
    question_text: str
    facet_id: str | None = _omitted_if_none()
    gold_answers: list[str] | None = _omitted_if_none()

    @property
    def item_id(self) -> str:
        return self.question_id

    @property
    def item_text(self) -> str:
        return self.question_text


class NuggetItem(Record):
    query_id: str
    nugget_id: str
    nugget_text: str
    facet_id: str | None = _omitted_if_none()
    importance: Literal["vital", "okay"] | None = _omitted_if_none()

    @property
    def item_id(self) -> str:
        return self.nugget_id

    @property
    def item_text(self) -> str:
        return self.nugget_text


class TestBank(Record):
    """The test items (questions or nuggets) of one query or query facet."""

    __test__ = False  # not a pytest test class

    query_id: str
    facet_id: str | None = _omitted_if_none()
    facet_text: str | None = _omitted_if_none()
    test_collection: str = ""
    query_text: str = ""
    info: dict[str, Any] | None = _omitted_if_none()
    items: list[QuestionItem | NuggetItem] = Field(default_factory=list)

    @property
    def kind(self) -> Literal["question", "nugget"] | None:
        if not self.items:
            return None
        return "question" if isinstance(self.items[0], QuestionItem) else "nugget"
