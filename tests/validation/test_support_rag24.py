"""`rubric evaluate support` on the real TREC RAG 2024 baseline answers (castorini/ragnarok_data,
903 answers of GPT-4o, Command R+ and Llama-3.1-70B over 301 topics): every citation resolves to a
segment id of its answer's references, the pairs to judge are counted as the raw JSON counts them,
and segment texts that are not the cited ones are one clear error before any LLM call (the
corpus text itself is not in the validation data)."""

from __future__ import annotations

import json

import pytest

from rubric.errors import UserError
from rubric.grading.support import read_cited, segment_texts

FILES = (
    "baseline_rag24.test_gpt-4o_top20.jsonl",
    "baseline_rag24.test_command-r-plus_top20.jsonl",
    "baseline_rag24.test_l31_70b_instruct_top20.jsonl",
)


def test_rag24_answers_resolve_every_citation(shared, tmp_path):
    paths = [shared("ragnarok_data", "rag24-test-answers", name) for name in FILES]
    answers = read_cited(paths)
    assert len(answers) == 903 and len({a.topic_id for a in answers}) == 301
    raw_pairs, raw_ids = 0, set()
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            for s in rec["answer"]:
                raw_pairs += len(s["citations"])
                raw_ids.update(rec["references"][i] for i in s["citations"])
    ours = [(d, a) for a in answers for _, cites in a.sentences for d in cites]
    assert len(ours) == raw_pairs == 15_846 and len(raw_ids) == 4_490
    assert {d for d, _ in ours} == raw_ids
    assert all(d.startswith("msmarco_v2.1_doc_") and "#" in d for d in raw_ids)

    other = tmp_path / "segments.jsonl"
    other.write_text(json.dumps({"docid": "msmarco_v2.1_doc_00_0#0_0", "title": "t", "segment": "s"}) + "\n")
    with pytest.raises(UserError, match=f"none of the {len(raw_ids)} cited segment ids is in it"):
        segment_texts(answers, [other])
