"""The shared options: defined once, shown the same by every command, outputs declared by type."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from pathlib import Path

import pytest

from rubric.cli import options as opt
from rubric.cli.common import is_output
from rubric.cli.main import PHASES

# Every parameter that names a file a command writes (the output guard refuses inputs there).
WRITTEN = {"output", "queries_out", "needs_grading", "bank_out", "public_out", "secret_out", "summary",
           "per_topic", "plot", "passages_out", "html_out", "scatter"}  # fmt: skip


def commands():
    for phase, module in PHASES.items():
        for command in module.app.registered_commands:
            yield f"{phase} {command.name or command.callback.__name__}", command.callback


@pytest.mark.parametrize(("name", "callback"), list(commands()))
def test_outputs_are_declared_by_type(name, callback):
    """A parameter is an output exactly when its type says so, in every command."""
    hints = typing.get_type_hints(callback, include_extras=True)
    params = inspect.signature(callback).parameters
    declared = {p for p in params if is_output(hints.get(p))}
    assert declared == {p for p in params if p in WRITTEN}, name
    assert all(typing.get_args(hints[p])[0] in (Path, Path | None) for p in declared)


def test_a_group_becomes_its_options_and_comes_back_as_one_object():
    seen = {}

    @opt.option_groups
    def command(path: Path, llm: opt.ChatOptions = ..., n: int = 3) -> None:
        seen["llm"], seen["n"] = llm, n

    names = list(inspect.signature(command).parameters)
    assert names[0] == "path" and names[-1] == "n"
    assert {"model", "base_url", "concurrency", "cache", "no_cache", "parse_retries"} <= set(names)
    assert inspect.signature(command).parameters["model"].default is inspect.Parameter.empty  # required
    values = {p.name: p.default for p in inspect.signature(command).parameters.values()}
    command(**(values | {"path": Path("x"), "model": "m", "concurrency": 2}))
    llm = seen["llm"]
    assert isinstance(llm, opt.ChatOptions) and isinstance(llm.api, opt.ApiOptions)
    assert (llm.model, llm.api.concurrency, llm.api.timeout, seen["n"]) == ("m", 2, 120.0, 3)
    assert dataclasses.asdict(llm.api)["retry_base"] == 1.0


def test_the_llm_options_read_the_same_in_every_command(cli):
    """The options of the backends (server, local model, cache, re-asks): each once per command,
    one help text, as in `rubric grade`."""
    helps = [
        cli(*args, "--help").stdout
        for args in (["bank", "generate"], ["bank", "nuggetize"], ["grade", "assign"])
    ]
    for option in ("--model", "--base-url", "--api-key-file", "--concurrency", "--rpm", "--max-retries",
                   "--retry-base", "--timeout", "--temperature", "--max-new-tokens", "--cache", "--no-cache",
                   "--parse-retries", "--backend", "--max-input-tokens", "--device"):  # fmt: skip
        listed = rf"^ +(?:-\w, )?{option}(?: [A-Z_]+)?(?: {{2,}}|$)"  # an option's line, not an example's
        assert all(len(re.findall(listed, h, re.M)) == 1 for h in helps), option
    cache = cli("grade", "exam", "--help").stdout
    assert "sqlite response cache; re-runs only ask new" in cache
    assert all("sqlite response cache; re-runs only ask new" in h for h in helps)
