"""Review files: what a human concluded on the review page, and how several reviewers merge.

The page of `rubric verify html` exports one JSON file per reviewer::

    {"version": 1, "reviewer": "alice", "source": {"file": "graded.jsonl.gz", "sha256": "..."},
     "actions": [{"type": "grade", "query_id": "q1", "paragraph_id": "p3", "item_id": "q1/...",
                  "prompt_class": "...", "grade": 5, "note": "states the date"}, ...]}

Actions: ``grade`` (a corrected 0-5 grade of one cell), ``confirm`` (the LLM's grade of the cell
is right), ``remove_item`` / ``rewrite_item`` / ``add_item`` (bank edits), ``note`` (free text on
a query, an item or a cell). :class:`Review` validates a file; errors name the file and the index
of the action. :func:`merge_reviews` joins the files of several reviewers: per reviewer the last
action on a cell or an item wins (a reviewer who exported twice gives the newer file last);
grades of different reviewers stay apart (one human record each), while bank edits must agree,
since one bank comes out.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    TypeAdapter,
    ValidationError,
)

from rubric.bank.edit import BankEdit
from rubric.data.files import open_text
from rubric.data.json_line import load_json
from rubric.data.jsonl import describe_validation_error
from rubric.errors import UserError

HUMAN_PROMPT_CLASS = "HumanReview"
"""The prompt class of the grade records `rubric verify apply` writes."""

HUMAN_LLM_PREFIX = "human:"
"""Their ``llm`` is ``human:<reviewer>``."""

REVIEW_VERSION: Literal[1] = 1

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]


def _one_line_name(name: str) -> str:
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        raise ValueError("must not hold control characters (a tab, a newline, an escape sequence)")
    return name


# A reviewer's name goes into grade records (llm human:NAME), TSV tables and the terminal.
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1), AfterValidator(_one_line_name)]


class _Action(BaseModel):
    model_config = ConfigDict(extra="forbid")


class _CellAction(_Action):
    query_id: Text
    paragraph_id: Text
    item_id: Text
    prompt_class: Text
    llm: str | None = None  # the LLM whose grades the page showed (the page writes it)
    note: str | None = None

    @property
    def cell(self) -> tuple[str, str, str]:
        return self.query_id, self.paragraph_id, self.item_id


class GradeAction(_CellAction):
    """The reviewer's own grade of one (passage, item) cell."""

    type: Literal["grade"]
    grade: int = Field(ge=0, le=5, strict=True)


class ConfirmAction(_CellAction):
    """The LLM's grade of the cell is right: it becomes the reviewer's grade."""

    type: Literal["confirm"]


class RemoveItemAction(_Action):
    type: Literal["remove_item"]
    query_id: Text
    item_id: Text
    note: str | None = None


class RewriteItemAction(_Action):
    type: Literal["rewrite_item"]
    query_id: Text
    item_id: Text
    text: Text
    note: str | None = None


class AddItemAction(_Action):
    type: Literal["add_item"]
    query_id: Text  # qid, or qid/facet for facet banks
    text: Text
    note: str | None = None


class NoteAction(_Action):
    """A note on a query, on an item (``item_id``) or on a cell (``paragraph_id`` and ``item_id``)."""

    type: Literal["note"]
    query_id: Text
    paragraph_id: str | None = None
    item_id: str | None = None
    text: Text


Action = Annotated[
    GradeAction | ConfirmAction | RemoveItemAction | RewriteItemAction | AddItemAction | NoteAction,
    Field(discriminator="type"),
]
_ACTION = TypeAdapter(Action)


class Source(BaseModel):
    """The graded file the page was made from: its name and the sha256 of its bytes."""

    model_config = ConfigDict(extra="forbid")

    file: str
    sha256: Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]


class Review(BaseModel):
    """One reviewer's review file (version 1)."""

    model_config = ConfigDict(extra="forbid")

    version: Literal[1]
    reviewer: Name
    source: Source
    created: str | None = None  # when the page exported it (ISO 8601)
    actions: list[Action] = Field(default_factory=list)

    @property
    def llm(self) -> str:
        return HUMAN_LLM_PREFIX + self.reviewer


class _Envelope(BaseModel):
    """Everything but the actions, validated first so action errors can name their index."""

    model_config = ConfigDict(extra="forbid")

    version: int
    reviewer: Name
    source: Source
    created: str | None = None
    actions: list[Any] = Field(default_factory=list)


def file_sha256(path: str | Path) -> str:
    """The sha256 of a file's bytes (as stored, gzip included): what ties a review to its file."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def parse_review(obj: Any, where: str = "review") -> Review:
    """Validate a parsed review file; errors read ``WHERE: actions[3] (grade): grade: ...``."""
    if not isinstance(obj, dict):
        raise UserError(f"{where}: expected a JSON object with version, reviewer, source and actions")
    try:
        env = _Envelope.model_validate(obj)
    except ValidationError as e:
        raise UserError(f"{where}: {describe_validation_error(e)}") from None
    if env.version != REVIEW_VERSION:
        raise UserError(
            f"{where}: review file version {env.version}; this rubric reads version {REVIEW_VERSION}"
        )
    actions = []
    for i, raw in enumerate(env.actions):
        kind = raw.get("type") if isinstance(raw, dict) else None
        label = f"actions[{i}]" + (f" ({kind})" if isinstance(kind, str) else "")
        try:
            actions.append(_ACTION.validate_python(raw))
        except ValidationError as e:
            err = e.errors()[0]
            loc = [str(p) for p in err["loc"]]
            if loc and loc[0] == kind:  # pydantic puts the tag first
                loc = loc[1:]
            raise UserError(f"{where}: {label}: {'.'.join(loc) or 'action'}: {err['msg']}") from None
    return Review(
        version=REVIEW_VERSION, reviewer=env.reviewer, source=env.source, created=env.created, actions=actions
    )


def read_review(path: str | Path) -> Review:
    """Read and validate one review file (plain or gzip JSON)."""
    with open_text(path) as f:
        text = f.read()
    try:
        obj = load_json(str(path), text)
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not valid JSON ({e.msg}, line {e.lineno} column {e.colno})") from None
    return parse_review(obj, str(path))


# --- merging the reviews of several reviewers ------------------------------------------------------

Cell = tuple[str, str, str]  # (query_id, paragraph_id, item_id)


@dataclass(frozen=True)
class Origin:
    """Where an action came from, for messages: ``alice.json: actions[3]``."""

    file: str
    index: int

    def __str__(self) -> str:
        return f"{self.file}: actions[{self.index}]"


@dataclass(frozen=True)
class CellDecision:
    """A reviewer's last word on one cell: a grade, or a confirmation of the LLM's grade."""

    reviewer: str
    action: GradeAction | ConfirmAction
    origin: Origin


@dataclass(frozen=True)
class Note:
    reviewer: str
    query_id: str
    paragraph_id: str | None
    item_id: str | None
    text: str
    origin: Origin

    @property
    def where(self) -> str:
        return "/".join(x for x in (self.query_id, self.paragraph_id, self.item_id) if x)


@dataclass
class ReviewSet:
    """The merged reviews: per reviewer their cell decisions, the agreed bank edits, all notes."""

    files: list[tuple[str, Review]]
    cells: dict[str, dict[Cell, CellDecision]] = field(default_factory=dict)
    bank_edits: list[BankEdit] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    @property
    def reviewers(self) -> list[str]:
        return list(dict.fromkeys(r.reviewer for _, r in self.files))

    def sources(self) -> dict[str, list[str]]:
        """sha256 -> the review files made from the graded file with that digest."""
        out: dict[str, list[str]] = {}
        for name, r in self.files:
            out.setdefault(r.source.sha256, []).append(name)
        return out


def _edit_of(action: RemoveItemAction | RewriteItemAction | AddItemAction, origin: Origin) -> BankEdit:
    if isinstance(action, RemoveItemAction):
        return BankEdit("remove", action.item_id, origin=str(origin))
    if isinstance(action, RewriteItemAction):
        return BankEdit("rewrite", action.item_id, action.text, origin=str(origin))
    return BankEdit("add", action.query_id, action.text, origin=str(origin))


def _describe(edit: BankEdit) -> str:
    if edit.op == "remove":
        return "removes it"
    if edit.op == "rewrite":
        return f"rewrites it to {edit.text!r}"
    return f"adds {edit.text!r}"


def merge_reviews(reviews: Sequence[tuple[str, Review]]) -> ReviewSet:
    """Join review files (``(name, review)`` in the order given; later files of one reviewer win).

    Two reviewers who edit one bank item differently (remove vs rewrite, or two texts) are an
    error naming both actions: the output bank can hold only one version of the item.
    """
    merged = ReviewSet(files=list(reviews))
    # per reviewer: item id -> its last edit; (bank key, text) -> addition
    item_edits: dict[str, dict[str, BankEdit]] = {}
    additions: dict[tuple[str, str], BankEdit] = {}
    for name, review in reviews:
        who = review.reviewer
        cells = merged.cells.setdefault(who, {})
        mine = item_edits.setdefault(who, {})
        for i, action in enumerate(review.actions):
            origin = Origin(name, i)
            if isinstance(action, GradeAction | ConfirmAction):
                cells[action.cell] = CellDecision(who, action, origin)
                if action.note and action.note.strip():
                    merged.notes.append(
                        Note(
                            who,
                            action.query_id,
                            action.paragraph_id,
                            action.item_id,
                            action.note.strip(),
                            origin,
                        )
                    )
            elif isinstance(action, NoteAction):
                merged.notes.append(
                    Note(who, action.query_id, action.paragraph_id, action.item_id, action.text, origin)
                )
            elif isinstance(action, AddItemAction):
                additions.setdefault((action.query_id, action.text), _edit_of(action, origin))
            else:
                mine[action.item_id] = _edit_of(action, origin)
                if action.note and action.note.strip():
                    merged.notes.append(
                        Note(who, action.query_id, None, action.item_id, action.note.strip(), origin)
                    )
    agreed: dict[str, tuple[str, BankEdit]] = {}
    for who, edits in item_edits.items():
        for item_id, edit in edits.items():
            if item_id not in agreed:
                agreed[item_id] = (who, edit)
                continue
            other, first = agreed[item_id]
            if (first.op, first.text) != (edit.op, edit.text):
                raise UserError(
                    f"conflicting bank edits of item {item_id}: {other} ({first.origin}) {_describe(first)}, "
                    f"{who} ({edit.origin}) {_describe(edit)}; settle it in one review file"
                )
    merged.bank_edits = [e for _, e in agreed.values()] + list(additions.values())
    return merged


def read_reviews(paths: Iterable[str | Path]) -> ReviewSet:
    """Read, validate and merge review files."""
    return merge_reviews([(str(p), read_review(p)) for p in paths])
