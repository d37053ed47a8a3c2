"""Impact of a bank edit (EXAM++ §1): which passages change label, without regrading.

Item ids are ``query/md5(text)``, so an edited item is a removed id plus an added one. Grades of
kept items are reused as they are; the labels before and after are computed from the items each
bank holds. Items of the new bank that the file never graded cannot count yet: they are listed
as "needs grading" (and can be written out as a bank to grade just them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.jsonl import read_bank, write_bank
from rubric.data.labels import LabelRule
from rubric.data.models import TestBank
from rubric.data.query_selection import QuerySelection
from rubric.data.table import Table, emit_tables
from rubric.verify.items import bank_items, snippet
from rubric.verify.matrix import GradeMatrix, PassageGrades
from rubric.verify.report import GradedSelection, selected_grades

log = logging.getLogger(__name__)


@dataclass
class Impact:
    """The result of comparing two banks over one graded file."""

    items: list[tuple[str, str, str, int, str]] = field(default_factory=list)
    """(query_id, item_id, status removed|added|kept, passages lacking a grade, item text)."""
    changes: list[tuple[str, str, int | None, int, int]] = field(default_factory=list)
    """(query_id, passage_id, judgment, label before, label after) of passages whose label moved."""
    passages: int = 0
    needs_grading: dict[str, set[str]] = field(default_factory=dict)

    def items_table(self) -> Table:
        return Table(
            ["query_id", "item_id", "status", "ungraded_passages", "item_text"],
            [list(r) for r in self.items],
            title="bank edit: items removed, added, kept",
            notes=[
                f"{sum(len(v) for v in self.needs_grading.values())} items of the new bank need grading "
                f"(ungraded_passages > 0); their grades are not counted after the edit"
            ],
        )

    def changes_table(self) -> Table:
        rows: list[list[str | int | float | None]] = [
            [q, p, j, before, after, after - before] for q, p, j, before, after in self.changes
        ]
        return Table(
            ["query_id", "passage_id", "judgment", "label_before", "label_after", "delta"],
            rows,
            title="passages whose label changes",
            notes=[f"{len(self.changes)} of {self.passages} graded passages change label"],
        )


def bank_impact(
    matrix: GradeMatrix, before: list[TestBank], after: list[TestBank], rule: LabelRule = LabelRule()
) -> Impact:
    """Labels from the grades of ``before``'s items vs ``after``'s items, per passage.

    The matrix is read once, query by query; the result keeps the items of the banks and the
    passages whose label moves.
    """
    a, b = bank_items(before), bank_items(after)
    wanted = dict.fromkeys([*a, *b])
    result = Impact()
    items_of: dict[str, list[tuple[str, str, str, int, str]]] = {}
    for q in matrix.queries:
        if q.query_id in wanted:
            items_of[q.query_id] = _query_impact(q.query_id, q.passages, a, b=b, rule=rule, result=result)
    for qid in wanted:
        result.items.extend(
            items_of[qid] if qid in items_of else _query_impact(qid, [], a, b=b, rule=rule, result=result)
        )
    result.changes.sort(key=lambda c: (-abs(c[4] - c[3]), c[0], c[1]))
    return result


def _query_impact(
    qid: str,
    passages: list[PassageGrades],
    a: dict[str, dict[str, str]],
    *,
    b: dict[str, dict[str, str]],
    rule: LabelRule,
    result: Impact,
) -> list[tuple[str, str, str, int, str]]:
    """The item rows of one query; its passages whose label moves go to ``result``."""
    old, new = a.get(qid, {}), b.get(qid, {})
    items = []
    for item in dict.fromkeys([*old, *new]):
        status = "kept" if item in old and item in new else ("removed" if item in old else "added")
        missing = sum(1 for p in passages if item not in p.grades)
        if status != "removed" and (missing or not passages):
            result.needs_grading.setdefault(qid, set()).add(item)
        text = new.get(item, old.get(item, ""))
        items.append((qid, item, status, missing if passages else 0, snippet(text, 200)))
    for p in passages:
        result.passages += 1
        la = rule.apply([g for i, g in p.grades.items() if i in old])
        lb = rule.apply([g for i, g in p.grades.items() if i in new])
        if la != lb:
            result.changes.append((qid, p.passage_id, p.judgment, la, lb))
    return items


def needs_grading_banks(after: list[TestBank], impact: Impact) -> list[TestBank]:
    """The new bank restricted to the items that still need grading (empty banks dropped)."""
    out = []
    for bank in after:
        todo = impact.needs_grading.get(bank.query_id, set())
        items = [it for it in bank.items if it.item_id in todo]
        if items:
            out.append(bank.model_copy(update={"items": items}))
    return out


def impact_report(
    selection: GradedSelection,
    bank_before: Path,
    bank_after: Path,
    *,
    rule: LabelRule,
    fmt: str,
    output: Path | None,
    needs_grading: Path | None,
) -> Impact:
    """`rubric verify impact`: the selected queries' banks before and after the edit against the
    selected grades; writes the item and change tables, the items that still need grading (as a
    bank, when ``needs_grading`` names a file) and notes what moved."""
    chosen = QuerySelection.of(selection.queries)  # None: every query
    before = list(chosen.select(read_bank(bank_before), lambda b: b.query_id))
    after = list(chosen.select(read_bank(bank_after), lambda b: b.query_id))
    with selected_grades(selection, answer="rating", items=True) as m:
        result = bank_impact(m, before, after, rule)
    emit_tables([result.items_table(), result.changes_table()], fmt, output)
    if needs_grading is not None:
        n = write_bank(needs_grading, needs_grading_banks(after, result))
        log.info("wrote %s: %d banks with items to grade", needs_grading, n)
    log.info("%s; %s", result.changes_table().notes[0], result.items_table().notes[0])
    return result
