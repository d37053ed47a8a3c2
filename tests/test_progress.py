"""Progress of long commands: a bar on a terminal, and on a log file or pipe a line with counts,
rate and time left at a fixed interval, from a timer (so a long batch still reports)."""

from __future__ import annotations

import io
import re
import time

from helpers import BANKS, TINY
from rubric.progress import LogProgress, NoProgress, progress

LINE = re.compile(r"^grading: (\d+)/10 pairs \(\d+%\), .*(pairs/s|elapsed)(, about \S+ left)?$")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_log_lines_come_from_a_timer_and_stop_at_close():
    log = io.StringIO()
    bar = LogProgress(10, "grading", "pair", 0.05, log)
    bar.update(3)
    time.sleep(0.3)  # no update meanwhile: the timer still reports
    bar.close()
    lines = log.getvalue().splitlines()
    assert len(lines) >= 2 and all(LINE.match(line) for line in lines), lines
    assert lines[-1].startswith("grading: 3/10 pairs (30%)") and "left" in lines[-1]
    time.sleep(0.15)
    assert log.getvalue().splitlines() == lines  # closed: silent


def test_terminal_gets_a_bar_and_disabled_gets_nothing(monkeypatch):
    from tqdm import tqdm

    bar = progress(5, "grading", "pair", stream=Tty())
    assert isinstance(bar, tqdm)
    bar.close()
    assert isinstance(progress(5, "grading", "pair", enabled=False), NoProgress)
    monkeypatch.setenv("RUBRIC_PROGRESS_SECONDS", "7")
    log = progress(5, "grading", "pair", stream=io.StringIO())
    assert isinstance(log, LogProgress) and log.every == 7
    log.close()


def test_grading_to_a_log_prints_progress_lines(cli, tmp_path, tiny_models_dirs):
    pool = tmp_path / "pool.jsonl.gz"
    r = cli("convert", "runs", "--topics", TINY / "queries.tsv", "--collection", TINY / "collection.tsv",
            TINY / "run.alpha", "-o", pool)  # fmt: skip
    assert r.returncode == 0, r.stderr
    prompt = "QuestionSelfRatedUnanswerablePromptWithChoices"
    r = cli("grade", pool, "--bank", BANKS / "questions.jsonl", "-p", prompt,
            "--model", tiny_models_dirs["t5"], "--no-cache", "-o", tmp_path / "g.jsonl.gz",
            env={"RUBRIC_PROGRESS_SECONDS": "0.01"})  # fmt: skip
    assert r.returncode == 0, r.stderr
    shown = [line for line in r.stderr.splitlines() if line.startswith("grading: ")]
    assert shown and all(re.match(r"grading: \d+/\d+ pairs \(\d+%\)", line) for line in shown), r.stderr
