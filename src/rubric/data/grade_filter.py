"""Grade filters: which grades of a graded passages file feed a score or a report.

A file may hold grades of several prompts and LLMs side by side. A :class:`GradeFilter` names
any of prompt class, LLM and prompt type; :func:`resolve_kind` checks that the selection
picks exactly one (prompt class, LLM) combination and otherwise raises an error that lists what
the file holds, so a typo never becomes an empty or silently mixed result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import get_args

from rubric.data.models import ExamGrades, FullParagraphData, Grades, PromptType, QueryWithFullParagraphList
from rubric.errors import UserError, one_of

DIRECT = "direct"
PROMPT_TYPES: tuple[str, ...] = get_args(PromptType)  # question, nugget, direct
ITEM_TYPES = ("question", "nugget")  # the prompt types that grade items (a bank's questions or nuggets)


def grade_type(g: ExamGrades | Grades) -> str:
    """``question``, ``nugget`` or ``direct`` (direct prompts fill the ``grades`` field)."""
    if isinstance(g, Grades):
        return DIRECT
    return g.prompt_type or "question"


#: The fields of a :class:`GradeFilter`, each an option of the grade-reading commands.
FIELDS = ("prompt_class", "llm", "prompt_type")


@dataclass(frozen=True)
class GradeKind:
    """One (prompt class, LLM, prompt type) combination present in a file."""

    prompt_class: str
    llm: str
    prompt_type: str

    def __str__(self) -> str:
        return f"--prompt-class {self.prompt_class} --llm {self.llm} --prompt-type {self.prompt_type}"


@dataclass(frozen=True)
class GradeFilter:
    """Selection of grades; ``None`` fields match anything."""

    prompt_class: str | None = None
    llm: str | None = None
    prompt_type: str | None = None

    def check(self, prompt_types: Sequence[str] = PROMPT_TYPES) -> GradeFilter:
        """``--prompt-type`` must be one of ``prompt_types`` (those the caller can use, e.g.
        :data:`ITEM_TYPES` for measures over items); checked before any file is read."""
        if self.prompt_type is not None:
            one_of("prompt_type", self.prompt_type, prompt_types)
        return self

    def matches(self, g: ExamGrades | Grades) -> bool:
        return (
            (self.prompt_class is None or g.prompt_class == self.prompt_class)
            and (self.llm is None or g.llm == self.llm)
            and (self.prompt_type is None or grade_type(g) == self.prompt_type)
        )

    def select(self, p: FullParagraphData) -> list[ExamGrades | Grades]:
        """The grades of one passage that this filter selects."""
        found: list[ExamGrades | Grades] = [g for g in p.exam_grades or [] if self.matches(g)]
        found.extend(g for g in p.grades or [] if self.matches(g))
        return found

    def describe(self) -> str:
        """The selection for an error message, its options marked as parameters
        (:class:`rubric.errors.UserError` with :data:`FIELDS`)."""
        parts = [f"{{{name}}} {getattr(self, name)}" for name in FIELDS if getattr(self, name) is not None]
        return " ".join(parts) or "(no selection)"


def iter_grades(queries: Iterable[QueryWithFullParagraphList]) -> Iterator[ExamGrades | Grades]:
    for q in queries:
        for p in q.paragraphs:
            yield from p.exam_grades or []
            yield from p.grades or []


def grade_kinds(queries: Iterable[QueryWithFullParagraphList]) -> Counter[GradeKind]:
    """How many passages carry each (prompt class, LLM, prompt type) combination."""
    return Counter(GradeKind(g.prompt_class, g.llm, grade_type(g)) for g in iter_grades(queries))


def format_kinds(kinds: Counter[GradeKind]) -> str:
    if not kinds:
        return "  (no grades at all: run `rubric grade` first)"
    return "\n".join(f"  {k}   ({n} grades)" for k, n in sorted(kinds.items(), key=lambda kv: str(kv[0])))


def resolve_kind(
    kinds: Counter[GradeKind],
    selection: GradeFilter,
    source: str = "input",
    exclude_prompt_class: str | None = None,
) -> GradeKind:
    """The one combination ``selection`` picks among the kinds a file holds (a streaming reader's
    survey); an error lists the choices otherwise.

    ``exclude_prompt_class``: grades of this prompt class are not candidates (``--prefer X``
    resolves the grades to fall back to among the others).
    """
    if exclude_prompt_class is not None:
        kinds = Counter({k: n for k, n in kinds.items() if k.prompt_class != exclude_prompt_class})
    picked = [
        k
        for k in kinds
        if (selection.prompt_class in (None, k.prompt_class))
        and (selection.llm in (None, k.llm))
        and (selection.prompt_type in (None, k.prompt_type))
    ]
    if len(picked) == 1:
        return picked[0]
    if not picked:
        raise UserError(
            f"{source}: no grades match {selection.describe()}; the file holds:\n{format_kinds(kinds)}",
            *FIELDS,
        )
    choices = format_kinds(Counter({k: kinds[k] for k in picked}))
    raise UserError(
        f"{source}: {selection.describe()} is ambiguous, it matches {len(picked)} kinds of grades; "
        f"pick one with {{prompt_class}}/{{llm}}/{{prompt_type}}:\n{choices}",
        *FIELDS,
    )
