"""The audit's smaller round-2 findings (issue 33), each through the real CLI where it can be
reached cheaply: a genq bank whose title is null, a stratified sample too small for its strata."""

from __future__ import annotations

import gzip
import json

import pytest

from helpers import faults
from rubric.errors import UserError
from rubric.verify.sample import draw

rubric, assert_one_error = faults.rubric, faults.assert_one_error


def test_a_genq_bank_with_a_null_title_has_no_query_text(tmp_path):
    """It imported the query text 'None', which then went into prompts."""
    genq = tmp_path / "genq.json"
    genq.write_text(json.dumps({"q1": {"f1": {"title": None, "facet": "f1", "questions": ["1. Why?"]}}}))
    r = rubric("bank", "import", genq, "-o", tmp_path / "bank.jsonl.gz")
    assert r.returncode == 0, r.stderr
    [bank] = [
        json.loads(line) for line in gzip.decompress((tmp_path / "bank.jsonl.gz").read_bytes()).splitlines()
    ]
    assert bank["query_text"] in ("", None) and "None" not in json.dumps(bank)
    genq.write_text(json.dumps({"q1": {"f1": {"title": 7, "questions": ["Why?"]}}}))
    r = rubric("bank", "import", genq, "-o", tmp_path / "other.jsonl")
    assert_one_error(r, str(genq), "query q1 facet f1: title must be text, found 7")
    assert not (tmp_path / "other.jsonl").exists()


@pytest.mark.parametrize(("size", "strata", "empty"), [(2, 4, 2), (3, 4, 1)])
def test_a_stratified_sample_leaving_a_group_without_a_topic_is_refused(size, strata, empty):
    """It said the chances "differ slightly" while some groups had no chance at all."""
    topics = [f"t{i}" for i in range(8)]
    with pytest.raises(UserError) as e:
        draw(topics, size, seed=1, strata_of={t: i * strata // 8 for i, t in enumerate(topics)})
    message = e.value.spelled(lambda p: "--" + p)
    assert (
        f"--size {size} with --strata {strata}: {empty} of the {strata} groups would get no topic" in message
    )
    sample = draw(topics, strata, seed=1, strata_of={t: i * strata // 8 for i, t in enumerate(topics)})
    assert sample.exact() and [d for _, d in sample.strata] == [1] * strata
