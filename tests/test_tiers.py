"""Test tiers: `.ci/durations.py` turns pytest's --durations output into tests/durations.tsv, and
the tests it lists at SLOW_SECONDS or more are the slow tier (tests/helpers/tiers.py)."""

from __future__ import annotations

import subprocess
import sys

from helpers import ROOT
from helpers.tiers import DURATIONS, SLOW_SECONDS, read_durations, slow_ids

OUTPUT = """\
============================= slowest durations ==============================
120.04s call     tests/test_api.py::test_the_documented_example_runs_on_the_bundled_data
81.32s setup    tests/cli/test_grade.py::test_user_errors
13.40s call     tests/cli/test_grade.py::test_user_errors
4.99s call     tests/a.py::test_b[x-1]
0.40s call     tests/a.py::test_c
"""


def test_the_script_keeps_call_times_slowest_first(tmp_path):
    out = tmp_path / "durations.tsv"
    r = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "durations.py"), "-o", str(out)],
        input=OUTPUT, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "3 tests of at least 1.0 s" in r.stderr
    times = read_durations(out)
    assert list(times.items()) == [
        ("tests/test_api.py::test_the_documented_example_runs_on_the_bundled_data", 120.04),
        ("tests/cli/test_grade.py::test_user_errors", 13.40),  # the call, not the fixtures' set-up
        ("tests/a.py::test_b[x-1]", 4.99),
    ]
    assert slow_ids(times) == {
        "tests/test_api.py::test_the_documented_example_runs_on_the_bundled_data",
        "tests/cli/test_grade.py::test_user_errors",
    }


def test_no_durations_is_an_error_not_an_empty_file(tmp_path):
    out = tmp_path / "durations.tsv"
    r = subprocess.run(
        [sys.executable, str(ROOT / ".ci" / "durations.py"), "-o", str(out)],
        input="5 passed\n", capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode == 1 and not out.exists()


def test_the_committed_file_marks_tests_slow(request):
    times = read_durations(DURATIONS)
    assert times, "tests/durations.tsv is missing or empty"
    slow = slow_ids(times)
    assert slow and all(times[node] >= SLOW_SECONDS for node in slow)
    here = "tests/test_tiers.py::test_the_committed_file_marks_tests_slow"
    assert here not in slow and request.node.get_closest_marker("slow") is None
