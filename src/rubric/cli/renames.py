"""Old option spellings, accepted until 0.3.0 (:data:`REMOVED_IN`) with a one-line note on stderr.

Issue 24 gave every option one meaning across the CLI: ``--topics FILE`` is the query *texts*
input, ``--query ID`` / ``--queries FILE`` the subset filter everywhere; ``-m`` is ``--measure``,
``-p`` is ``--prompt``, ``-q`` is ``--per-query`` (all as trec_eval spells them). The spellings
those renames replaced are rewritten here, per command, before Typer parses the command line, so
the commands declare only the new names (``--help`` shows only those) and one table says what
is removed in 0.3.0. A short flag is kept only where it is unambiguous in that command (it
has no new meaning there): ``-m`` for ``--model`` stays in the commands that take no measure.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from rubric.cli.common import DefaultCommandGroup

# The release that drops every spelling in RENAMED (the note says so).
REMOVED_IN = "0.3.0"

_TOPICS = {"--queries": "--topics", "-q": "--topics"}
_MODEL = {"-m": "--model"}
_ANSWER_LENGTH = {"--max-tokens": "--max-new-tokens"}  # issue 40: one answer length for every backend
# issue 40 gave bank nuggetize and grade assign the --queries subset filter, so there only -q is old
_TOPICS_SHORT = {"-q": "--topics"}

# (group, command) -> {old spelling: new spelling}
RENAMED: dict[tuple[str, str], dict[str, str]] = {
    ("convert", "runs"): {**_TOPICS, "--runs": "--run"},
    ("bank", "generate"): {**_TOPICS, **_MODEL, **_ANSWER_LENGTH, "--per-query": "--items-per-query"},
    ("bank", "nuggetize"): {**_TOPICS_SHORT, **_MODEL, **_ANSWER_LENGTH, "-p": "--passages"},
    ("bank", "import"): _TOPICS,
    ("bank", "edit"): _TOPICS,
    ("grade", "direct"): {**_TOPICS, **_MODEL},
    ("grade", "exam"): _MODEL,
    ("grade", "assign"): {**_TOPICS_SHORT, **_MODEL, **_ANSWER_LENGTH},
    ("verify", "grid"): {"--answers": "--with-answers", "--no-answers": "--grades-only"},
    ("verify", "spurious"): {"-j": "--max-judgment"},
    ("verify", "impact"): {"-a": "--bank-before", "-b": "--bank-after"},
    ("evaluate", "qrels"): {"--facets": "--per-facet"},
    ("evaluate", "cover"): {"-T": "--min-grade"},
    ("evaluate", "correlate"): {"--metric": "--measure"},
    ("prompts", "list"): {"-p": "--prompt-file", "-k": "--kind"},
    ("prompts", "show"): {"-p": "--prompt-file"},
}


# A group whose first argument, when it names none of its commands, goes to this command (the
# group's class says which, so the rewrite and the parser agree).
DEFAULT_COMMAND = {"grade": DefaultCommandGroup.default_command}


def _command(args: Sequence[str], commands: dict[str, set[str]]) -> tuple[tuple[str, str], int] | None:
    """The (group, command) an argument list names and where its options start; ``commands``:
    each group's command names (``rubric grade PASSAGES ...`` is ``grade exam``)."""
    if not args or args[0].startswith("-"):
        return None
    group = args[0]
    if len(args) > 1 and args[1] in commands.get(group, ()):
        return (group, args[1]), 2
    if group in DEFAULT_COMMAND and len(args) > 1 and args[1] not in ("-h", "--help"):
        return (group, DEFAULT_COMMAND[group]), 1
    return None


def _rename(arg: str, table: dict[str, str]) -> tuple[str, str] | None:
    """The new spelling of one argument and the old option it used; None when it is not old.

    ``--old=value`` and a short flag with its value attached (``-qtopics.tsv``) are renamed too.
    """
    if arg in table:
        return table[arg], arg
    if arg.startswith("--") and "=" in arg:
        name, value = arg.split("=", 1)
        if name in table:
            return f"{table[name]}={value}", name
    elif len(arg) > 2 and arg[0] == "-" and arg[1] != "-" and arg[:2] in table:
        return f"{table[arg[:2]]}={arg[2:]}", arg[:2]
    return None


#: A command's option spellings (``--topics``, ``-r``, ``--no-answers``) -> (the parameter they set,
#: whether the option takes a value): what tells an option from an option's value.
Spellings = dict[str, tuple[str, bool]]


def _spelling(arg: str) -> str:
    """The option an argument spells (``--topics=a`` -> ``--topics``, ``-qa`` -> ``-q``)."""
    if arg.startswith("--"):
        return arg.split("=", 1)[0]
    return arg[:2] if arg.startswith("-") and len(arg) > 1 else arg


def modernize(
    args: Sequence[str],
    commands: dict[str, set[str]],
    note: Callable[[str], None] | None = None,
    options: Callable[[tuple[str, str]], Spellings] | None = None,
) -> list[str]:
    """``args`` (without the program name) with the old spellings of its command replaced; each
    old spelling used is noted once (``note``, default: a line on stderr). ``commands``: each
    group's command names; ``options``: a command's :data:`Spellings`. Nothing after ``--`` is
    touched, and neither is an option's value (``--test-collection -qtest`` keeps ``-qtest``,
    ``--model -m`` the model name ``-m``). An old and a new spelling of one option together
    (``--topics A --queries B``: which one wins?) is a :class:`~rubric.errors.UserError`."""
    found = _command(args, commands)
    table = RENAMED.get(found[0]) if found else None
    if not found or not table:
        return list(args)
    (command, start) = found
    spellings = options(command) if options else {}
    say = note or (lambda line: print(line, file=sys.stderr, flush=True))
    out: list[str] = list(args[:start])
    noted: list[str] = []  # old spellings used, in command-line order
    old_used: dict[str, str] = {}  # parameter -> the old spelling that set it
    new_used: dict[str, str] = {}  # parameter -> the current spelling that set it
    rest = list(args[start:])
    value_next = False
    for i, arg in enumerate(rest):
        if value_next:  # the value of the option before it, whatever it looks like
            out.append(arg)
            value_next = False
            continue
        if arg == "--":
            out += rest[i:]
            break
        renamed = _rename(arg, table)
        spelled = table[renamed[1]] if renamed else _spelling(arg)
        parameter, takes_value = spellings.get(spelled, (spelled, False))
        value_next = takes_value and (renamed[0] if renamed else arg) == spelled
        if renamed is None:
            if arg.startswith("-") and arg in spellings or _spelling(arg) in spellings:
                new_used.setdefault(parameter, _spelling(arg))
            out.append(arg)
            continue
        new, old = renamed
        old_used.setdefault(parameter, old)
        out.append(new)
        if old not in noted:
            noted.append(old)
    for parameter, old in old_used.items():
        if parameter in new_used:
            from rubric.errors import UserError

            raise UserError(
                f"{old} and {new_used[parameter]} in '{' '.join(command)}' are one option ({old} is the "
                f"old spelling of {table[old]}): give it once, as {table[old]}"
            )
    for old in noted:
        say(
            f"rubric: note: {old} in '{' '.join(command)}' is now {table[old]}; "
            f"the old spelling is removed in {REMOVED_IN}"
        )
    return out
