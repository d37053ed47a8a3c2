"""The bank verbs a human needs between phases: show, edit (add/remove/rewrite), diff.

Ids follow the text, so a rewritten item gets a new id (grades of the old text no longer
apply to it) and records where it came from in ``info.previous_id``; ``diff`` uses that link to
show a rewrite as one change rather than a removal plus an addition.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rubric.bank.generate import Topic, build_items
from rubric.bank.ids import check_kind
from rubric.data.jsonl import read_bank, read_banks, write_bank
from rubric.data.models import NuggetItem, QuestionItem, TestBank
from rubric.data.queries import read_queries
from rubric.errors import UserError

Item = QuestionItem | NuggetItem


def bank_key(bank: TestBank) -> str:
    return f"{bank.query_id}/{bank.facet_id}" if bank.facet_id else bank.query_id


def show_lines(banks: Iterable[TestBank], query: str | None = None) -> list[str]:
    """A readable listing: one header per bank, one line per item (id, importance, text, answers)."""
    lines = []
    for bank in banks:
        if query is not None and query not in (bank.query_id, bank_key(bank)):
            continue
        title = f" ({bank.facet_text})" if bank.facet_text else ""
        lines.append(
            f"# {bank_key(bank)}: {bank.query_text}{title}  [{len(bank.items)} {bank.kind or 'item'}s]"
        )
        for item in bank.items:
            tags = []
            if isinstance(item, NuggetItem) and item.importance:
                tags.append(item.importance)
            tag = f" [{', '.join(tags)}]" if tags else ""
            gold = ""
            if isinstance(item, QuestionItem) and item.gold_answers:
                gold = f"  => {' | '.join(item.gold_answers)}"
            lines.append(f"{item.item_id}{tag}\t{item.item_text}{gold}")
    return lines


def show_bank(path: Path, query: str | None = None, *, as_json: bool = False) -> list[str]:
    """`rubric bank show`: the listing of :func:`show_lines`, or each bank record as a JSON line
    (``as_json``), of every bank or those of ``query`` (a query id, or ``qid/facet``).

    A ``query`` the file does not hold is an error, not an empty listing (a typo would look
    like an empty bank).
    """
    banks = read_banks(path)
    if query is not None and not any(query in (b.query_id, bank_key(b)) for b in banks):
        raise UserError(f"{{query}} {query}: not in {path} ({len(banks)} banks)", "query")
    if not as_json:
        return show_lines(banks, query)
    shown = [b for b in banks if query is None or query in (b.query_id, bank_key(b))]
    return [json.dumps(b.to_json(), ensure_ascii=False) for b in shown]


@dataclass
class EditReport:
    """What an edit did: the counts, and a message per addition already in the bank."""

    added: int = 0
    removed: int = 0
    rewritten: int = 0
    messages: list[str] = field(default_factory=list)

    def lines(self, target: Path) -> list[str]:
        """The messages, then the counts and where the edited banks went."""
        summary = f"{self.added} added, {self.removed} removed, {self.rewritten} rewritten; wrote {target}"
        return [*self.messages, summary]


@dataclass(frozen=True)
class BankEdit:
    """One edit of a bank: ``remove`` or ``rewrite`` an item (``target`` is its id), or ``add`` an
    item with ``text`` to the bank of ``target`` (``qid`` or ``qid/facet``).

    ``origin`` names where the edit came from in error messages (``--remove ID``, or a review
    file's action), so `rubric bank edit` and `rubric verify apply` share this code.
    """

    op: Literal["remove", "rewrite", "add"]
    target: str
    text: str = ""
    origin: str = ""


def _split(option: str, value: str) -> tuple[str, str]:
    key, sep, text = value.partition("=")
    if not sep or not key.strip() or not text.strip():
        raise UserError(f"{{{option}}} {value!r}: expected KEY=TEXT", option)
    return key.strip(), text.strip()


def _with_text(item: Item, text: str, bank: TestBank) -> Item:
    data = item.to_json()
    kind = "questions" if isinstance(item, QuestionItem) else "nuggets"
    new_id = build_items(Topic(bank.query_id, "", bank.facet_id), kind, [text])[0].item_id
    info = dict(data.get("info") or {})
    info["previous_id"] = item.item_id
    if isinstance(item, QuestionItem):
        data.update(question_id=new_id, question_text=text, info=info)
    else:
        data.update(nugget_id=new_id, nugget_text=text, info=info)
    return type(item).model_validate(data)


def edit_banks(
    banks: list[TestBank],
    *,
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    rewrite: Sequence[str] = (),
    kind: str | None = None,
    queries: dict[str, str] | None = None,
) -> tuple[list[TestBank], EditReport]:
    """Apply the edits of `rubric bank edit`'s options (``ID``, ``ID=TEXT``, ``KEY=TEXT``)."""
    edits = [BankEdit("remove", item_id, origin=f"--remove {item_id}") for item_id in remove]
    for value in rewrite:
        item_id, text = _split("rewrite", value)
        edits.append(BankEdit("rewrite", item_id, text, origin=f"--rewrite {item_id}"))
    for value in add:
        key, text = _split("add", value)
        edits.append(BankEdit("add", key, text, origin=f"--add {key}"))
    return apply_edits(banks, edits, kind, queries)


def edit_bank_file(
    bank: Path,
    output: Path,
    *,
    add: Sequence[str] = (),
    remove: Sequence[str] = (),
    rewrite: Sequence[str] = (),
    kind: str | None = None,
    queries: Path | None = None,
) -> EditReport:
    """`rubric bank edit`: :func:`edit_banks` on the banks of ``bank``, written (atomically) to
    ``output``, which may be ``bank`` itself: the file is read completely first."""
    if not (add or remove or rewrite):
        raise UserError("nothing to do: give {add}, {remove} or {rewrite}", "add", "remove", "rewrite")
    banks, report = edit_banks(
        list(read_bank(bank)),
        add=add,
        remove=remove,
        rewrite=rewrite,
        kind=check_kind(kind) if kind else None,
        queries=read_queries(queries) if queries else None,
    )
    write_bank(output, banks)
    return report


def apply_edits(
    banks: list[TestBank],
    edits: Iterable[BankEdit],
    kind: str | None = None,
    queries: dict[str, str] | None = None,
) -> tuple[list[TestBank], EditReport]:
    """Apply the edits (removals, then rewrites, then additions); unknown ids are errors.

    ``kind`` (questions or nuggets) is needed only to add to a file without items; ``queries``
    gives the query texts of banks the additions create.
    """
    report = EditReport()
    edits = list(edits)
    by_key = {bank_key(b): b for b in banks}
    where = {item.item_id: b for b in banks for item in b.items}
    for e in (e for e in edits if e.op == "remove"):
        bank = where.get(e.target)
        if bank is None:
            raise UserError(f"{e.origin}: no item with this id in the bank")
        bank.items = [i for i in bank.items if i.item_id != e.target]
        del where[e.target]
        report.removed += 1
    for e in (e for e in edits if e.op == "rewrite"):
        bank = where.get(e.target)
        if bank is None:
            raise UserError(f"{e.origin}: no item with this id in the bank")
        new_items = []
        for item in bank.items:
            new_items.append(_with_text(item, e.text, bank) if item.item_id == e.target else item)
        bank.items = new_items
        report.rewritten += 1
    file_kind = kind or next((f"{b.kind}s" for b in banks if b.kind), None)
    for e in (e for e in edits if e.op == "add"):
        key, text = e.target, e.text
        bank = by_key.get(key)
        if bank is None:
            qid, _, facet = key.partition("/")
            bank = TestBank(
                query_id=qid,
                facet_id=facet or None,
                query_text=(queries or {}).get(qid, ""),
                info={"generator": "rubric bank edit"},
            )
            banks.append(bank)
            by_key[key] = bank
        bank_kind = f"{bank.kind}s" if bank.kind else file_kind
        if bank_kind is None:
            raise UserError(
                f"{e.origin}: the bank has no items to tell questions from nuggets; give {{kind}}", "kind"
            )
        item = build_items(Topic(bank.query_id, "", bank.facet_id), bank_kind, [text])[0]
        if any(i.item_id == item.item_id for i in bank.items):
            report.messages.append(f"{e.origin}: {text!r} is already in the bank (kept once)")
            continue
        bank.items = [*bank.items, item]
        report.added += 1
    return banks, report


@dataclass
class BankDiff:
    """Per bank key: removed items, added items, rewrites (old, new), importance changes."""

    removed: dict[str, list[Item]] = field(default_factory=dict)
    added: dict[str, list[Item]] = field(default_factory=dict)
    rewritten: dict[str, list[tuple[Item, Item]]] = field(default_factory=dict)
    relabelled: dict[str, list[tuple[Item, Item]]] = field(default_factory=dict)
    only_a: list[str] = field(default_factory=list)
    only_b: list[str] = field(default_factory=list)
    order: list[str] = field(default_factory=list)  # common bank keys in A's order

    @property
    def counts(self) -> dict[str, int]:
        return {
            name: sum(len(v) for v in getattr(self, name).values())
            for name in ("removed", "added", "rewritten", "relabelled")
        }

    def summary(self) -> str:
        """One line of counts: items changed, banks on one side only."""
        c = self.counts
        return (
            f"{c['removed']} removed, {c['added']} added, {c['rewritten']} rewritten, "
            f"{c['relabelled']} relabelled; {len(self.only_a)} banks only in A, {len(self.only_b)} only in B"
        )

    def lines(self) -> list[str]:
        out = [f"only in A: {k}" for k in self.only_a] + [f"only in B: {k}" for k in self.only_b]
        changed = {*self.removed, *self.added, *self.rewritten, *self.relabelled}
        for key in [k for k in self.order if k in changed]:
            out.append(f"# {key}")
            out += [f"- {i.item_id}\t{i.item_text}" for i in self.removed.get(key, [])]
            out += [f"+ {i.item_id}\t{i.item_text}" for i in self.added.get(key, [])]
            out += [
                f"~ {a.item_id} -> {b.item_id}\t{a.item_text} -> {b.item_text}"
                for a, b in self.rewritten.get(key, [])
            ]
            out += [
                f"* {b.item_id}\timportance {_imp(a)} -> {_imp(b)}" for a, b in self.relabelled.get(key, [])
            ]
        return out


def _imp(item: Item) -> str | None:
    return getattr(item, "importance", None)


def diff_banks(a: Iterable[TestBank], b: Iterable[TestBank]) -> BankDiff:
    """What changed from bank file A to bank file B, item by item."""
    banks_a = {bank_key(x): x for x in a}
    banks_b = {bank_key(x): x for x in b}
    d = BankDiff(
        only_a=[k for k in banks_a if k not in banks_b], only_b=[k for k in banks_b if k not in banks_a]
    )
    d.order = [k for k in banks_a if k in banks_b]
    for key in d.order:
        items_a = {i.item_id: i for i in banks_a[key].items}
        items_b = {i.item_id: i for i in banks_b[key].items}
        rewrites: list[tuple[Any, Any]] = []
        for item in items_b.values():
            prev = (
                (getattr(item, "info", None) or {}).get("previous_id")
                if item.item_id not in items_a
                else None
            )
            if prev in items_a and prev not in items_b:
                rewrites.append((items_a[prev], item))
        rewritten_old = {x.item_id for x, _ in rewrites}
        rewritten_new = {y.item_id for _, y in rewrites}
        removed = [i for k, i in items_a.items() if k not in items_b and k not in rewritten_old]
        added = [i for k, i in items_b.items() if k not in items_a and k not in rewritten_new]
        relabelled = [
            (items_a[k], i)
            for k, i in items_b.items()
            if k in items_a and getattr(items_a[k], "importance", None) != getattr(i, "importance", None)
        ]
        for name, values in (
            ("removed", removed),
            ("added", added),
            ("rewritten", rewrites),
            ("relabelled", relabelled),
        ):
            if values:
                getattr(d, name)[key] = values
    return d
