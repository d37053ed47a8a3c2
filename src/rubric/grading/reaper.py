"""Ends what a run started when the run itself is killed with SIGKILL (which it cannot catch).

A private Ray instance starts a tree of processes (GCS server, raylet, workers, agents); some of
them outlive a driver killed with ``kill -9``. :func:`reaping_descendants` starts this module as a
small watcher process: while the run lives, the watcher notes the run's descendants every half
second; when the run ends without saying goodbye (its pipe closes without ``done``), the watcher
kills the processes it noted last. A clean end -- also Ctrl-C or SIGTERM, whose handlers shut Ray
down -- says ``done`` and nothing is killed.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

INTERVAL = 0.5


def children_map() -> dict[int, list[int]]:
    """Parent pid -> child pids, from ``/proc`` (Linux) or ``ps`` (elsewhere)."""
    kids: dict[int, list[int]] = {}
    proc = Path("/proc")
    if proc.is_dir():
        for entry in proc.iterdir():
            if entry.name.isdigit():
                try:
                    ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                except (OSError, IndexError, ValueError):
                    continue
                kids.setdefault(ppid, []).append(int(entry.name))
        return kids
    out = subprocess.run(["ps", "-Ao", "pid=,ppid="], capture_output=True, text=True).stdout
    for line in out.splitlines():
        pid, ppid = (int(x) for x in line.split())
        kids.setdefault(ppid, []).append(pid)
    return kids


def descendants(pid: int) -> set[int]:
    kids = children_map()
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in kids.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def watch(parent: int) -> None:
    """The watcher's loop (runs in its own process, reading the run's goodbye from stdin)."""
    clean = threading.Event()
    closed = threading.Event()

    def read() -> None:
        for line in sys.stdin:
            if line.strip() == "done":
                clean.set()
        closed.set()

    threading.Thread(target=read, daemon=True).start()
    noted: set[int] = set()
    while not closed.wait(INTERVAL):
        if os.getppid() == parent:
            noted = descendants(parent) - {os.getpid()}
    if not clean.is_set():
        for pid in noted:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


@contextlib.contextmanager
def reaping_descendants() -> Iterator[None]:
    """While the block runs, processes this one starts are killed if it dies by SIGKILL."""
    watcher = subprocess.Popen(
        [sys.executable, "-m", "rubric.grading.reaper", str(os.getpid())],
        stdin=subprocess.PIPE,
        text=True,
        start_new_session=True,  # Ctrl-C on the terminal reaches the run, not the watcher
    )
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            watcher.stdin.write("done\n")
            watcher.stdin.close()
        watcher.wait()


if __name__ == "__main__":
    watch(int(sys.argv[1]))
