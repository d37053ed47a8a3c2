"""The bank verbs on files (import, show, edit, diff, split) and the lines they report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric.bank.edit import diff_banks, edit_bank_file, show_bank
from rubric.bank.importers import import_bank
from rubric.bank.split import split_bank_file
from rubric.data.jsonl import read_bank
from rubric.errors import UserError


@pytest.fixture
def bank(tmp_path: Path) -> Path:
    """A nugget bank of two queries, imported from a TSV list."""
    source = tmp_path / "nuggets.tsv"
    source.write_text("q1\tBees collect nectar\tvital\nq1\tHoney is sweet\tokay\nq2\tThe sky is blue\n")
    queries = tmp_path / "queries.json"
    queries.write_text(json.dumps({"q1": "how do bees make honey", "q2": "why is the sky blue"}))
    out = tmp_path / "bank.jsonl"
    line = import_bank(source, out, kind="nuggets", queries=queries, test_collection="tiny")
    assert line == f"wrote 2 banks (3 nuggets) to {out}"
    return out


def test_import_writes_banks_with_texts_and_importance(bank: Path):
    banks = list(read_bank(bank))
    assert [(b.query_id, b.query_text, b.test_collection) for b in banks] == [
        ("q1", "how do bees make honey", "tiny"),
        ("q2", "why is the sky blue", "tiny"),
    ]
    assert [getattr(i, "importance", None) for i in banks[0].items] == ["vital", "okay"]


def test_import_refuses_a_bad_format_and_an_empty_source(tmp_path: Path):
    source = tmp_path / "empty.json"
    source.write_text("{}")
    with pytest.raises(UserError, match="fmt: expected list, tqa or genq, got 'csv'"):
        import_bank(source, tmp_path / "out.jsonl", fmt="csv")
    with pytest.raises(UserError, match="empty.json: no nuggets found"):
        import_bank(source, tmp_path / "out.jsonl", kind="nuggets")
    with pytest.raises(UserError, match="kind: expected questions or nuggets"):
        import_bank(source, tmp_path / "out.jsonl", kind="facts")
    assert not (tmp_path / "out.jsonl").exists()


def test_show_lists_or_prints_records_of_one_query(bank: Path):
    lines = show_bank(bank, "q2")
    assert lines[0] == "# q2: why is the sky blue  [1 nuggets]"
    assert lines[1].endswith("\tThe sky is blue") and len(lines) == 2
    records = [json.loads(line) for line in show_bank(bank, as_json=True)]
    assert [r["query_id"] for r in records] == ["q1", "q2"]
    assert [json.loads(line)["query_id"] for line in show_bank(bank, "q1", as_json=True)] == ["q1"]
    with pytest.raises(UserError, match=r"query q9: not in .*bank.jsonl \(2 banks\)"):
        show_bank(bank, "q9")


def test_edit_writes_the_edited_banks_and_reports(bank: Path, tmp_path: Path):
    with pytest.raises(UserError, match="nothing to do"):
        edit_bank_file(bank, bank)
    out = tmp_path / "edited.jsonl"
    report = edit_bank_file(bank, out, add=["q2=Light scatters", "q1=Honey is sweet"])
    assert report.lines(out) == [
        "--add q1: 'Honey is sweet' is already in the bank (kept once)",
        f"1 added, 0 removed, 0 rewritten; wrote {out}",
    ]
    diff = diff_banks(read_bank(bank), read_bank(out))
    assert diff.lines()[0] == "# q2" and diff.lines()[1].startswith("+ q2/")
    assert diff.summary() == "0 removed, 1 added, 0 rewritten, 0 relabelled; 0 banks only in A, 0 only in B"


def test_split_writes_both_parts_and_sums_up(bank: Path, tmp_path: Path):
    public, secret = tmp_path / "public.jsonl", tmp_path / "secret.jsonl"
    with pytest.raises(UserError, match="secret: expected a fraction"):
        split_bank_file(bank, 1.5, 1, public, secret)
    result = split_bank_file(bank, 0.5, 1, public, secret)
    assert result.summary(public, secret) == (
        f"2 public items in 2 banks -> {public}; 1 secret items in 1 banks -> {secret}"
    )
    assert sum(len(b.items) for b in read_bank(public)) == 2
    assert [b.query_id for b in read_bank(secret)] == ["q1"]
