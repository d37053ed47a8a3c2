"""Feed reviews back: human grades become grade records, bank actions edit the bank.

Each reviewer's grades of a passage become one ``exam_grades`` record with prompt class
``HumanReview`` and llm ``human:<reviewer>``, written like an LLM's self-rated record
(``self_ratings``, ``correctAnswered`` = items graded >= 1 as `rubric grade` writes them,
``wrongAnswered``, ``exam_ratio``, ``answers`` = the reviewer's note on the cell), so qrels,
leaderboards, Cover and every verify report read them with ``--prompt-class HumanReview``
unchanged. A confirmation records the confirmed LLM grade as the reviewer's own. The records
replace any earlier ``HumanReview`` records of the same reviewers (a review file holds a
reviewer's whole work), and the LLM's records stay as they are.

Bank actions go through :func:`rubric.bank.edit.apply_edits`, the code of `rubric bank edit`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.bank.edit import EditReport, apply_edits
from rubric.data.files import rereadable, write_output
from rubric.data.jsonl import read_bank, read_passages, write_bank, write_passages
from rubric.data.labels import item_grades
from rubric.data.models import (
    ExamGrades,
    FullParagraphData,
    PromptInfo,
    QueryWithFullParagraphList,
    SelfRating,
    TestBank,
)
from rubric.errors import UserError, printable
from rubric.verify.review import (
    HUMAN_LLM_PREFIX,
    HUMAN_PROMPT_CLASS,
    Cell,
    CellDecision,
    ReviewSet,
    file_sha256,
    read_reviews,
)


@dataclass(frozen=True)
class Conflict:
    """Reviewers who gave one cell different grades."""

    query_id: str
    paragraph_id: str
    item_id: str
    grades: dict[str, int]  # reviewer -> grade

    def line(self) -> str:
        given = ", ".join(f"{who} {g}" for who, g in self.grades.items())
        return printable(f"conflict {self.query_id} {self.paragraph_id} {self.item_id}: {given}", lines=False)


@dataclass
class ApplyReport:
    """What `rubric verify apply` did to the graded file."""

    grades: Counter[str] = field(default_factory=Counter)  # reviewer -> cells graded
    confirmed: Counter[str] = field(default_factory=Counter)  # reviewer -> of those, confirmations
    changed: Counter[str] = field(default_factory=Counter)  # reviewer -> grades that differ from the LLM's
    records: int = 0  # HumanReview records written
    replaced: int = 0  # earlier HumanReview records of these reviewers dropped
    passages: int = 0
    conflicts: list[Conflict] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        for who in self.grades:
            out.append(
                f"{HUMAN_LLM_PREFIX}{who}: {self.grades[who]} cells ({self.confirmed[who]} confirmed, "
                f"{self.changed[who]} differ from the LLM)"
            )
        return out


def _llm_record(p: FullParagraphData, d: CellDecision) -> ExamGrades:
    """The LLM record whose cell the reviewer looked at (prompt class, and LLM when the page named it)."""
    found = [
        g
        for g in p.exam_grades or []
        if g.prompt_class == d.action.prompt_class and (d.action.llm is None or g.llm == d.action.llm)
    ]
    if len({g.llm for g in found}) > 1:
        llms = ", ".join(sorted({g.llm for g in found}))
        raise UserError(
            f"{d.origin}: {d.action.prompt_class} grades of several LLMs ({llms}); the action names none"
        )
    if not found:
        raise UserError(
            f"{d.origin}: passage {p.paragraph_id} of query {d.action.query_id} has no "
            f"{d.action.prompt_class} grades" + (f" of {d.action.llm}" if d.action.llm else "")
        )
    return found[0]


def _resolve(p: FullParagraphData, d: CellDecision) -> tuple[int, int | None, str]:
    """(human grade, the LLM's grade of the cell or None, prompt type of the LLM record)."""
    record = _llm_record(p, d)
    llm_grade = item_grades(record).get(d.action.item_id)
    if d.action.type == "confirm":
        if llm_grade is None:
            raise UserError(
                f"{d.origin}: confirms a grade the LLM never gave ({d.action.item_id} on {p.paragraph_id})"
            )
        return llm_grade, llm_grade, record.prompt_type or "question"
    return d.action.grade, llm_grade, record.prompt_type or "question"


def human_record(
    reviewer: str, prompt_type: str, grades: dict[str, tuple[int, str]], options: dict
) -> ExamGrades:
    """One reviewer's grades of one passage as a self-rated ``exam_grades`` record.

    ``grades``: item id -> (grade, note). Correct/wrong follow the grader's rule (grade >= 1).
    """
    id_field = "nugget_id" if prompt_type == "nugget" else "question_id"
    correct = [i for i, (g, _) in grades.items() if g >= 1]
    return ExamGrades(
        correctAnswered=correct,
        wrongAnswered=[i for i, (g, _) in grades.items() if g < 1],
        answers=[(i, note) for i, (_, note) in grades.items()],
        llm=HUMAN_LLM_PREFIX + reviewer,
        llm_options=options,
        exam_ratio=len(correct) / len(grades),
        prompt_info=PromptInfo(
            prompt_class=HUMAN_PROMPT_CLASS, prompt_style="human review", is_self_rated=True
        ),
        self_ratings=[SelfRating(**{id_field: i}, self_rating=g) for i, (g, _) in grades.items()],
        prompt_type=prompt_type,
    )


def _known_items(q: QueryWithFullParagraphList) -> set[str]:
    return {i for p in q.paragraphs for g in p.exam_grades or [] for i in item_grades(g)}


def _grades_item(p: FullParagraphData, item: str) -> bool:
    """Whether the passage grades ``item`` (most do: then the whole query need not be gathered)."""
    return any(item in item_grades(g) for g in p.exam_grades or [])


def apply_reviews(
    graded: str | Path, reviews: ReviewSet, output: str | Path, *, name: str | Path | None = None
) -> ApplyReport:
    """Write ``graded`` with the reviewers' grade records to ``output`` (atomically, streaming).

    Every action must name a query, passage and item of ``graded`` (else a :class:`UserError`
    naming the action, and no output); conflicts between reviewers are collected, not errors.
    The lines of one query are merged wherever they are in the file (as every reader merges
    them): a first pass reads the query ids. Messages name ``name`` (the user's name of a copy).
    """
    return _apply_reviews(graded, reviews, output, name or graded)


def _apply_reviews(
    graded: str | Path, reviews: ReviewSet, output: str | Path, name: str | Path
) -> ApplyReport:
    report = ApplyReport()
    reviewers = set(reviews.reviewers)
    pending: dict[str, list[tuple[Cell, CellDecision]]] = {}
    for cells in reviews.cells.values():
        for cell, d in cells.items():
            pending.setdefault(cell[0], []).append((cell, d))
    files = {r.reviewer: [] for _, r in reviews.files}
    for name, r in reviews.files:
        files[r.reviewer].append(Path(name).name)
    sources = {r.reviewer: r.source.sha256 for _, r in reviews.files}
    order = {name: i for i, (name, _) in enumerate(reviews.files)}

    def queries() -> Iterator[QueryWithFullParagraphList]:
        seen: set[str] = set()
        for q in read_passages(graded, name):
            seen.add(q.queryId)
            yield _apply_query(q, pending.get(q.queryId, []))
        missing = [(d.origin.index, d) for qid, ds in pending.items() if qid not in seen for _, d in ds]
        if missing:
            d = min(missing, key=lambda x: (order[x[1].origin.file], x[0]))[1]
            raise UserError(f"{d.origin}: query {d.action.query_id} is not in {name}")

    def _apply_query(q: QueryWithFullParagraphList, decisions: list[tuple[Cell, CellDecision]]):
        passages = {p.paragraph_id: p for p in q.paragraphs}
        items: set[str] | None = None  # the query's graded items, gathered only when needed
        # (passage, reviewer, prompt type) -> item -> (grade, note)
        found: dict[tuple[str, str, str], dict[str, tuple[int, str]]] = {}
        by_cell: dict[Cell, dict[str, int]] = {}
        for cell, d in sorted(decisions, key=lambda x: (order[x[1].origin.file], x[1].origin.index)):
            _, pid, item = cell
            p = passages.get(pid)
            if p is None:
                raise UserError(f"{d.origin}: passage {pid} is not in query {q.queryId} of {name}")
            if not _grades_item(p, item):
                items = _known_items(q) if items is None else items
                if item not in items:
                    raise UserError(f"{d.origin}: item {item} is not graded in query {q.queryId} of {name}")
            grade, llm_grade, prompt_type = _resolve(p, d)
            found.setdefault((pid, d.reviewer, prompt_type), {})[item] = (grade, d.action.note or "")
            by_cell.setdefault(cell, {})[d.reviewer] = grade
            report.grades[d.reviewer] += 1
            report.confirmed[d.reviewer] += d.action.type == "confirm"
            report.changed[d.reviewer] += llm_grade != grade
        for cell, given in by_cell.items():
            if len(set(given.values())) > 1:
                report.conflicts.append(Conflict(*cell, grades=dict(sorted(given.items()))))
        out = []
        for p in q.paragraphs:
            report.passages += 1
            kept = []
            for g in p.exam_grades or []:
                mine = (
                    g.prompt_class == HUMAN_PROMPT_CLASS and g.llm.removeprefix(HUMAN_LLM_PREFIX) in reviewers
                )
                if mine:
                    report.replaced += 1
                else:
                    kept.append(g)
            new = [
                human_record(
                    who,
                    ptype,
                    grades,
                    {"reviewer": who, "review_files": files[who], "source_sha256": sources[who]},
                )
                for (pid, who, ptype), grades in found.items()
                if pid == p.paragraph_id
            ]
            report.records += len(new)
            if new or len(kept) != len(p.exam_grades or []):
                p = p.model_copy(update={"exam_grades": kept + new})
            out.append(p)
        return QueryWithFullParagraphList(queryId=q.queryId, paragraphs=out)

    write_passages(output, queries())
    return report


def check_sources(reviews: ReviewSet, graded: str | Path, digest: str, *, force: bool) -> list[str]:
    """Reviews made from another file than ``graded`` (sha256 ``digest``): an error, or with
    ``force`` the warnings to print."""
    other = {sha: names for sha, names in reviews.sources().items() if sha != digest}
    if not other:
        return []
    lines = [
        f"{name}: made from a file with sha256 {sha[:12]}..., not {graded} ({digest[:12]}...)"
        for sha, names in other.items()
        for name in names
    ]
    if not force:
        raise UserError(
            lines[0] + "; apply reviews to the file their page was made from (several reviews at once), "
            "or give --force"
        )
    return lines


def check_bank_edits(banks: list[TestBank], reviews: ReviewSet) -> None:
    """Every removed or rewritten item must be in the bank (errors name the action)."""
    present = {i.item_id for b in banks for i in b.items}
    for e in reviews.bank_edits:
        if e.op != "add" and e.target not in present:
            raise UserError(f"{e.origin}: item {e.target} is not in the bank")


def apply_bank_edits(banks: list[TestBank], reviews: ReviewSet) -> tuple[list[TestBank], EditReport]:
    """The reviewers' removals, rewrites and additions, applied as `rubric bank edit` applies them."""
    check_bank_edits(banks, reviews)
    return apply_edits(banks, reviews.bank_edits)


def summary_json(reviews: ReviewSet, report: ApplyReport, edits: EditReport | None) -> str:
    """The `--summary` file: per reviewer what was applied, the conflicts and every note."""
    data = {
        "reviewers": {
            who: {
                "llm": HUMAN_LLM_PREFIX + who,
                "files": [name for name, r in reviews.files if r.reviewer == who],
                "cells": report.grades[who],
                "confirmed": report.confirmed[who],
                "differ_from_llm": report.changed[who],
            }
            for who in reviews.reviewers
        },
        "records": report.records,
        "conflicts": [
            {"query_id": c.query_id, "paragraph_id": c.paragraph_id, "item_id": c.item_id, "grades": c.grades}
            for c in report.conflicts
        ],
        "notes": [
            {
                "reviewer": n.reviewer,
                "query_id": n.query_id,
                "paragraph_id": n.paragraph_id,
                "item_id": n.item_id,
                "text": n.text,
            }
            for n in reviews.notes
        ],
        "bank": None
        if edits is None
        else {"added": edits.added, "removed": edits.removed, "rewritten": edits.rewritten},
        "bank_edits_not_applied": len(reviews.bank_edits) if edits is None else 0,
    }
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def closing_lines(reviews: ReviewSet, report: ApplyReport, summary: str | Path | None = None) -> list[str]:
    """What `rubric verify apply` says last: the reviewers' disagreements and notes (the first 20
    of each; all of them are in the ``summary`` file)."""
    more_in = f" in {summary}" if summary else ""
    lines = [c.line() for c in report.conflicts[:20]]
    if len(report.conflicts) > 20:
        lines.append(f"... {len(report.conflicts) - 20} more conflicts{more_in}")
    if report.conflicts:
        lines.append(
            f"{len(report.conflicts)} cells graded differently by reviewers (each reviewer's grade is kept)"
        )
    lines += [
        printable(f"note {note.reviewer} {note.where}: {note.text}", lines=False)
        for note in reviews.notes[:20]
    ]
    if len(reviews.notes) > 20:
        lines.append(f"... {len(reviews.notes) - 20} more notes{more_in}")
    return lines


def apply_review_files(
    files: Sequence[Path],
    output: Path,
    *,
    bank: Path | None = None,
    bank_out: Path | None = None,
    summary: Path | None = None,
    force: bool = False,
    report: Callable[[str], None],
) -> ApplyReport:
    """`rubric verify apply` as one call: ``files`` are the review files, then the graded file
    they review (the command line's order); ``report`` gets every line to show.

    Every check runs before anything is written (the arguments, then the graded file's sha256
    against each review's, then every bank edit against ``bank``), so a refused apply leaves no
    half-written output; then the graded file, the edited bank and the summary are written (the
    CLI writes them together: all of them, or none when one fails). The graded file may be a
    pipe or ``-`` (it is copied once, since it is read twice).
    """
    if len(files) < 2:
        raise UserError("give one or more review files, then the graded file they review")
    *review_files, graded = files
    if (bank is None) != (bank_out is None):
        raise UserError(
            "{bank} and {bank_out} go together: the bank to edit and where to write it", "bank", "bank_out"
        )
    reviews = read_reviews(review_files)
    with rereadable(graded) as readable:  # read twice (its sha256, then the grades): a pipe is copied
        for line in check_sources(reviews, graded, file_sha256(readable), force=force):
            report(f"warning: {line}")
        banks = None
        if bank is not None:
            banks = list(read_bank(bank))
            check_bank_edits(banks, reviews)  # before anything is written
        applied = apply_reviews(readable, reviews, output, name=graded)
    report(
        f"wrote {output}: {applied.records} HumanReview records"
        + (f" (replacing {applied.replaced} earlier ones)" if applied.replaced else "")
    )
    for line in applied.lines():
        report(line)
    edits = None
    if banks is not None and bank_out is not None:
        banks, edits = apply_bank_edits(banks, reviews)
        write_bank(bank_out, banks)
        for message in edits.messages:
            report(message)
        report(f"wrote {bank_out}: {edits.added} added, {edits.removed} removed, {edits.rewritten} rewritten")
    elif reviews.bank_edits:
        report(f"warning: {len(reviews.bank_edits)} item edits not applied; give --bank and --bank-out")
    for line in closing_lines(reviews, applied, summary):
        report(line)
    if summary is not None:
        write_output(summary, summary_json(reviews, applied, edits))
        report(f"wrote {summary}")
    return applied
