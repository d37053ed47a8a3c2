"""One cache folder, ``$RUBRIC_CACHE_DIR``: the response cache and the packaged models live in it;
the old ``$RUBRIC_CACHE`` (a file) still works, with one warning line."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers import BANKS, TINY
from helpers.openai_server import serve
from rubric.llm.cache import default_cache_path
from rubric.llm.cache_dir import cache_dir
from rubric.llm.packaged import models_dir

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
WARNING = "rubric: warning: RUBRIC_CACHE is deprecated and removed in 0.3.0; set RUBRIC_CACHE_DIR"


@pytest.fixture
def clean_env(monkeypatch, tmp_path):
    for name in ("RUBRIC_CACHE", "RUBRIC_CACHE_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return monkeypatch


def test_one_folder_holds_responses_and_models(clean_env, tmp_path, capsys):
    clean_env.setenv("RUBRIC_CACHE_DIR", str(tmp_path / "c"))
    assert cache_dir() == tmp_path / "c"
    assert default_cache_path() == tmp_path / "c" / "responses.sqlite"
    assert models_dir() == tmp_path / "c" / "models"
    assert capsys.readouterr().err == ""


def test_default_is_the_xdg_cache(clean_env, tmp_path, capsys):
    assert default_cache_path() == tmp_path / "xdg" / "rubric-workbench" / "responses.sqlite"
    assert models_dir() == tmp_path / "xdg" / "rubric-workbench" / "models"
    clean_env.delenv("XDG_CACHE_HOME")
    assert cache_dir() == Path.home() / ".cache" / "rubric-workbench"
    assert capsys.readouterr().err == ""


def test_the_old_variable_still_names_the_response_file_with_one_warning(clean_env, tmp_path, caplog):
    """The library logs the warning (the command prints it as `rubric: warning: ...`)."""
    clean_env.setenv("RUBRIC_CACHE", str(tmp_path / "old.sqlite"))
    assert default_cache_path() == tmp_path / "old.sqlite"
    (record,) = caplog.records
    assert record.name == "rubric.llm.cache_dir" and record.levelname == "WARNING"
    assert record.getMessage().startswith(WARNING.removeprefix("rubric: warning: "))
    assert str(tmp_path / "old.sqlite") in record.getMessage()
    assert models_dir() == tmp_path / "xdg" / "rubric-workbench" / "models"  # it never named models


def test_the_new_variable_wins_over_the_old_one(clean_env, tmp_path, capsys):
    clean_env.setenv("RUBRIC_CACHE", str(tmp_path / "old.sqlite"))
    clean_env.setenv("RUBRIC_CACHE_DIR", str(tmp_path / "new"))
    assert default_cache_path() == tmp_path / "new" / "responses.sqlite"
    assert capsys.readouterr().err == ""


def test_grade_writes_its_cache_into_the_folder_and_the_old_variable_warns(cli, clean_env, tmp_path):
    pool = tmp_path / "passages.jsonl.gz"
    r = cli(
        "convert",
        "runs",
        "--topics",
        TINY / "queries.tsv",
        "-C",
        TINY / "collection.tsv",
        TINY / "run.alpha",
        "-o",
        pool,
    )
    assert r.returncode == 0, r.stderr
    with serve() as srv:
        args = ["grade", pool, "--bank", BANKS / "questions.jsonl", "-p", SELF, "--backend", "openai",
                "--model", "test-model", "--base-url", srv.url, "--query", "q1"]  # fmt: skip
        r = cli(*args, "-o", tmp_path / "a.jsonl.gz", env={"RUBRIC_CACHE_DIR": str(tmp_path / "cache")})
        assert r.returncode == 0, r.stderr
        assert (tmp_path / "cache" / "responses.sqlite").is_file() and "RUBRIC_CACHE" not in r.stderr
        asked = len(srv.requests)
        r = cli(
            *args,
            "-o",
            tmp_path / "b.jsonl.gz",
            env={"RUBRIC_CACHE": str(tmp_path / "cache" / "responses.sqlite")},
        )
        assert r.returncode == 0, r.stderr
        assert [line for line in r.stderr.splitlines() if "RUBRIC_CACHE" in line][0].startswith(WARNING)
        assert len(srv.requests) == asked  # the same file: every answer came from the cache
