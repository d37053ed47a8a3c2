"""TREC qrels and runs with trec_eval 9.x semantics."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from rubric.data.trec import expand_paths, ranked, read_qrels, read_run, write_qrels, write_run
from rubric.errors import UserError


def test_qrels_any_whitespace_comments_and_hash_ids(tmp_path):
    f = tmp_path / "qrels"
    f.write_text("# comment\n1 0 d1 2\n1\tQ0\td2\t0\n\n2 1 msmarco_v2.1_doc_00_1#6_2 3\n")
    assert read_qrels(f) == {"1": {"d1": 2, "d2": 0}, "2": {"msmarco_v2.1_doc_00_1#6_2": 3}}


def test_qrels_bad_column_count_and_level(tmp_path):
    f = tmp_path / "qrels"
    f.write_text("1 0 d1 2\n1 0 d2\n")
    with pytest.raises(UserError, match=r"qrels:2: a qrels line has 4 columns"):
        read_qrels(f)
    f.write_text("1 0 d1 high\n")
    with pytest.raises(UserError, match=r"qrels:1: relevance must be an integer"):
        read_qrels(f)


def test_run_scores_are_float32_and_ties_break_by_docid_descending(tmp_path):
    f = tmp_path / "run.gz"
    # 11.993696926161647 and 11.993697637226433 are one float32 apart from equal: both round to
    # the same 32-bit float, so trec_eval 9.x ties them and orders by docid descending.
    lines = "q 0 a 1 11.993697637226433 t\nq 0 b 2 11.993696926161647 t\nq 0 c 3 1 t\n"
    f.write_bytes(gzip.compress(lines.encode()))
    run = read_run(f)
    assert run.name == "t"
    assert run.scores["q"]["a"] == run.scores["q"]["b"] == float(np.float32(11.993697637226433))
    assert [d for d, _ in run.ranking("q")] == ["b", "a", "c"]


def test_run_rank_column_is_ignored_and_comments_skipped(tmp_path):
    f = tmp_path / "run"
    f.write_text("# header\nq Q0 x#1 7 0.5 tag\nq Q0 y#2 1 0.25 tag\n   # indented comment\n")
    run = read_run(f)
    assert [d for d, _ in run.ranking("q")] == ["x#1", "y#2"]


def test_run_with_five_columns_names_the_line(tmp_path):
    f = tmp_path / "run.txt"
    f.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 0.5\nq Q0 c 3 0.1 t\n")
    with pytest.raises(UserError, match=r"run\.txt:2: a run line has 6 columns .* found 5"):
        read_run(f)


def test_run_bad_score_and_duplicates(tmp_path):
    f = tmp_path / "run"
    f.write_text("q Q0 a 1 1.0 t\nq Q0 b 2 high t\n")
    with pytest.raises(UserError, match=r"run:2: score must be a number"):
        read_run(f)
    f.write_text("q Q0 a 1 1.0 t\nq Q0 a 2 0.5 t\n")
    with pytest.raises(UserError, match=r"run:2: document a appears twice for query q"):
        read_run(f)


def test_run_queries_split_across_blocks_are_merged(tmp_path):
    f = tmp_path / "run"
    f.write_text("q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq1 Q0 c 2 0.5 t\n")
    assert read_run(f).scores == {"q1": {"a": 1.0, "c": 0.5}, "q2": {"b": 1.0}}


def test_write_and_read_back(tmp_path):
    write_qrels(tmp_path / "q", {"1": {"a": 1, "b": 0}})
    assert read_qrels(tmp_path / "q") == {"1": {"a": 1, "b": 0}}
    write_run(tmp_path / "r.gz", {"1": {"a": 0.5, "b": 2.0}}, tag="mine")
    run = read_run(tmp_path / "r.gz")
    assert run.name == "mine" and run.ranking("1") == [("b", 2.0), ("a", 0.5)]


def test_ranked_orders_like_trec_eval():
    assert ranked({"a": 1.0, "c": 1.0, "b": 2.0}) == [("b", 2.0), ("c", 1.0), ("a", 1.0)]


def test_expand_paths(tmp_path):
    (tmp_path / "runs").mkdir()
    for name in ("b", "a", ".hidden"):
        (tmp_path / "runs" / name).write_text("")
    assert [p.name for p in expand_paths([tmp_path / "runs"])] == ["a", "b"]
    with pytest.raises(UserError, match="no such file"):
        expand_paths([tmp_path / "nope"])


def test_run_text_after_the_tag_is_ignored_as_trec_eval_does(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 a 1 2.0 tag more junk\nq2 Q0 b 1 1.0 tag\nq1 Q0 c 2 1.0 tag end\n")
    run = read_run(path)
    assert run.scores == {"q1": {"a": 2.0, "c": 1.0}, "q2": {"b": 1.0}}
    assert run.name == "tag"


def test_read_run_with_queries_equals_the_full_read(tmp_path):
    stretches = [("10", 0), ("2", 0), ("3", 0), ("10", 5)]
    lines = [f"{q} Q0 d{i + o} {i} {1.0 / (i + 1):.6f} tag" for q, o in stretches for i in range(5)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(lines))  # no final newline; query 10 in two stretches
    full = read_run(path)
    for keep in ({"10"}, {"2", "3"}, {"10", "3", "9"}):
        part = read_run(path, queries=keep)
        assert part.scores == {q: v for q, v in full.scores.items() if q in keep}
        assert part.name == "tag"
    (tmp_path / "dup.txt").write_text("1 Q0 a 1 1.0 t\n1 Q0 a 2 0.5 t\n")
    with pytest.raises(UserError, match="dup.txt:2: document a appears twice"):
        read_run(tmp_path / "dup.txt", queries={"1"})
