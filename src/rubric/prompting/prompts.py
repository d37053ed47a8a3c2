"""Prompts are data: one TOML file per prompt under ``prompts/`` (shipped in the wheel).

A prompt file holds::

    name = "NuggetSelfRatedPrompt"      # also the prompt_class written into grades
    kind = "nugget"                      # question | nugget | direct | assign | generate | ...
    parser = "self_rating"               # answer parser, see rubric.prompting.parse
    choices = ["0", "1", "2", "3", "4", "5"]   # optional: one-token answers for the fast path
    aliases = ["OtherName"]              # optional: more names that find this prompt
    description = "..."                  # one line for `rubric prompts list`
    source = "Workbench (SIGIR'24), Table 2"
    template = '''... {nugget} ... {context} ...'''
    system = "..."                       # optional system message for chat models
    system_api_only = true               # optional: the system message only for chat APIs
    context_part = "Context: {context}"  # optional: the template's tail cut as the original cut it
    [decoding]                            # optional: the prompt's own decoding settings (chat APIs)
    temperature = 0
    [prompt_info]                         # copied into the grades' prompt_info
    prompt_style = "..."
    is_self_rated = true

Placeholders are ``{name}`` with a plain identifier; only the placeholders listed by the template
are substituted, so JSON examples with braces in a template need no escaping. Users add prompts
with ``--prompt-file FILE.toml``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.prompting.parse import get_parser

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
OPENING = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)")  # a placeholder's start, closed or not
KNOWN_PLACEHOLDERS = {
    "query",
    "question",
    "nugget",
    "context",
    "answer",
    "gold_answers",
    "facet",
    "per_query",
    "nuggets",
    "passages",
    "items",
    "count",
    "max_nuggets",
    "nuggets_length",
    "statement",
    "citation",
}


#: The kinds of prompt files and the placeholders each kind's template must use.
REQUIRED_PLACEHOLDERS: dict[str, tuple[str, ...]] = {
    "question": ("question", "context"),
    "nugget": ("nugget", "context"),
    "direct": ("query", "context"),
    "verify": ("answer", "gold_answers"),
    "generate": ("query",),
    "nuggetize": ("query", "context", "nuggets"),
    "importance": ("query", "nuggets"),
    "assign": ("query", "context", "nuggets"),
    "support": ("statement", "citation"),
}
#: Kinds whose answers a parser of rubric.prompting.parse turns into grades.
GRADING_KINDS = frozenset({"question", "nugget", "direct", "verify"})
#: The ``prompt_type`` the original tool writes into grades of each kind (verification re-grades
#: question grades).
PROMPT_TYPES = {"question": "question", "nugget": "nugget", "direct": "direct_grading", "verify": "question"}


@dataclass(frozen=True)
class Prompt:
    """A loaded prompt file."""

    name: str
    kind: str
    template: str
    parser: str
    description: str = ""
    source: str = ""
    system: str | None = None
    prompt_info: dict[str, Any] = field(default_factory=dict)
    path: Path | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    aliases: tuple[str, ...] = ()
    file_choices: tuple[str, ...] | None = None
    decoding: dict[str, float | int] = field(default_factory=dict)
    system_api_only: bool = False
    #: The template's tail that the original tool tokenised apart from the text before it and cut
    #: to fit (``context: {context};``), or None: then the context alone is cut so the prompt fits
    #: (:mod:`rubric.llm.fit`).
    context_part: str | None = None

    @property
    def choices(self) -> tuple[str, ...] | None:
        """Valid one-token answers for the engine's fast path: the file's, else its parser's."""
        if self.file_choices is not None or self.kind not in GRADING_KINDS:
            return self.file_choices
        return get_parser(self.parser).choices

    @property
    def prompt_type(self) -> str | None:
        """The grades' ``prompt_type``: a ``prompt_type`` field of the file, else by kind."""
        return self.extra.get("prompt_type") or PROMPT_TYPES.get(self.kind)

    @property
    def placeholders(self) -> list[str]:
        """Placeholders used by the template, in order of first use."""
        names = [m for m in PLACEHOLDER.findall(self.template) if m in KNOWN_PLACEHOLDERS]
        return list(dict.fromkeys(names))

    def render(self, **values: str) -> str:
        """Fill the template; every placeholder it uses must be given."""
        missing = [p for p in self.placeholders if p not in values]
        if missing:
            raise UserError(f"prompt {self.name}: no value for placeholder(s) {', '.join(missing)}")

        return _fill(self.template, values)

    def render_parts(self, context: str, **values: str) -> tuple[str, str]:
        """The filled text before :attr:`context_part` and the filled context part (with
        ``context``): the two texts the original tokenised apart; joined, they are :meth:`render`'s."""
        assert self.context_part is not None
        head = self.template[: len(self.template) - len(self.context_part)]
        self.render(**values, context=context)  # every placeholder given
        return _fill(head, values), _fill(self.context_part, {**values, "context": context})

    def render_around_context(self, **values: str) -> tuple[str, str]:
        """The filled text before and after ``{context}``, which must occur exactly once.

        Graders cut the passage (never the question) to fit the model's input, as the papers
        did: ``before + truncated_context + after`` is then the prompt.
        """
        parts = self.template.split("{context}")
        if len(parts) != 2:
            raise UserError(f"prompt {self.name}: the template must use {{context}} exactly once")
        marker = "\x00context\x00"
        if marker in self.template:  # pragma: no cover - a NUL in a prompt file
            raise UserError(f"prompt {self.name}: the template contains NUL characters")
        before, after = self.render(**values, context=marker).split(marker)
        return before, after


def _fill(template: str, values: dict[str, str]) -> str:
    """``template`` with the known placeholders that ``values`` has filled in."""

    def sub(m: re.Match[str]) -> str:
        key = m.group(1)
        return str(values[key]) if key in KNOWN_PLACEHOLDERS and key in values else m.group(0)

    return PLACEHOLDER.sub(sub, template)


def prompts_dir() -> Path:
    """The shipped prompts: the package's ``rubric/prompts`` (where the wheel puts them), found
    with :mod:`importlib.resources`; in a source checkout, the repository's ``prompts/``."""
    from importlib import resources

    package = Path(str(resources.files("rubric")))
    for candidate in (package / "prompts", package.parent.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise UserError("the shipped prompts folder is missing from this installation")


def load_prompt_file(path: str | Path) -> Prompt:
    """Load and check one prompt file; every problem names the file (and the line, where known).

    Checked: UTF-8 text, TOML syntax, the type of every field, the kind, the parser, and the
    template's placeholders (known names only, every ``{`` closed, those the kind needs present),
    so a misspelled ``{qeury}`` or a question prompt without ``{context}`` stops here instead of
    grading with a prompt that never shows the model the passage.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: no such prompt file") from None
    except IsADirectoryError:
        raise UserError(f"{path}: is a directory, expected a prompt file (TOML)") from None
    except OSError as e:
        raise UserError(f"{path}: cannot read the prompt file ({e.strerror})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise UserError(
            f"{path}:{line}: not UTF-8 text (byte {e.start}); save the prompt file as UTF-8"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        at = re.search(r"at line (\d+)", str(e))  # tomllib says where only in its message
        line = f":{at.group(1)}" if at else ""
        raise UserError(f"{path}{line}: not a valid TOML prompt file ({e})") from None
    for key in ("name", "kind", "template", "parser"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise UserError(f"{path}: missing or empty field {key!r}")
    for key in ("description", "source", "system", "prompt_type", "answer_prompt"):
        if key in data and not isinstance(data[key], str):
            raise UserError(f"{path}: {key} must be a string, got {_toml_type(data[key])}")
    if data["kind"] not in REQUIRED_PLACEHOLDERS:
        raise UserError(
            f"{path}: kind {data['kind']!r} is unknown; known: {', '.join(REQUIRED_PLACEHOLDERS)}"
        )
    if data["kind"] in GRADING_KINDS:  # other kinds (generate, assign, ...) have their own parsers
        try:
            get_parser(data["parser"])
        except UserError as e:
            raise UserError(f"{path}: parser: {e}") from None
    aliases = data.get("aliases", [])
    choices = data.get("choices")
    for key, value in (("aliases", aliases), ("choices", choices)):
        if value is not None and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            raise UserError(f"{path}: {key} must be a list of strings")
    if not isinstance(data.get("prompt_info", {}), dict):
        raise UserError(f"{path}: [prompt_info] must be a table")
    decoding = check_decoding(data.get("decoding", {}), path)
    if not isinstance(data.get("system_api_only", False), bool):
        raise UserError(f"{path}: system_api_only must be true or false")
    check_template(data["template"], data["kind"], path, _template_line(text))
    part = data.get("context_part")
    if part is not None and not (
        isinstance(part, str) and data["template"].endswith(part) and part.count("{context}") == 1
    ):
        raise UserError(f"{path}: context_part must be the template's tail, with {{context}} once")
    known = {"name", "kind", "template", "parser", "description", "source", "system", "prompt_info"}
    known |= {"aliases", "choices", "decoding", "system_api_only", "context_part"}
    return Prompt(
        name=data["name"],
        kind=data["kind"],
        template=data["template"],
        parser=data["parser"],
        description=data.get("description", ""),
        source=data.get("source", ""),
        system=data.get("system"),
        prompt_info=dict(data.get("prompt_info", {})),
        path=path,
        extra={k: v for k, v in data.items() if k not in known},
        aliases=tuple(aliases),
        file_choices=tuple(choices) if choices is not None else None,
        decoding=decoding,
        system_api_only=data.get("system_api_only", False),
        context_part=part,
    )


#: The range of each decoding setting a prompt file may fix (as the OpenAI API accepts them).
DECODING_RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0.0, 2.0),
    "top_p": (0.0, 1.0),
    "max_tokens": (1, 1_000_000),
    "frequency_penalty": (-2.0, 2.0),
    "presence_penalty": (-2.0, 2.0),
}


def check_decoding(table: Any, path: Path) -> dict[str, float | int]:
    """The ``[decoding]`` table: known settings with numbers in range (``max_tokens`` an integer)."""
    if not isinstance(table, dict):
        raise UserError(f"{path}: [decoding] must be a table")
    for key, value in table.items():
        if key not in DECODING_RANGES:
            raise UserError(f"{path}: [decoding] {key} is unknown; known: {', '.join(DECODING_RANGES)}")
        low, high = DECODING_RANGES[key]
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if not number or (key == "max_tokens" and not isinstance(value, int)) or not low <= value <= high:
            want = "an integer" if key == "max_tokens" else "a number"
            raise UserError(
                f"{path}: [decoding] {key} must be {want} from {low:g} to {high:g}, got {value!r}"
            )
    return dict(table)


def check_template(template: str, kind: str, path: Path, first_line: int | None = None) -> None:
    """Placeholders are known names, every ``{`` that opens one is closed, braces balance, and the
    placeholders the kind needs are there. ``first_line``: the file line the template starts on."""

    def where(pos: int) -> str:
        return f"{path}:{first_line + template.count(chr(10), 0, pos)}" if first_line else str(path)

    for m in OPENING.finditer(template):
        name = m.group(1)
        closed = template.startswith("}", m.end())
        if closed and name not in KNOWN_PLACEHOLDERS:
            known = ", ".join(f"{{{p}}}" for p in sorted(KNOWN_PLACEHOLDERS))
            raise UserError(f"{where(m.start())}: unknown placeholder {{{name}}}; known: {known}")
        if not closed and name in KNOWN_PLACEHOLDERS:
            raise UserError(f"{where(m.start())}: placeholder {{{name} is not closed with '}}'")
    opened: list[int] = []
    for pos, char in enumerate(template):
        if char == "{":
            opened.append(pos)
        elif char == "}":
            if not opened:
                raise UserError(f"{where(pos)}: '}}' without a '{{' before it in the template")
            opened.pop()
    if opened:
        raise UserError(f"{where(opened[-1])}: '{{' is never closed in the template")
    used = set(PLACEHOLDER.findall(template))
    missing = ", ".join(f"{{{p}}}" for p in REQUIRED_PLACEHOLDERS[kind] if p not in used)
    if missing:
        raise UserError(f"{path}: a {kind} prompt needs {missing} in its template")


TEMPLATE_KEY = re.compile(r"""\s*template\s*=\s*('''|\"\"\"|'|")?(.*)$""")


def _template_line(text: str) -> int | None:
    """The line of the file on which the template's text starts (TOML gives no positions)."""
    for number, line in enumerate(text.splitlines(), start=1):
        m = TEMPLATE_KEY.match(line)
        if m:
            multi = m.group(1) in ("'''", '"""')
            return number + 1 if multi and not m.group(2) else number  # TOML drops a newline after '''
    return None


def _toml_type(value: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", list: "an array", dict: "a table"}
    return names.get(type(value), type(value).__name__)


@lru_cache(maxsize=1)
def shipped_prompts() -> dict[str, Prompt]:
    """All shipped prompts by name."""
    prompts = {}
    for path in sorted(prompts_dir().glob("*.toml")):
        p = load_prompt_file(path)
        prompts[p.name] = p
    return prompts


def _aliases(prompts: dict[str, Prompt]) -> dict[str, Prompt]:
    return {alias: p for p in prompts.values() for alias in p.aliases}


def get_prompt(name_or_path: str, extra_files: list[Path] | None = None, option: str = "prompt") -> Prompt:
    """A prompt by name or alias (shipped, or from ``--prompt-file``) or by path to a TOML file.

    ``option`` names the parameter (a lower-case name, which the CLI spells as its flag) or the
    argument (``NAME``) in the error for an unknown prompt.
    """
    for f in extra_files or []:
        p = load_prompt_file(f)
        if p.name == name_or_path or name_or_path in p.aliases:
            return p
    if name_or_path.endswith(".toml") and Path(name_or_path).exists():
        return load_prompt_file(name_or_path)
    prompts = shipped_prompts()
    if name_or_path in prompts:
        return prompts[name_or_path]
    if name_or_path in _aliases(prompts):
        return _aliases(prompts)[name_or_path]
    parameters = (option,) if option.isidentifier() and option.islower() else ()
    named = "{" + option + "}" if parameters else option
    raise UserError(
        f"{named}: unknown prompt {name_or_path!r}; known: {', '.join(sorted(prompts)) or '(none)'}",
        *parameters,
    )
