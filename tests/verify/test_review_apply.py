"""Review files and `rubric verify apply`: validation, human grade records, merging reviewers,
conflicts, bank edits, `evaluate qrels --prefer HumanReview` and `verify agreement --reviews`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rubric.data.jsonl import read_bank, read_passages
from rubric.data.trec import read_qrels
from rubric.errors import UserError
from rubric.verify.review import GradeAction, Review, file_sha256, parse_review


def review(graded: Path, reviewer: str, actions: list[dict], sha: str | None = None) -> dict:
    return {
        "version": 1,
        "reviewer": reviewer,
        "source": {"file": graded.name, "sha256": sha or file_sha256(graded)},
        "actions": actions,
    }


def write(path: Path, data: dict) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def cell(fx, qid: str, pid: str, key: str, grade: int | None = None, note: str | None = None) -> dict:
    action = {
        "type": "grade" if grade is not None else "confirm",
        "query_id": qid,
        "paragraph_id": pid,
        "item_id": fx.iid(qid, key),
        "prompt_class": fx.RATING,
        "llm": fx.LLM,
    }
    if grade is not None:
        action["grade"] = grade
    if note is not None:
        action["note"] = note
    return action


def human_grades(path: Path) -> dict[str, dict[tuple[str, str, str], int]]:
    """llm -> (query, passage, item) -> grade of the HumanReview records of a graded file."""
    out: dict[str, dict[tuple[str, str, str], int]] = {}
    for q in read_passages(path):
        for p in q.paragraphs:
            for g in p.exam_grades or []:
                if g.prompt_class == "HumanReview":
                    for r in g.self_ratings or []:
                        out.setdefault(g.llm, {})[(q.queryId, p.paragraph_id, r.item_id)] = r.self_rating
    return out


@pytest.fixture
def two_reviews(tmp_path, graded, fx):
    alice = write(
        tmp_path / "alice.json",
        review(graded, "alice", [
            cell(fx, "q1", "p2", "a", 4, note="states <b>what</b> a cat is"),
            cell(fx, "q1", "p1", "b"),  # confirms the LLM's 4
            cell(fx, "q2", "r1", "e", 0),
            {"type": "note", "query_id": "q1", "text": "the bank misses diet questions"},
        ]),
    )  # fmt: skip
    bob = write(
        tmp_path / "bob.json",
        review(graded, "bob", [cell(fx, "q1", "p2", "a", 2), cell(fx, "q1", "p3", "b", 0)]),
    )
    return alice, bob


# --- the review file model ----------------------------------------------------------------------


def test_model_round_trips_and_discriminates(graded, fx):
    data = review(graded, "alice", [cell(fx, "q1", "p2", "a", 4), cell(fx, "q1", "p1", "b")])
    data["actions"] += [
        {"type": "remove_item", "query_id": "q1", "item_id": fx.iid("q1", "c")},
        {
            "type": "rewrite_item",
            "query_id": "q1",
            "item_id": fx.iid("q1", "b"),
            "text": "how old do cats get?",
        },
        {"type": "add_item", "query_id": "q1", "text": "what do cats drink?"},
        {"type": "note", "query_id": "q2", "paragraph_id": "r1", "item_id": fx.iid("q2", "d"), "text": "hm"},
    ]
    r = parse_review(data)
    assert isinstance(r, Review) and r.llm == "human:alice"
    assert [a.type for a in r.actions] == [
        "grade",
        "confirm",
        "remove_item",
        "rewrite_item",
        "add_item",
        "note",
    ]
    assert isinstance(r.actions[0], GradeAction) and r.actions[0].grade == 4
    assert parse_review(json.loads(r.model_dump_json(exclude_none=True))) == r


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d: d["actions"][1].update(grade=7), "actions[1] (grade): grade: Input should be less than"),
        (lambda d: d["actions"][1].update(grade=True), "actions[1] (grade): grade: Input should be a valid"),
        (lambda d: d["actions"][1].update(grade="4"), "actions[1] (grade): grade: Input should be a valid"),
        (lambda d: d["actions"][0].update(grade=3), "actions[0] (confirm): grade: Extra inputs are not"),
        (lambda d: d["actions"][1].pop("paragraph_id"), "actions[1] (grade): paragraph_id: Field required"),
        (lambda d: d["actions"].append({"type": "regrade"}), "actions[2] (regrade): action: Input tag"),
        (lambda d: d["actions"].append("grade"), "actions[2]: action: Input should be a valid dictionary"),
        (lambda d: d["actions"].append({"type": "add_item", "query_id": "q1", "text": "  "}),
         "actions[2] (add_item): text: String should have at least 1 character"),
        (lambda d: d.update(version=2), "review file version 2; this rubric reads version 1"),
        (lambda d: d.update(reviewer=""), "reviewer: String should have at least 1 character"),
        (lambda d: d["source"].update(sha256="abc"), "source.sha256: String should match pattern"),
        (lambda d: d.update(reviewr="x"), "reviewr: Extra inputs are not permitted"),
    ],
)  # fmt: skip
def test_invalid_review_names_the_action(graded, fx, change, message):
    data = review(graded, "alice", [cell(fx, "q1", "p1", "b"), cell(fx, "q1", "p2", "a", 4)])
    change(data)
    with pytest.raises(UserError) as e:
        parse_review(data, "alice.json")
    assert str(e.value).startswith("alice.json: ") and message in str(e.value), str(e.value)


def test_cli_rejects_a_broken_review_file(cli, user_error, tmp_path, graded, fx):
    bad = write(tmp_path / "r.json", review(graded, "alice", [cell(fx, "q1", "p2", "a", 9)]))
    out = tmp_path / "out.jsonl.gz"
    user_error(cli("verify", "apply", bad, graded, "-o", out), f"{bad}: actions[0] (grade): grade:")
    (tmp_path / "j.json").write_text("{", encoding="utf-8")
    user_error(cli("verify", "apply", tmp_path / "j.json", graded, "-o", out), "j.json: not valid JSON")
    assert not out.exists()


# --- apply --------------------------------------------------------------------------------------


def test_apply_writes_one_record_per_reviewer_and_reports_conflicts(cli, tmp_path, graded, fx, two_reviews):
    alice, bob = two_reviews
    out, summary = tmp_path / "reviewed.jsonl.gz", tmp_path / "summary.json"
    result = cli("verify", "apply", alice, bob, graded, "-o", out, "--summary", summary)
    assert result.returncode == 0, result.stderr
    a, b, e = fx.iid("q1", "a"), fx.iid("q1", "b"), fx.iid("q2", "e")
    assert human_grades(out) == {
        "human:alice": {("q1", "p2", a): 4, ("q1", "p1", b): 4, ("q2", "r1", e): 0},
        "human:bob": {("q1", "p2", a): 2, ("q1", "p3", fx.iid("q1", "b")): 0},
    }
    # written as the grader writes a self-rated record, so every later phase reads it
    p2 = next(
        p for q in read_passages(out) if q.queryId == "q1" for p in q.paragraphs if p.paragraph_id == "p2"
    )
    rec = next(g for g in p2.exam_grades if g.llm == "human:alice")
    assert rec.prompt_info.prompt_class == "HumanReview" and rec.prompt_info.is_self_rated
    assert rec.prompt_type == "question" and rec.correctAnswered == [a] and rec.wrongAnswered == []
    assert rec.exam_ratio == 1.0 and rec.answers == [(a, "states <b>what</b> a cat is")]
    assert rec.llm_options["source_sha256"] == file_sha256(graded)
    r1 = next(
        p for q in read_passages(out) if q.queryId == "q2" for p in q.paragraphs if p.paragraph_id == "r1"
    )
    assert next(g for g in r1.exam_grades if g.llm == "human:alice").wrongAnswered == [e]
    # the LLM's records are untouched
    llm_before = [
        [g.to_json() for g in p.exam_grades or []] for q in read_passages(graded) for p in q.paragraphs
    ]
    llm_after = [
        [g.to_json() for g in p.exam_grades or [] if g.prompt_class != "HumanReview"]
        for q in read_passages(out)
        for p in q.paragraphs
    ]
    assert llm_after == llm_before
    assert f"conflict q1 p2 {a}: alice 4, bob 2" in result.stderr
    assert "note alice q1: the bank misses diet questions" in result.stderr
    report = json.loads(summary.read_text())
    assert report["conflicts"] == [
        {"query_id": "q1", "paragraph_id": "p2", "item_id": a, "grades": {"alice": 4, "bob": 2}}
    ]
    assert report["reviewers"]["alice"] | {"files": None} == {
        "llm": "human:alice", "files": None, "cells": 3, "confirmed": 1, "differ_from_llm": 2,
    }  # fmt: skip
    assert report["records"] == 5


def test_reapplying_a_reviewer_replaces_their_records(cli, tmp_path, graded, fx, two_reviews):
    alice, bob = two_reviews
    once = tmp_path / "once.jsonl.gz"
    assert cli("verify", "apply", alice, bob, graded, "-o", once).returncode == 0
    newer = write(tmp_path / "alice2.json", review(once, "alice", [cell(fx, "q1", "p5", "c", 1)]))
    twice = tmp_path / "twice.jsonl.gz"
    result = cli("verify", "apply", newer, once, "-o", twice)
    assert result.returncode == 0, result.stderr
    grades = human_grades(twice)
    assert grades["human:alice"] == {("q1", "p5", fx.iid("q1", "c")): 1}
    assert grades["human:bob"] == human_grades(once)["human:bob"]
    assert "replacing 3 earlier ones" in result.stderr


def test_one_reviewer_in_two_files_the_later_wins(cli, tmp_path, graded, fx):
    first = write(tmp_path / "a1.json", review(graded, "alice", [cell(fx, "q1", "p2", "a", 4)]))
    second = write(tmp_path / "a2.json", review(graded, "alice", [cell(fx, "q1", "p2", "a", 3)]))
    out = tmp_path / "out.jsonl.gz"
    result = cli("verify", "apply", first, second, graded, "-o", out)
    assert result.returncode == 0, result.stderr
    assert human_grades(out) == {"human:alice": {("q1", "p2", fx.iid("q1", "a")): 3}}
    assert "conflict" not in result.stderr


@pytest.mark.parametrize(
    "action,message",
    [
        ({"paragraph_id": "p9"}, "actions[1]: passage p9 is not in query q1"),
        ({"query_id": "q7"}, "actions[1]: query q7 is not in"),
        ({"item_id": "q1/0123"}, "actions[1]: item q1/0123 is not graded in query q1"),
        ({"prompt_class": "Other"}, "actions[1]: passage p2 of query q1 has no Other grades"),
        ({"type": "confirm", "paragraph_id": "p6"}, "actions[1]: passage p6 of query q1 has no"),
    ],
)
def test_unknown_ids_are_errors_naming_the_action(cli, user_error, tmp_path, graded, fx, action, message):
    bad = cell(fx, "q1", "p2", "a", 4)
    bad.update(action)
    if bad["type"] == "confirm":
        bad.pop("grade")
    path = write(tmp_path / "r.json", review(graded, "alice", [cell(fx, "q1", "p1", "a", 5), bad]))
    out = tmp_path / "out.jsonl.gz"
    user_error(cli("verify", "apply", path, graded, "-o", out), f"{path}: {message}")
    assert not out.exists()


def test_review_of_another_file_needs_force(cli, user_error, tmp_path, graded, fx):
    path = write(tmp_path / "r.json", review(graded, "alice", [cell(fx, "q1", "p2", "a", 4)], sha="0" * 64))
    out = tmp_path / "out.jsonl.gz"
    user_error(
        cli("verify", "apply", path, graded, "-o", out),
        "made from a file with sha256 000000000000",
        "--force",
    )
    assert not out.exists()
    result = cli("verify", "apply", path, graded, "-o", out, "--force")
    assert result.returncode == 0, result.stderr
    assert "warning: " in result.stderr and human_grades(out)["human:alice"]


def test_bank_actions_go_through_bank_edit(cli, user_error, tmp_path, graded, fx):
    bank = fx.write_bank_file(tmp_path / "bank.jsonl")
    a, b, c = (fx.iid("q1", k) for k in "abc")
    alice = write(tmp_path / "alice.json", review(graded, "alice", [
        {"type": "remove_item", "query_id": "q1", "item_id": c, "note": "not about cats"},
        {"type": "rewrite_item", "query_id": "q1", "item_id": b, "text": "how old do cats get?"},
        {"type": "add_item", "query_id": "q2", "text": "what does trec_eval compute?"},
    ]))  # fmt: skip
    bob = write(tmp_path / "bob.json", review(graded, "bob", [
        {"type": "remove_item", "query_id": "q1", "item_id": c},  # agrees with alice: applied once
        {"type": "add_item", "query_id": "q2", "text": "what does trec_eval compute?"},
    ]))  # fmt: skip
    out, bank_out = tmp_path / "out.jsonl.gz", tmp_path / "bank2.jsonl"
    result = cli("verify", "apply", alice, bob, graded, "-o", out, "--bank", bank, "--bank-out", bank_out)
    assert result.returncode == 0, result.stderr
    assert "1 added, 1 removed, 1 rewritten" in result.stderr
    items = {b.query_id: [(i.item_id, i.item_text) for i in b.items] for b in read_bank(bank_out)}
    assert items["q1"] == [
        (a, "what is a cat?"),
        (fx.item_id("q1", "how old do cats get?"), "how old do cats get?"),
    ]
    assert [t for _, t in items["q2"]] == [
        "what is rubric evaluation?",
        "who wrote trec_eval?",
        "what does trec_eval compute?",
    ]
    diff = cli("bank", "diff", bank, bank_out)
    assert f"- {c}" in diff.stdout and f"~ {b} -> " in diff.stdout

    # two reviewers who edit one item differently: an error naming both actions, nothing written
    carol = write(tmp_path / "carol.json", review(graded, "carol", [
        {"type": "rewrite_item", "query_id": "q1", "item_id": c, "text": "what do cats like to eat?"},
    ]))  # fmt: skip
    out2 = tmp_path / "out2.jsonl.gz"
    bank3 = tmp_path / "b3.jsonl"
    user_error(
        cli("verify", "apply", alice, carol, graded, "-o", out2, "--bank", bank, "--bank-out", bank3),
        f"conflicting bank edits of item {c}: alice ({alice}: actions[0]) removes it, "
        f"carol ({carol}: actions[0]) rewrites it",
    )
    assert not out2.exists()
    gone = write(tmp_path / "gone.json", review(graded, "dave", [
        {"type": "remove_item", "query_id": "q1", "item_id": "q1/ffff"},
    ]))  # fmt: skip
    user_error(
        cli("verify", "apply", gone, graded, "-o", out2, "--bank", bank, "--bank-out", tmp_path / "b3.jsonl"),
        f"{gone}: actions[0]: item q1/ffff is not in the bank",
    )
    user_error(
        cli("verify", "apply", alice, graded, "-o", out2, "--bank", bank), "--bank and --bank-out go together"
    )
    assert not out2.exists()
    # without --bank the edits are not lost silently
    result = cli("verify", "apply", alice, graded, "-o", out2)
    assert result.returncode == 0 and "warning: 3 item edits not applied" in result.stderr


# --- using the corrections -------------------------------------------------------------------------


def test_qrels_prefer_human_grades(cli, user_error, tmp_path, graded, fx, two_reviews):
    alice, bob = two_reviews
    out = tmp_path / "reviewed.jsonl.gz"
    assert cli("verify", "apply", alice, bob, graded, "-o", out).returncode == 0
    llm, pref = tmp_path / "llm.qrels", tmp_path / "pref.qrels"
    assert cli("evaluate", "qrels", out, "--prompt-class", fx.RATING, "-o", llm).returncode == 0
    result = cli("evaluate", "qrels", out, "--prompt-class", fx.RATING, "--prefer", "HumanReview", "-o", pref)
    assert result.returncode == 0, result.stderr
    assert "4 passages have HumanReview grades" in result.stderr
    before, after = read_qrels(llm), read_qrels(pref)
    assert before == read_qrels(_qrels_of(cli, graded, fx, tmp_path))  # the LLM-only qrels did not change
    changed = {
        (q, d): (before[q][d], after[q][d]) for q in before for d in before[q] if before[q][d] != after[q][d]
    }
    # p2: a 1 -> lower median of alice 4, bob 2 = 2; p3: b 5 -> bob's 0; p1 (confirmed 4) and r1 keep theirs
    assert changed == {("q1", "p2"): (1, 2), ("q1", "p3"): (5, 0)}
    per_item = tmp_path / "items.qrels"
    assert (
        cli(
            "evaluate",
            "qrels",
            out,
            "--prompt-class",
            fx.RATING,
            "--prefer",
            "HumanReview",
            "--per-item",
            "-o",
            per_item,
        ).returncode
        == 0
    )
    lines = per_item.read_text().splitlines()
    assert f"q1 {fx.iid('q1', 'a')} p2 2" in lines and f"q1 {fx.iid('q1', 'b')} p3 0" in lines
    # without --prefer a file with human grades is ambiguous, and says what it holds
    user_error(cli("evaluate", "qrels", out, "-o", tmp_path / "x.qrels"), "HumanReview")
    user_error(
        cli(
            "evaluate",
            "qrels",
            graded,
            "--prompt-class",
            fx.RATING,
            "--prefer",
            "HumanReview",
            "-o",
            tmp_path / "x.qrels",
        ),
        "--prefer HumanReview:",
        "holds no question grades of prompt class HumanReview",
    )
    user_error(
        cli(
            "evaluate",
            "qrels",
            out,
            "--prompt-class",
            "HumanReview",
            "--prefer",
            "HumanReview",
            "-o",
            tmp_path / "x.qrels",
        ),
        "--prefer HumanReview: also selected with --prompt-class",
    )


def _qrels_of(cli, graded, fx, tmp_path) -> Path:
    path = tmp_path / "orig.qrels"
    assert cli("evaluate", "qrels", graded, "--prompt-class", fx.RATING, "-o", path).returncode == 0
    return path


def test_agreement_with_reviewers_equals_sklearn(cli, tmp_path, graded, fx):
    from sklearn.metrics import cohen_kappa_score

    grades = {"p1": {"a": 5, "b": 3, "c": 0}, "p2": {"a": 1, "b": 0, "c": 2}, "p3": {"a": 0, "b": 1, "c": 0},
              "p4": {"a": 0, "b": 4, "c": 2}}  # fmt: skip
    alice = write(tmp_path / "alice.json", review(graded, "alice", [
        cell(fx, "q1", p, k, g) for p, gs in grades.items() for k, g in gs.items()
    ]))  # fmt: skip
    bob = write(tmp_path / "bob.json", review(graded, "bob", [
        cell(fx, "q1", "p1", "a", 4), cell(fx, "q1", "p1", "b", 3), cell(fx, "q1", "p2", "a", 1),
        cell(fx, "q1", "p3", "b", 0), cell(fx, "q2", "r1", "d"),
    ]))  # fmt: skip
    out = tmp_path / "reviewed.jsonl.gz"
    assert cli("verify", "apply", alice, bob, graded, "-o", out).returncode == 0
    report = tmp_path / "agreement.tsv"
    result = cli("verify", "agreement", out, "--reviews", "-p", fx.RATING, "-o", report)
    assert result.returncode == 0, result.stderr
    rows = {}
    for line in report.read_text().split("\n\n")[0].splitlines():
        if not line.startswith("#") and not line.startswith("rater_a"):
            f = line.split("\t")
            rows[(f[0], f[1])] = f
    llm_grades = {p: fx.PASSAGES["q1"][p][1] for p in grades}
    x = [llm_grades[p][k] for p, gs in grades.items() for k in gs]
    y = [g for gs in grades.values() for g in gs.values()]
    row = rows[(fx.LLM, "human:alice")]
    assert int(row[2]) == 12
    assert float(row[4]) == pytest.approx(cohen_kappa_score(x, y), abs=1e-4)
    assert float(row[3]) == pytest.approx(sum(a == b for a, b in zip(x, y, strict=True)) / 12, abs=1e-4)
    ge4 = cohen_kappa_score([v >= 4 for v in x], [v >= 4 for v in y])
    assert float(row[8]) == pytest.approx(ge4, abs=1e-4)  # kappa_ge4
    # between reviewers: the 4 cells both graded (alice 5,3,1,1 vs bob 4,3,1,0)
    both = rows[("human:alice", "human:bob")]
    assert int(both[2]) == 4
    assert float(both[4]) == pytest.approx(cohen_kappa_score([5, 3, 1, 1], [4, 3, 1, 0]), abs=1e-4)
    assert int(rows[(fx.LLM, "human:bob")][2]) == 5  # bob's confirmation counts as his grade
    assert f"{fx.LLM} vs human:alice: 12 cells, kappa" in result.stderr
