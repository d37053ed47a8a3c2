"""The library logs and never prints: messages of library modules are records of the `rubric`
logger, which the command shows on stderr (`rubric: warning: ...` for warnings)."""

from __future__ import annotations

import ast
import logging
from pathlib import Path

from rubric.cli.common import show_log

SRC = Path(__file__).resolve().parents[1] / "src" / "rubric"
DRAWS = {"progress.py"}  # progress bars draw on the terminal: the one place that writes


def _writes(path: Path) -> list[str]:
    """Calls of print() and of sys.stdout/sys.stderr methods in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Name) and func.id == "print":
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: print()")
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Attribute)
            and isinstance(func.value.value, ast.Name)
            and func.value.value.id == "sys"
            and func.value.attr in ("stdout", "stderr")
        ):
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: sys.{func.value.attr}.{func.attr}()")
    return found


def test_library_modules_do_not_print():
    modules = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).parts[0] != "cli"]
    offenders = [w for p in modules if str(p.relative_to(SRC)) not in DRAWS for w in _writes(p)]
    assert not offenders, "library modules print instead of logging:\n" + "\n".join(offenders)
    assert _writes(SRC / "cli" / "common.py")  # the walk finds prints where there are some


def test_the_command_shows_notes_as_they_are_and_marks_warnings(capsys):
    logger = logging.getLogger("rubric")
    saved = (list(logger.handlers), logger.level, logger.propagate)
    try:
        show_log()
        show_log()  # once is enough: a second call adds no second handler
        logging.getLogger("rubric.grading.launch").info("grading with %d workers", 2)
        logging.getLogger("rubric.llm.cache_dir").warning("RUBRIC_CACHE is deprecated")
        logging.getLogger("other").warning("not ours")
    finally:
        logger.handlers[:], logger.level, logger.propagate = saved
    err = capsys.readouterr().err
    assert err.splitlines()[:2] == ["grading with 2 workers", "rubric: warning: RUBRIC_CACHE is deprecated"]
    assert err.count("grading with 2 workers") == 1
