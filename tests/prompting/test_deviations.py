"""Every parse rule the code lists as a deviation from the original tools is in the deviations
table of docs/validation.md (so no rule differs without saying so)."""

from __future__ import annotations

from pathlib import Path

from rubric.prompting.parse import DEVIATIONS, get_parser

VALIDATION = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


def _table_rules() -> set[str]:
    text = VALIDATION.read_text(encoding="utf-8")
    section = text.split("## Deviations from the original tools", 1)[1].split("\n## ", 1)[0]
    return {line.split("|")[1].strip() for line in section.splitlines() if line.startswith("| ")}


def test_every_deviation_of_the_code_is_in_the_table():
    rules = _table_rules()
    missing = [d.rule for d in DEVIATIONS if d.rule not in rules]
    assert not missing, missing


def test_deviations_name_real_parsers():
    for d in DEVIATIONS:
        for name in d.parsers:
            assert get_parser(name.replace("rating_0_N", "rating_0_2")).name, d.rule
        assert d.ours and d.original
