"""docs/api.md's notebook tour for tests: its cells, a first cell naming other data, a run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from helpers import ROOT

TOUR = "## A notebook tour"


def tour_cells() -> list[str]:
    """The code blocks of the tour section of docs/api.md, in order."""
    text = (ROOT / "docs" / "api.md").read_text(encoding="utf-8")
    section = text[text.index(TOUR) :]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    return re.findall(r"```python\n(.*?)```", section, re.S)


def data_cell(folder: Path, files: dict[str, str], depth: int) -> str:
    """The tour's first cell for other data: the same names, other files."""
    lines = ["import rubric", f"data = {str(folder)!r}"]
    lines += [f"{name} = f'{{data}}/{file}'" for name, file in files.items() if name != "runs"]
    lines += [f"runs = [f'{{data}}/{files['runs']}']", f"depth = {depth}"]
    return "\n".join(lines) + "\n"


def run_tour(first: str, cwd: Path, timeout: int = 600) -> str:
    """The tour with ``first`` as its first cell, as one script in a fresh interpreter."""
    script = "\n".join([first, *tour_cells()[1:]])
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
    )
    assert out.returncode == 0, out.stderr
    return out.stdout
