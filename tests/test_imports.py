"""The shape of the import graph: a stack of layers, no circles inside src/rubric, nothing heavy on
start-up.

Every import statement counts, also those inside functions and under ``TYPE_CHECKING``: a lazy
import still ties two modules together, and a circle of them is a design knot waiting to bite.
Circles are looked for between modules and between the subpackages (``bank``, ``grading``, ``llm``,
...), so ``bank -> grading -> bank`` is caught even when no two modules import each other; and the
subpackages form the floors of :data:`LAYERS`, where an import only ever points down.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess  # fresh interpreters: what they import, scripts, process trees

SRC = Path(__file__).resolve().parents[1] / "src"
HEAVY = ("torch", "transformers", "openai")

#: The floors of src/rubric, ground floor first. A package imports only packages on the floors below
#: its own: never one above (a wrong-way import) and never another one on its own floor (a sideways
#: import: the packages of one floor know nothing of each other). Every subpackage is on one floor.
LAYERS: list[tuple[str, ...]] = [
    ("errors",),
    ("extras", "progress"),  # the optional extras and their pip commands | the progress display
    ("data",),  # file formats; label rules and kappa (verify and evaluate); RAG answer files
    ("outcome",),  # what a run that asked a model reports at its end (counts with data.table)
    ("llm", "prompting"),  # talking to models | prompt files and answer parsing
    ("convert", "bank"),  # phases 0 and 1
    ("grading",),  # phase 2
    ("evaluate",),  # phase 4
    ("plots",),  # figures: of evaluate's results (meta, assignment agreement) and of verify's counts
    ("verify",),  # phase 3: applies bank edits (bank.edit) and draws heatmaps (plots)
    ("api",),  # the public verbs that span phases
    ("rubric",),  # rubric/__init__ names the public API lazily (and for type checkers)
    ("cli",),
    ("__main__",),  # `python -m rubric`
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph() -> dict[str, set[str]]:
    """Module -> the rubric modules it imports (a ``from pkg import name`` that names a module
    counts as importing that module)."""
    files = {module_name(p): p for p in (SRC / "rubric").rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in files}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for target in targets:
                while target and target not in files:
                    target = target.rpartition(".")[0]
                if target.startswith("rubric") and target != name:
                    graph[name].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def package_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The same edges between subpackages (``rubric.grading.x`` -> ``grading``)."""

    def package(module: str) -> str:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 else parts[0]

    out: dict[str, set[str]] = {}
    for module, targets in graph.items():
        out.setdefault(package(module), set()).update(
            package(t) for t in targets if package(t) != package(module)
        )
    return out


def test_the_cycle_finder_finds_cycles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycles_between_modules():
    graph = import_graph()
    assert len(graph) > 50 and "rubric.grading.engine" in graph["rubric.grading.job"]
    assert cycles(graph) == []


def test_no_import_cycles_between_packages():
    packages = package_graph(import_graph())
    assert "prompting" in packages["bank"]  # bank generation uses the prompt files
    assert cycles(packages) == []


def layer_violations(packages: dict[str, set[str]], layers: list[tuple[str, ...]]) -> list[str]:
    """Every import between packages that does not point to a lower floor, as ``a -> b``."""
    floor = {package: i for i, names in enumerate(layers) for package in names}
    return [
        f"{a} -> {b}"
        for a in sorted(packages)
        for b in sorted(packages[a])
        if floor.get(b, -1) >= floor.get(a, -1)
    ]


def test_the_layer_check_finds_wrong_way_and_sideways_imports():
    layers = [("low",), ("left", "right"), ("top",)]
    assert layer_violations({"top": {"left", "low"}, "left": {"low"}, "right": set()}, layers) == []
    assert layer_violations({"low": {"top"}, "left": {"right"}}, layers) == ["left -> right", "low -> top"]


def test_every_package_is_on_one_floor():
    placed = [package for names in LAYERS for package in names]
    assert len(placed) == len(set(placed))
    assert set(package_graph(import_graph())) == set(placed)


def test_imports_point_down_the_layers():
    packages = package_graph(import_graph())
    assert layer_violations(packages, LAYERS) == []
    # the phases' shared ground: prompts under bank and grading, labels/kappa/answers in data
    assert packages["bank"] <= {"errors", "data", "outcome", "llm", "prompting"}
    assert packages["grading"] <= {"errors", "extras", "progress", "data", "outcome", "llm", "prompting"}
    assert "evaluate" not in packages["verify"]  # it reaches evaluate only through plots' figures


def test_the_library_never_imports_the_cli():
    graph = import_graph()
    library = {m: t for m, t in graph.items() if not m.startswith(("rubric.cli", "rubric.__main__"))}
    offenders = {m: t for m, t in library.items() if any(x.startswith("rubric.cli") for x in t)}
    assert offenders == {}


@pytest.mark.parametrize(
    "code",
    [
        "import rubric",
        "import rubric.cli.main",  # what `rubric --help` loads
        "import rubric.grading.job, rubric.grading.launch, rubric.llm.cache, rubric.llm.registry",
    ],
)
def test_start_up_imports_nothing_heavy(code):
    probe = f"import sys; {code}; print(sorted(m for m in {HEAVY!r} if m in sys.modules))"
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(SRC)},
        check=True,
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_a_command_line_loads_only_its_own_phase():
    """`rubric evaluate leaderboard ...` imports rubric.cli.evaluate, not the modules of the
    other phases (a third of the start-up of every call); `rubric --help` needs them all."""
    probe = (
        "import json, sys; from rubric.cli.main import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(json.dumps([m for m in sys.modules if m.startswith('rubric.cli.')]), file=sys.stderr)"
    )
    loaded = {}
    for args in (["evaluate", "leaderboard", "--help"], ["--help"]):
        out = subprocess.run(
            [sys.executable, "-c", probe, *args], capture_output=True, text=True, env={"PYTHONPATH": str(SRC)}
        )
        loaded[args[0]] = set(json.loads(out.stderr.strip().splitlines()[-1]))
    phases = {f"rubric.cli.{p}" for p in ("convert", "bank", "grade", "verify", "evaluate", "prompts")}
    assert loaded["evaluate"] & phases == {"rubric.cli.evaluate"}
    assert loaded["--help"] >= phases
