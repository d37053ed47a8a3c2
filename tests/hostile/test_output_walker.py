"""The output rule over every command, found by walking the CLI: every option and argument that
names a file is classified (an output, a path input, text that names files, or text that never
does), and each output is proved refused (exit 2, one error line, before any work, the input and
every other file unchanged) when it names each input of its command: the input's file itself,
the ``FILE`` of its ``NAME=FILE`` form where it takes one (runs, `evaluate meta` tables), and a
new file inside the input given as a folder (a folder is read as a set of runs or tables, so a
report written into it would be read next time as one more).

A new command, or a new text option this walk cannot classify, fails
:func:`test_every_option_is_classified`: add it to the tables below.

The command lines are built from the click parameters themselves: each required option gets a
value its type accepts (the guard runs before any file is read, so any file will do).
"""

from __future__ import annotations

import functools
import inspect
import typing
from pathlib import Path
from typing import Any

import pytest

from helpers import faults
from rubric.cli.common import is_output

rubric, assert_one_error = faults.rubric, faults.assert_one_error

#: Text options (and arguments) that name files or folders: what `_named_paths` reads.
TEXT_FILES = {"EVALUATIONS", "--reference", "--model", "--api-tokenizer"}
#: Text options that never name a file (ids, names, choices, prompts by name, URLs, numbers as text).
TEXT_NOT_FILES = {
    "--add", "--answer-prompt", "--as", "--attention", "--backend", "--base-url", "--baseline",
    "--classifier", "--compute-type", "--correction", "--create-prompt", "--device", "--devices",
    "--dtype", "--features", "--format", "--importance-prompt", "--kind", "--label", "--llm", "--map",
    "--measure", "--mode", "--name-from", "--official-measure", "--reference-measure", "--prefer", "--prompt",
    "--prompt-class",
    "--prompt-type", "--query", "--ray-address", "--remove", "--rewrite", "--segment", "--set", "--shard",
    "--style", "--test", "--test-collection", "--title", "--tqa-prefix", "--xlim", "--ylim", "NAME",
}  # fmt: skip
#: Inputs that take NAME=FILE (their help says so; checked below).
NAMED = {"--run", "RUN", "EVALUATIONS", "--reference"}
#: (command, input parameter) whose file --output may be: the command writes a new version of it.
IN_PLACE = {
    ("grade exam", "passages"),
    ("grade direct", "passages"),
    ("grade import", "graded"),
    ("bank edit", "bank"),
}


@functools.cache
def _whole_cli() -> Any:
    from rubric.cli.main import command

    return command()


def _cli(args: list[str] | None = None) -> Any:
    """The whole command tree, whatever the command line (``main`` asks for its phase's)."""
    return _whole_cli()


@pytest.fixture(autouse=True)
def _one_command_tree(monkeypatch):
    """The real ``main`` with the command tree built once: building it from the Typer app is most
    of each in-process call, and these are several hundred calls."""
    monkeypatch.setattr("rubric.cli.main.command", _cli)


@functools.cache
def _commands() -> dict[str, tuple[Any, dict[str, Any], str | None]]:
    """``{"group command": (click command, {parameter: type hint}, in-place parameter)}``."""
    from rubric.cli.main import app

    found = {}
    for group in app.registered_groups:
        for registered in group.typer_instance.registered_commands:
            callback = registered.callback
            name = registered.name or inspect.unwrap(callback).__name__
            hints = typing.get_type_hints(inspect.unwrap(callback), include_extras=True)
            click_command = _cli().commands[group.name].commands[name]
            found[f"{group.name} {name}"] = (
                click_command,
                hints,
                getattr(callback, "updates_in_place", None),
            )
    return found


def _label(param: Any) -> str:
    longs = [o for o in param.opts if o.startswith("--")]
    if param.param_type_name == "argument":
        return (param.metavar or param.name).upper()
    return longs[0] if longs else param.opts[0]


def _base(hint: Any) -> set[type]:
    """The types a hint admits (``list[Path] | None`` -> {Path})."""
    if typing.get_origin(hint) is typing.Annotated:
        hint = typing.get_args(hint)[0]
    args = typing.get_args(hint)
    if not args:
        return {hint}
    return set().union(*(_base(a) for a in args if a is not type(None)))


def _kind(param: Any, hint: Any) -> str:
    """output, path (an input file or folder), text-file (text naming files), text, or value."""
    if is_output(hint):
        return "output"
    base = _base(hint)
    if Path in base:
        return "path"
    if str in base:
        label = _label(param)
        if label in TEXT_FILES:
            return "text-file"
        if label in TEXT_NOT_FILES:
            return "text"
        return "unclassified"
    return "value"


def _parameters() -> list[tuple[str, Any, str]]:
    out = []
    for name, (command, hints, _) in _commands().items():
        for param in command.params:
            if param.name in hints:
                out.append((name, param, _kind(param, hints[param.name])))
    return out


def test_every_option_is_classified():
    unclassified = [(c, _label(p)) for c, p, kind in _parameters() if kind == "unclassified"]
    assert not unclassified, f"add them to TEXT_FILES or TEXT_NOT_FILES: {unclassified}"
    # every input that takes NAME=FILE is tested in that form
    named = {
        _label(p)
        for _, p, kind in _parameters()
        if kind != "output" and ("NAME=FILE" in (p.help or "") or "NAME=PATH" in (p.help or ""))
    }
    assert named <= NAMED, named - NAMED
    assert {c for c, _, kind in _parameters() if kind == "output"}, "the walk found no output"
    assert {(c, in_place) for c, (_, _, in_place) in _commands().items() if in_place} == IN_PLACE


def _filler(param: Any, dummy: Path) -> str:
    """A value the command line accepts for a required parameter (from Typer's type descriptor)."""
    descriptor = param.type_descriptor
    element = descriptor.annotation
    if descriptor.is_list:
        element = typing.get_args(element)[0]
    if descriptor.is_choice:
        first = next(iter(element)) if isinstance(element, type) else typing.get_args(element)[0]
        return str(getattr(first, "value", first))
    if descriptor.is_path or element is Path:
        return str(dummy)
    if element in (int, float):
        return str(param.min if param.min is not None else 1)
    return "x"


def _line(command: str, values: dict[str, str], tmp: Path) -> list[str]:
    """The command line: ``values`` by parameter name, required ones filled in."""
    click_command, hints, _ = _commands()[command]
    options: list[str] = []
    arguments: list[str] = []
    for param in click_command.params:
        if param.name in values:
            value = values[param.name]
        elif param.required:
            fresh = is_output(hints.get(param.name))
            value = str(tmp / "fresh" / f"{param.name}.out") if fresh else _filler(param, tmp / "dummy.txt")
        else:
            continue
        if param.param_type_name == "argument":
            arguments.append(value)
        else:
            options += [param.opts[0], value]
    return [*command.split(), *options, *arguments]


def _cases() -> list[tuple[str, str, str]]:
    """(command, output parameter, input parameter) for every output of every command."""
    cases = []
    for name, (command, hints, in_place) in _commands().items():
        kinds = {p.name: _kind(p, hints[p.name]) for p in command.params if p.name in hints}
        outputs = [p for p, k in kinds.items() if k == "output"]
        inputs = [p for p, k in kinds.items() if k in ("path", "text-file")]
        # an input updated in place may be its --output (a single file: never a folder)
        cases += [(name, o, i) for o in outputs for i in inputs if (o, i) != ("output", in_place)]
    return cases


@pytest.mark.parametrize(("command", "output", "source"), _cases())
def test_an_output_naming_an_input_is_refused(tmp_path, command, output, source):
    click_command, _, _ = _commands()[command]
    param = next(p for p in click_command.params if p.name == source)
    (tmp_path / "dummy.txt").write_text("x\n")
    inputs = tmp_path / "in"
    inputs.mkdir()
    victim = inputs / "victim.txt"
    victim.write_text("q1 Q0 d1 1 1 r\n")
    folder = inputs / "folder"
    folder.mkdir()
    (folder / "a.run").write_text("q1 Q0 d1 1 1 r\n")
    # (the input's value, the output that must be refused)
    forms: list[tuple[str, Path]] = [(str(victim), victim), (str(folder), folder / "report.out")]
    if _label(param) in NAMED:
        forms.append((f"A={victim}", victim))
    before = faults.snapshot(tmp_path)
    for value, target in forms:
        r = rubric(*_line(command, {source: value, output: str(target)}, tmp_path), cwd=tmp_path)
        assert_one_error(r, "is also an input of this command")
        assert faults.snapshot(tmp_path) == before, (command, output, source, value)
    assert not (tmp_path / "fresh").exists() or not any((tmp_path / "fresh").iterdir())
