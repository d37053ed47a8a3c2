"""The watcher that ends what a run started when the run is killed with SIGKILL (Ray's processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.subprocess  # fresh interpreters: what they import, scripts, process trees

SRC = Path(__file__).resolve().parents[2] / "src"
DRIVER = """
import subprocess, sys, time
from rubric.grading.reaper import reaping_descendants
with reaping_descendants():
    # a grandchild in its own session, as Ray starts its agents: no signal of ours reaches it
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
    print(child.pid, flush=True)
    time.sleep(float(sys.argv[1]))
"""


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def start(seconds: float) -> tuple[subprocess.Popen, int]:
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(seconds)], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(SRC)))  # fmt: skip
    return driver, int(driver.stdout.readline())


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to see the processes")
def test_what_a_killed_run_started_is_ended():
    driver, child = start(600)
    time.sleep(1.5)  # the watcher notes the descendants every half second
    driver.kill()
    driver.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and alive(child):
        time.sleep(0.05)
    assert not alive(child)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc to see the processes")
def test_a_clean_end_kills_nothing():
    driver, child = start(1.5)
    try:
        assert driver.wait(timeout=30) == 0
        time.sleep(1)
        assert alive(child)  # the run ended normally: what it left running is its own business
    finally:
        os.kill(child, signal.SIGKILL)
