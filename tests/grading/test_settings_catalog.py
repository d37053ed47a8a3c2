"""GradeSettings.grade (the body of `rubric grade exam/direct`) and catalog.show (`rubric prompts show`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import FIXTURES
from helpers.openai_server import serve
from rubric.cli.common import flag
from rubric.convert.pool import pool_file
from rubric.data.jsonl import read_passages
from rubric.data.table import counted
from rubric.errors import UserError
from rubric.grading.settings import GradeSettings
from rubric.llm.settings import ApiSettings
from rubric.prompting.catalog import show
from rubric.prompting.prompts import get_prompt

TINY = FIXTURES / "tiny"


@pytest.fixture
def passages(tmp_path: Path) -> Path:
    out = tmp_path / "passages.jsonl"
    pool_file(
        TINY / "queries.tsv", [TINY / "run.alpha"], [TINY / "collection.tsv"], out, qrels=TINY / "qrels.txt"
    )
    return out


def test_bad_options_fail_before_anything_is_read(tmp_path: Path):
    """The library names its parameters; the CLI spells them as its options."""
    missing = tmp_path / "no-such-passages.jsonl"
    with pytest.raises(UserError, match="^workers: must be at least 0, got -1$") as workers:
        GradeSettings(tmp_path / "out.jsonl", workers=-1).grade(missing, ["Sun"], queries=missing)
    assert workers.value.spelled(flag) == "--workers: must be at least 0, got -1"
    with pytest.raises(UserError, match="^checkpoint_pairs: must be at least 1") as pairs:
        GradeSettings(tmp_path / "out.jsonl", checkpoint_pairs=0).grade(missing, ["Sun"], queries=missing)
    assert pairs.value.spelled(flag).startswith("--checkpoint-pairs: must be at least 1")
    assert not (tmp_path / "out.jsonl").exists()


def test_direct_grading_with_a_server_sums_up_and_lists_failures(passages: Path, tmp_path: Path):
    out = tmp_path / "graded.jsonl"
    with serve(fail_rate=1.0, seed=3) as srv:
        settings = GradeSettings(
            out, backend="openai", model="t", no_cache=True, query=["q1"],
            api=ApiSettings(base_url=srv.url, max_retries=0, concurrency=1),
        )  # fmt: skip
        outcome = settings.grade(passages, ["Sun"], queries=TINY / "queries.tsv")
    assert [q.queryId for q in read_passages(out)] == ["q1"]
    assert outcome.summary[1] == f"wrote {out}: 1 query"
    assert outcome.failures and outcome.what == "pair"
    assert outcome.summary[0].endswith(f"{len(outcome.failures)} failures")
    assert outcome.lines()[-1].startswith(f"rubric: {counted(len(outcome.failures), 'pair')} failed")


def test_show_is_the_file_and_optionally_the_rendered_example():
    prompt = get_prompt("Sun")
    assert prompt.path is not None
    text = prompt.path.read_text(encoding="utf-8")
    assert show("Sun") == text
    shown = show("Sun", with_example=True, values=["query=why do bees dance?"])
    assert shown.startswith(text + "\n# ---- rendered example " + "-" * 48 + "\n")
    assert "why do bees dance?" in shown and shown.endswith("\n")
    with pytest.raises(UserError, match="^values: only meaningful with with_example"):
        show("Sun", values=["query=x"])
    with pytest.raises(UserError, match="NAME: unknown prompt 'Nope'"):
        show("Nope")
