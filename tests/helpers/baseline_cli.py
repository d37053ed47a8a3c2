"""The CLI as it was before streaming (commit 0a3c0e0), to check that streaming changed no output.

:func:`baseline_src` extracts ``src`` of that commit with ``git archive`` (skipping the test where
the checkout has no git history, e.g. an sdist); :func:`same_outputs` runs one command with the
baseline (a subprocess) and with this checkout (in this process), each writing into its own
folder, and compares exit code, standard output and every file written, byte for byte.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import ROOT
from helpers.cli import invoke

BASELINE = "0a3c0e0"
"""The last commit whose readers loaded whole files (main before the streaming readers)."""


def baseline_src(into: Path) -> Path:
    """``src`` of :data:`BASELINE` under ``into`` (extracted once per folder)."""
    src = into / "src"
    if src.exists():
        return src
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed: the baseline CLI cannot be extracted")
    archive = subprocess.run([git, "-C", str(ROOT), "archive", BASELINE, "src"], capture_output=True)
    if archive.returncode != 0:
        pytest.skip(f"commit {BASELINE} is not in this checkout's history")
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return src


def run(src: Path, args: list[str], cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(src), OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    return subprocess.run(
        [sys.executable, "-m", "rubric", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        input=stdin,
        timeout=600,
    )


# Lines of standard output changed on purpose since the baseline, left out of the comparison:
# the multiclass kappa line of `verify agreement` (its wording, and it is left out where grades
# and judgments are on different scales; tests/verify covers the new rule).
CHANGED_ON_PURPOSE = (b"% multiclass ", b"# multiclass ")


def old_spellings(args: list[str]) -> list[str]:
    """``args`` as the baseline CLI spells them: options renamed since (issue 24,
    :data:`rubric.cli.renames.RENAMED`) back to their old names, the long one where there were two."""
    from rubric.cli.renames import RENAMED

    table = RENAMED.get((str(args[0]), str(args[1])), {}) if len(args) > 1 else {}
    back: dict[str, str] = {}
    for old, new in table.items():
        if new not in back or old.startswith("--"):
            back[new] = old
    return [back.get(str(a), a) if isinstance(a, str) else a for a in args]


ADDED_ON_PURPOSE = b"labels and judgments as one scale"
"""The header of a block verify agreement gained later (issue 40: weighted kappa and Krippendorff's
alpha), left out with its lines up to the blank line that ends it."""


def _compared(stdout: bytes) -> bytes:
    kept, skipping = [], False
    for line in stdout.splitlines(keepends=True):
        skipping = skipping or ADDED_ON_PURPOSE in line
        if skipping:
            skipping = bool(line.strip())
            continue
        if not line.startswith(CHANGED_ON_PURPOSE):
            kept.append(line)
    return b"".join(kept)


def same_outputs(baseline: Path, work: Path, args: list[str], stdin: bytes | None = None) -> dict[str, bytes]:
    """Run ``rubric ARGS`` (relative output paths land in a folder per version) with both CLIs;
    assert the same exit code, standard output (less :data:`CHANGED_ON_PURPOSE`) and files; return
    the new version's files."""
    found = {}
    for name, src in (("old", baseline), ("new", ROOT / "src")):
        folder = work / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        if name == "old":
            result = run(src, old_spellings(args), folder, stdin)
        else:
            result = invoke([str(a) for a in args], cwd=folder, input=stdin, text=False)
        assert "Traceback" not in result.stderr.decode(errors="replace"), (name, args, result.stderr[-3000:])
        files = {f.name: f.read_bytes() for f in sorted(folder.iterdir())}
        found[name] = (result.returncode, result.stdout, files, result.stderr)
    old, new = found["old"], found["new"]
    assert new[0] == old[0], (args, old[3][-2000:], new[3][-2000:])
    assert _compared(new[1]) == _compared(old[1]), (args, "standard output differs")
    assert new[2].keys() == old[2].keys(), (args, sorted(old[2]), sorted(new[2]))
    for f in new[2]:
        if f.endswith(".html"):
            assert page_data(new[2][f]) == page_data(old[2][f]), (args, f)
        else:
            assert new[2][f] == old[2][f], (args, f)
    return new[2]


def page_data(page: bytes) -> dict:
    """The data of a review page as one JSON value: the old page's one block, or the new page's
    settings with its query blocks put back in place of the index (the layout changed, not the data)."""
    import json
    import re

    text = page.decode()
    data = json.loads(re.search(r'id="rubric-data">(.*?)</script>', text, re.S).group(1))
    blocks = re.findall(r'id="rubric-q(\d+)">(.*?)</script>', text, re.S)
    if blocks:
        assert [int(i) for i, _ in blocks] == list(range(len(data["queries"])))
        data["queries"] = [json.loads(b) for _, b in blocks]
    return data
