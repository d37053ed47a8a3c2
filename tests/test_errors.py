"""`UserError` names library parameters; the CLI spells them as its options."""

from __future__ import annotations

import ast
import pickle
import re
from pathlib import Path

import click
import pytest

from rubric.cli.common import FLAGS, flag
from rubric.errors import UserError, at_least, one_of
from rubric.evaluate.paired import TESTS


def test_a_parameter_is_its_name_in_the_library_and_its_option_in_the_cli():
    e = UserError("{ray_address}: only with {ray}; give another {output}", "ray_address", "ray", "output")
    assert str(e) == "ray_address: only with ray; give another output"
    assert e.spelled(flag) == "--ray-address: only with --ray; give another -o"
    again = pickle.loads(pickle.dumps(e))  # a worker process sends the error itself
    assert isinstance(again, UserError) and again.spelled(flag) == e.spelled(flag)


def test_a_message_without_parameters_is_left_as_written():
    e = UserError("x.toml:3: unknown placeholder {qeury}")
    assert str(e) == e.spelled(flag) == "x.toml:3: unknown placeholder {qeury}"


def test_checks_take_a_parameter_or_a_flag():
    with pytest.raises(UserError) as low:
        at_least("checkpoint_pairs", 0, 1)
    assert (str(low.value), low.value.spelled(flag)) == (
        "checkpoint_pairs: must be at least 1, got 0",
        "--checkpoint-pairs: must be at least 1, got 0",
    )
    with pytest.raises(UserError) as choice:
        one_of("--format", "md", ["tsv"])
    assert str(choice.value) == choice.value.spelled(flag) == "--format: expected one of tsv, got 'md'"


# -- the rule, over the source: library errors name parameters, never a command's flags ------------

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rubric"
CHECKS = ("UserError", "one_of", "at_least")
LONG_FLAG = re.compile(r"(?<![\w`-])--[a-z][a-z0-9-]*")
#: Parameters only a Python caller can give (the CLI has no option for them).
LIBRARY_ONLY = {"thresholds"}  # EmbeddingGrader's grade thresholds


def _calls() -> list[tuple[str, ast.Call]]:
    """Every ``UserError(...)``, ``one_of(...)`` and ``at_least(...)`` call outside the CLI."""
    found = []
    for path in sorted(SRC.rglob("*.py")):
        if path.relative_to(SRC).parts[0] == "cli":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and node.args:
                name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if name in CHECKS:
                    found.append((f"{path.relative_to(ROOT)}:{node.lineno}", node))
    return found


def _literal_parts(node: ast.expr) -> list[str]:
    """The literal text of a message: a string, or the constant pieces of an f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)]
    return []


def _outside_backticks(text: str) -> str:
    """``text`` without its `quoted commands` (``rubric evaluate qrels --per-item`` names a command)."""
    return re.sub(r"`[^`]*`", "", text)


def test_the_source_walk_finds_the_checks():
    calls = _calls()
    assert len(calls) > 300, "the walk found too few checks: is SRC right?"


def _first_literal(node: ast.expr) -> str:
    """The text a message starts with when that is literal (not a value put in)."""
    first = node.values[0] if isinstance(node, ast.JoinedStr) and node.values else node
    return first.value if isinstance(first, ast.Constant) and isinstance(first.value, str) else ""


def test_no_library_error_starts_with_a_flag():
    """A message names what is wrong first; in the library that is a parameter (``{workers}``,
    or ``one_of("fmt", ...)``), which the CLI spells as its flag, never the flag itself."""
    wrong = [
        f"{where}: {text[:60]!r}"
        for where, call in _calls()
        if (text := _first_literal(call.args[0])).startswith("-")
    ]
    assert not wrong, "library errors that start with a CLI flag (mark the parameter):\n" + "\n".join(wrong)


def test_no_library_error_names_a_long_flag():
    """``give --workers N`` names an option too: mark it (``give {workers} N``). A quoted command
    (in backticks) may name its flags."""
    wrong = [
        f"{where}: {flags}"
        for where, call in _calls()
        if (flags := LONG_FLAG.findall(_outside_backticks("".join(_literal_parts(call.args[0])))))
    ]
    assert not wrong, "library errors that name a CLI flag (mark the parameter):\n" + "\n".join(wrong)


def _marked_parameters() -> dict[str, str]:
    """Each parameter a library error marks (a constant name), with one place that marks it."""
    names: dict[str, str] = {}
    for where, call in _calls():
        func = call.func.id if isinstance(call.func, ast.Name) else getattr(call.func, "attr", "")
        if func == "UserError":
            for name in (a.value for a in call.args[1:] if isinstance(a, ast.Constant)):
                names.setdefault(name, where)
        elif isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
            names.setdefault(call.args[0].value, where)
    return names


def _cli_options() -> set[str]:
    """Every option string of every command of the CLI."""
    from rubric.cli.main import command

    options: set[str] = set()

    def walk(cmd: click.Command) -> None:
        for param in cmd.params:
            options.update(param.opts)
        for sub in getattr(cmd, "commands", {}).values():
            walk(sub)

    walk(command())
    return options


def test_every_marked_parameter_is_spelled_as_an_option_of_the_cli():
    """The CLI's table (``FLAGS``, else ``--name-with-dashes``) turns each parameter a library
    error names into an option some command has: a parameter whose option has another name needs
    its row in FLAGS, and one name means one option everywhere."""
    options = _cli_options()
    marked = _marked_parameters()
    wrong = {name: (flag(name), where) for name, where in marked.items() if flag(name) not in options}
    assert set(wrong) == LIBRARY_ONLY, f"parameters spelled as no option of the CLI: {wrong}"
    assert all(value in options for value in FLAGS.values())


# -- what a Python caller reads -------------------------------------------------------------------


def test_a_python_caller_reads_the_parameter_names_it_passed():
    from rubric.data.query_selection import QuerySelection
    from rubric.evaluate.leaderboards import leaderboard_output
    from rubric.evaluate.measures import parse_measures
    from rubric.prompting.prompts import get_prompt

    with pytest.raises(UserError) as wide:
        leaderboard_output("qrels.txt", ["runs/"], ["P_10"], wide=True, per_query=True)
    assert str(wide.value) == "wide: one value per run and measure; not with per_query"
    assert wide.value.spelled(flag) == "--wide: one value per run and measure; not with --per-query"
    with pytest.raises(UserError) as marks:
        leaderboard_output("qrels.txt", ["runs/"], ["P_10"], fmt="json", wide=True)
    assert str(marks.value).startswith("wide: a TSV or CSV table")
    with pytest.raises(UserError) as measures:
        parse_measures([])
    assert (str(measures.value), measures.value.spelled(flag)) == (
        "measures: give at least one measure",
        "-m: give at least one measure",
    )
    with pytest.raises(UserError) as queries:
        QuerySelection.from_options([""], None)
    assert str(queries.value) == "query: a query id cannot be empty"
    with pytest.raises(UserError) as prompt:
        get_prompt("no-such-prompt")
    assert str(prompt.value).startswith("prompt: unknown prompt 'no-such-prompt'")
    assert prompt.value.spelled(flag).startswith("--prompt: unknown prompt 'no-such-prompt'")


def test_renamed_parameters_read_as_the_python_name_and_the_cli_flag():
    import rubric
    from rubric.bank.importers import import_bank
    from rubric.evaluate.estimate import estimate_output

    with pytest.raises(UserError) as test:
        rubric.compare("qrels.txt", ["runs/"], ["P_10"], test="z")
    assert str(test.value) == "test: expected one of " + ", ".join(TESTS) + ", got 'z'"
    with pytest.raises(UserError) as fmt:
        import_bank("bank.json", "out.jsonl", fmt="xml")
    assert (str(fmt.value), fmt.value.spelled(flag)) == (
        "fmt: expected list, tqa or genq, got 'xml'",
        "--format: expected list, tqa or genq, got 'xml'",
    )
    with pytest.raises(UserError) as labels:
        estimate_output(["runs/"], ["P_10"])
    assert (str(labels.value), labels.value.spelled(flag)) == (
        "llm_qrels / graded: give the LLM labels as one of them",
        "--qrels / --graded: give the LLM labels as one of them",
    )
