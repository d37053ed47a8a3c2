"""docs/ARCHITECTURE.md tells the truth about the code: every module under ``src/rubric`` is in its
package table, and every module, file and dotted name the page mentions exists.

Written over whatever the tree holds, so a moved or added module fails here until the page says
where it went.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rubric"
DOC = ROOT / "docs" / "ARCHITECTURE.md"


def package_table() -> dict[str, str]:
    """The package table and the packages' sections: first cell (`data/`, `api.py`, ...) -> the rest
    of the row, and for a package its section (``### `data/` ``, up to the next heading)."""
    text = DOC.read_text(encoding="utf-8")
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| `([^`]+)` \|(.*)\|$", line)
        if m:
            rows[m.group(1)] = m.group(2)
    for m in re.finditer(r"^### `([^`]+/)`\n(.*?)(?=^#)", text, re.MULTILINE | re.DOTALL):
        rows[m.group(1)] = rows.get(m.group(1), "") + m.group(2)
    return rows


def test_the_table_cells_are_short_and_every_package_has_its_section():
    text = DOC.read_text(encoding="utf-8")
    cells = re.findall(r"^\| `([^`]+)` \|(.*)\|$", text, re.MULTILINE)
    assert len(cells) > 10
    assert [name for name, cell in cells if len(cell) > 160] == []
    packages = [name for name, _ in cells if name.endswith("/")]
    assert [p for p in packages if f"\n### `{p}`\n" not in text] == []


def missing_from(rows: dict[str, str], module: Path) -> str | None:
    """Why ``module`` (relative to src/rubric) is not in the table, or None when it is: a top-level
    module has its own row; a module of a package is named (`x.py`, or `sub/x.py` deeper down) in
    the package's row, and a package has a row."""
    parts = module.parts
    if len(parts) == 1:
        return None if parts[0] in rows or f"rubric/{parts[0]}" in rows else "no row of its own"
    row = rows.get(parts[0] + "/")
    if row is None:
        return f"no row for the package {parts[0]}/"
    if module.name == "__init__.py" and len(parts) == 2:
        return None
    name = "/".join(parts[1:]) if module.name != "__init__.py" else "/".join(parts[1:-1]) + "/"
    return None if f"`{name}`" in row else f"`{name}` not named in its package's row"


def test_every_module_is_in_the_package_table():
    rows = package_table()
    assert "cli/" in rows and "grading/" in rows  # the table was found
    modules = sorted(p.relative_to(SRC) for p in SRC.rglob("*.py"))
    assert len(modules) > 50
    missing = [f"{m}: {why}" for m in modules if (why := missing_from(rows, m))]
    assert not missing, "docs/ARCHITECTURE.md leaves out:\n" + "\n".join(missing)


def test_the_table_names_no_module_that_is_gone():
    rows = package_table()
    gone = []
    for key, row in rows.items():
        folder = SRC / key.removeprefix("rubric/") if key.endswith("/") else None
        if folder is not None:
            assert folder.is_dir(), f"{key}: no such package"
            for name in re.findall(r"`([a-z_/]+\.py)`", row):
                if not (folder / name).exists():
                    gone.append(f"{key}{name}")
        else:
            assert (SRC / key.removeprefix("rubric/")).exists(), f"{key}: no such module"
    assert not gone, "docs/ARCHITECTURE.md names modules that do not exist: " + ", ".join(gone)


def resolves(dotted: str) -> bool:
    """Whether ``rubric.a.b.Name`` (a module, then attributes) exists."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            if not hasattr(target, attr):
                return False
            target = getattr(target, attr)
        return True
    return False


def test_every_name_and_path_it_mentions_exists():
    text = DOC.read_text(encoding="utf-8")
    names = set(re.findall(r"`(rubric(?:\.[A-Za-z_]\w*)+)", text))
    assert len(names) > 3  # the names were found
    unresolved = [n for n in sorted(names) if not resolves(n)]
    assert not unresolved, f"names in docs/ARCHITECTURE.md that do not exist: {unresolved}"
    paths = set(re.findall(r"`((?:src/)?(?:rubric|tests|prompts)/[\w/.-]*\w)`", text))
    absent = [
        p
        for p in sorted(paths)
        if not (ROOT / p).exists() and not (ROOT / "src" / p).exists() and p != "rubric/prompts"
    ]
    assert not absent, f"paths in docs/ARCHITECTURE.md that do not exist: {absent}"


def test_the_floors_drawn_are_the_floors_enforced():
    """The drawing under "The floors" is tests/test_imports.py's LAYERS, top floor first."""
    spec = importlib.util.spec_from_file_location("layers", ROOT / "tests" / "test_imports.py")
    assert spec is not None and spec.loader is not None
    layers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layers)
    text = DOC.read_text(encoding="utf-8").split("## The floors", 1)[1]
    drawing = text.split("```text\n", 1)[1].split("```", 1)[0]
    floors = [tuple(line.split("  ")[0].strip().split(" | ")) for line in drawing.splitlines()]
    assert floors == list(reversed(layers.LAYERS))


def test_the_extras_row_names_every_extra():
    from rubric.extras import EXTRAS

    row = package_table()["extras.py"]
    assert [name for name in EXTRAS if f"`{name}`" not in row] == []
