"""Citation support through the backend contract with a real local model: a random tiny GPT-2
(built offline, loaded by path through the hf-causal backend) answers every (sentence, cited
segment) prompt. Its answers name no support level, so every pair is re-asked, then recorded as a
failure with its answer, counted in the record and left unjudged (null), never read as "no
support"; the scores then leave the answer out."""

from __future__ import annotations

import pytest

from rubric.evaluate.support import support_scores
from rubric.grading.support import CitedAnswer, judge_support
from rubric.llm.registry import make_backend
from rubric.prompting.prompts import get_prompt


def test_a_local_model_that_names_no_level_leaves_every_pair_unjudged_and_counted(hf_tiny, tmp_path):
    pytest.importorskip("transformers")
    model = hf_tiny.build_gpt2(tmp_path / "gpt2", chat=True, n_positions=512)
    backend = make_backend("hf-causal", str(model), max_new_tokens=4, max_input_tokens=400)
    answers = [CitedAnswer("run", "q1", [("bees make honey", ["d1"]), ("cars", ["d1", "d2"])])]
    texts = {"d1": "bees make honey in hives", "d2": "roads"}
    records, failures = judge_support(answers, texts, get_prompt("TREC24Support"), backend, retries=1)
    assert len(failures) == 3 and all("unreadable answer after 2 attempt(s)" in f for f in failures)
    assert failures[0].startswith("run run topic q1 sentence 1 citation d1: ")
    (record,) = records
    assert record["failed_pairs"] == 3 and record["llm_options"]["max_input_tokens"] == 400
    assert [c["support"] for s in record["sentences"] for c in s["citations"]] == [None, None, None]
    report = support_scores(records)
    assert report.unjudged == [("run", "q1")]
    assert all(s.value != s.value and s.per_query == {} for s in report.scores)  # NaN over no topic
