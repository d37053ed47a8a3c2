"""The version, the changelog and the deprecations agree: CHANGELOG.md has an entry for
``rubric.__version__``, and every deprecated spelling names the later release that removes it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import rubric
from rubric.cli import renames
from rubric.llm import cache_dir

ROOT = Path(__file__).resolve().parents[1]


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def test_the_changelog_has_the_version_and_its_sections():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{rubric.__version__}]" in text
    for section in ("### Added", "### Changed", "### Deprecated", "### Fixed"):
        assert section in text


def test_old_spellings_say_when_they_go():
    assert _version(renames.REMOVED_IN) > _version(rubric.__version__)
    notes: list[str] = []
    renames.modernize(["convert", "runs", "--runs", "a.run"], {"convert": {"runs"}}, notes.append)
    assert notes and notes[0].endswith(f"removed in {renames.REMOVED_IN}")


def test_the_old_cache_variable_says_when_it_goes(monkeypatch: pytest.MonkeyPatch, caplog, tmp_path):
    monkeypatch.delenv("RUBRIC_CACHE_DIR", raising=False)
    monkeypatch.setenv("RUBRIC_CACHE", str(tmp_path / "old.sqlite"))
    with caplog.at_level("WARNING", logger="rubric.llm.cache_dir"):
        assert cache_dir.responses_path() == tmp_path / "old.sqlite"
    (removed,) = re.findall(r"removed in (\d+\.\d+\.\d+)", caplog.text)
    assert _version(removed) > _version(rubric.__version__)
