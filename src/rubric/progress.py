"""The one progress display of every long command (grading, bank generation, nuggetize, assign).

On a terminal it is a tqdm bar. When stderr is a log file or a pipe a bar would be one endless
line of carriage returns, and printing nothing leaves a user unable to tell slow from stuck, so
there a line is printed every :data:`INTERVAL` seconds (``RUBRIC_PROGRESS_SECONDS``) by a timer,
even while one long batch is still running: done/total, rate and time left.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Protocol, TextIO


class Progress(Protocol):
    """What the long loops call: ``update(n)`` after ``n`` more units, ``close()`` at the end;
    ``total`` grows when more units turn up (re-asks)."""

    total: int | None

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


def interval() -> float:
    """Seconds between two progress lines in a log (default 30)."""
    try:
        value = float(os.environ.get("RUBRIC_PROGRESS_SECONDS", "30"))
    except ValueError:
        return 30.0
    return value if value > 0 else 30.0


class NoProgress:
    """Nothing to show (a short job, or progress turned off)."""

    total: int | None = None

    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


class LogProgress:
    """A line every ``every`` seconds on a stream that is not a terminal, from a timer thread."""

    def __init__(self, total: int | None, desc: str, unit: str, every: float, stream: TextIO) -> None:
        self.total, self.desc, self.unit, self.every, self.stream = total, desc, unit, every, stream
        self.done = 0
        self.start = time.monotonic()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name=f"progress-{desc}", daemon=True)
        self._thread.start()

    def update(self, n: int = 1) -> None:
        with self._lock:
            self.done += n

    def line(self) -> str:
        """``grading: 120/600 pairs (20%), 2.1 pairs/s, about 3m48s left``."""
        with self._lock:
            done = self.done
        elapsed = max(time.monotonic() - self.start, 1e-9)
        rate = done / elapsed
        parts = [
            f"{self.desc}: {done}/{self.total} {self.unit}s"
            if self.total
            else f"{self.desc}: {done} {self.unit}s"
        ]
        if self.total:
            parts[0] += f" ({100 * done / self.total:.0f}%)"
        parts.append(f"{rate:.3g} {self.unit}s/s" if rate >= 0.1 else f"{_duration(elapsed)} elapsed")
        if self.total and rate > 0:
            parts.append(f"about {_duration((self.total - done) / rate)} left")
        return ", ".join(parts)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                print(self.line(), file=self.stream, flush=True)
            except (OSError, ValueError):  # the stream was closed under us: nothing to report to
                return

    def close(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()


def progress(
    total: int | None, desc: str, unit: str, *, enabled: bool = True, stream: TextIO | None = None
) -> Progress:
    """The progress display of one long loop on stderr: a tqdm bar on a terminal (after a second,
    so a run answered from the cache shows none), timed lines elsewhere."""
    stream = stream or sys.stderr
    if not enabled:
        return NoProgress()
    isatty = getattr(stream, "isatty", None)
    if isatty is not None and isatty():
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, desc=desc, file=stream, mininterval=0.5, delay=1.0, leave=False)
    return LogProgress(total, desc, unit, interval(), stream)
