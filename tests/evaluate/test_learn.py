"""`rubric evaluate learn`: a classifier from grades to human labels, cross-validated by topic."""

from __future__ import annotations

import gzip
import json
import random

import pytest

from rubric.evaluate.learn import GradeTable, item_statistics, passage_features, prompt_classes, topic_folds

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"
NSR = "NuggetSelfRatedPrompt"


def _exam(qid: str, prompt_class: str, ratings: list[int], prefix: str) -> dict:
    ids = [f"{qid}/{prefix}{i}" for i in range(len(ratings))]
    return {
        "correctAnswered": [i for i, r in zip(ids, ratings, strict=True) if r >= 4],
        "wrongAnswered": [i for i, r in zip(ids, ratings, strict=True) if r < 4],
        "answers": [[i, str(r)] for i, r in zip(ids, ratings, strict=True)],
        "llm": "m",
        "llm_options": {},
        "exam_ratio": 0.0,
        "prompt_info": {"prompt_class": prompt_class, "is_self_rated": True},
        "self_ratings": [
            {("question_id" if prefix == "q" else "nugget_id"): i, "self_rating": r}
            for i, r in zip(ids, ratings, strict=True)
        ],  # fmt: skip
        "prompt_type": "question" if prefix == "q" else "nugget",
    }


def graded_file(path, topics=10, per_topic=14, unlabelled=(8, 9), seed=3):
    """Passages whose hidden 0-3 label drives noisy 0-5 ratings; the human label is that label
    (stored as the passage's judgment, except in the unlabelled topics)."""
    rng = random.Random(seed)
    truth = {}
    with gzip.open(path, "wt") as f:
        for t in range(topics):
            qid = f"t{t}"
            passages = []
            for k in range(per_topic):
                label = k % 4
                truth[(qid, f"p{k}")] = label
                rate = [max(0, min(5, label + 1 + rng.choice((-1, 0, 0, 1)))) for _ in range(6)]
                nug = [max(0, min(5, label + rng.choice((-1, 0, 1)))) for _ in range(4)]
                judged = (
                    [] if t in unlabelled else [{"paragraphId": f"p{k}", "query": qid, "relevance": label}]
                )
                passages.append({
                    "paragraph_id": f"p{k}", "text": "x", "paragraph": "",
                    "paragraph_data": {"judgments": judged, "rankings": []},
                    "exam_grades": [_exam(qid, QSR, rate, "q"), _exam(qid, NSR, nug, "n")],
                })  # fmt: skip
            f.write(json.dumps([qid, passages]) + "\n")
    return path, truth


def test_learns_labels_for_every_passage_and_reports_held_out_kappa(cli, tmp_path):
    graded, truth = graded_file(tmp_path / "graded.jsonl.gz")
    out = tmp_path / "learned.qrels"
    r = cli("evaluate", "learn", graded, "-o", out, "--features", "all", "--folds", "4")
    assert r.returncode == 0, r.stderr
    folds = [line for line in r.stderr.splitlines() if line.startswith("fold ")]
    assert len(folds) == 4 and all("held-out kappa" in line for line in folds)
    assert "mean over 4 folds" in r.stderr
    assert "never graded: FagB, FagB_few, HELM, Sun, Sun_few, Thomas" in r.stderr  # all = + direct
    rows = [line.split() for line in out.read_text().splitlines()]
    assert len(rows) == len(truth) == 140  # the unlabelled topics are labelled too
    learned = {(q, d): int(rel) for q, _, d, rel in rows}
    agree = sum(learned[p] == truth[p] for p in truth) / len(truth)
    assert agree > 0.6  # the ratings carry the label; the classifier finds it
    mean_held_out = float(r.stderr.split("held-out kappa ")[-1].split()[0])
    assert mean_held_out > 0.4
    again = cli(
        "evaluate", "learn", graded, "-o", tmp_path / "again.qrels", "--features", "all", "--folds", "4"
    )
    assert (tmp_path / "again.qrels").read_text() == out.read_text()  # seeded
    assert again.stderr.replace("again.qrels", "learned.qrels") == r.stderr


def test_judgments_from_a_qrels_file_and_random_forest(cli, tmp_path):
    graded, truth = graded_file(tmp_path / "graded.jsonl.gz", unlabelled=range(10))
    human = tmp_path / "human.qrels"
    human.write_text("".join(f"{q} 0 {d} {rel}\n" for (q, d), rel in truth.items() if q != "t0"))
    out = tmp_path / "learned.qrels"
    r = cli("evaluate", "learn", graded, "--judgments", human, "--features", "questions",
            "--classifier", "random-forest", "--seed", "7", "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "trained on 126 labelled passages (205 features, random-forest" in r.stderr
    assert len(out.read_text().splitlines()) == 140


def test_apply_trains_on_one_file_and_labels_another(cli, tmp_path):
    """Train on dev, label test: every passage of the --apply file gets a label, none of the
    training file's; the test file's own judgments are only compared with."""
    dev, _ = graded_file(tmp_path / "dev.jsonl.gz", unlabelled=())
    test, truth = graded_file(tmp_path / "test.jsonl.gz", topics=6, per_topic=10, unlabelled=(), seed=11)
    out = tmp_path / "test.qrels"
    r = cli("evaluate", "learn", dev, "--apply", test, "--features", "questions", "--folds", "3", "-o", out)
    assert r.returncode == 0, r.stderr
    rows = [line.split() for line in out.read_text().splitlines()]
    learned = {(q, d): int(rel) for q, _, d, rel in rows}
    assert set(learned) == set(truth) and len(rows) == 60  # the test file's passages, once each
    assert sum(learned[p] == truth[p] for p in truth) / len(truth) > 0.6
    reported = float(r.stderr.split("kappa ")[-1].split()[0])  # against test.jsonl.gz's judgments
    assert f"{test}: kappa" in r.stderr and "(60 passages)" in r.stderr
    from rubric.evaluate.learn import kappa

    assert reported == pytest.approx(kappa([truth[p] for p in truth], [learned[p] for p in truth]), abs=5e-5)
    assert "trained on 140 labelled passages (205 features" in r.stderr and f"of {test} to {out}" in r.stderr
    itself = cli(
        "evaluate", "learn", dev, "--features", "questions", "--folds", "3", "-o", tmp_path / "dev.qrels"
    )
    assert len((tmp_path / "dev.qrels").read_text().splitlines()) == 140 and itself.returncode == 0


def test_apply_file_graded_otherwise_is_one_line(cli, user_error, tmp_path):
    dev, _ = graded_file(tmp_path / "dev.jsonl.gz")
    other, _ = graded_file(tmp_path / "other.jsonl.gz", seed=4)
    with gzip.open(other, "rt") as f:
        lines = [json.loads(line) for line in f]
    for _, passages in lines:  # the test file lacks the question grades the model learned from
        for p in passages:
            p["exam_grades"] = p["exam_grades"][1:]
    with gzip.open(other, "wt") as f:
        f.writelines(json.dumps(line) + "\n" for line in lines)
    out = tmp_path / "out.qrels"
    r = cli("evaluate", "learn", dev, "--apply", other, "--features", "all", "-o", out)
    user_error(r, f"{other}: its passages have 205 features, the training file's 410")
    assert not out.exists()


def test_folds_split_topics_never_passages():
    folds = topic_folds([f"t{i}" for i in range(11)], 5, seed=1)
    assert sorted(t for f in folds for t in f) == sorted(f"t{i}" for i in range(11))
    assert sorted(len(f) for f in folds) == [2, 2, 2, 2, 3]
    assert topic_folds([f"t{i}" for i in range(11)], 5, seed=1) == folds
    assert topic_folds([f"t{i}" for i in range(11)], 5, seed=2) != folds


def test_features_are_the_originals(tmp_path):
    """One passage, by hand: 10 ratings padded, three orders, integer and one-hot, counts >= n."""
    graded, _ = graded_file(tmp_path / "g.jsonl.gz", topics=1, per_topic=1)
    from rubric.data.graded import GradedFile

    with GradedFile(graded) as f:
        table = GradeTable.from_queries(f.queries())
    pair = table.pairs[0]
    ratings = table.ratings[pair][QSR]
    mean, high = item_statistics(table, table.pairs)
    feats = passage_features(table.ratings[pair], {QSR: range(6)}, mean, high)
    assert len(feats) == 10 + 60 + 60 + 10 + 60 + 5
    by_rating = sorted((r for _, r in ratings), reverse=True) + [0] * 4
    assert feats[130:140] == [float(r) for r in by_rating]
    assert feats[-5:] == [float(sum(1 for _, r in ratings if r >= n)) for n in range(5)]
    direct = passage_features({"Thomas": [("t0", 2)], "Sun": [("t0", 7)]}, prompt_classes("direct"), {}, {})
    assert direct == [0.0, 1.0, 0.0, 2.0, 0.0, 0.0, 1.0]  # Sun 7 is outside 0-1: 0; Thomas 2


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (
            ["--features", "everything"],
            "--features': 'everything' is not one of 'all', 'questions', 'nuggets'",
        ),
        (["--classifier", "svm"], "--classifier': 'svm' is not one of 'extra-trees', 'random-forest'"),
        (["--folds", "20"], "--folds: 20 folds need at least 20 topics"),
        (["--features", "direct"], "every passage needs grades of the same prompt classes"),
    ],
)
def test_bad_options_are_one_line(cli, user_error, tmp_path, args, fragment):
    graded, _ = graded_file(tmp_path / "graded.jsonl.gz")
    out = tmp_path / "out.qrels"
    user_error(cli("evaluate", "learn", graded, "-o", out, *args), fragment)
    assert not out.exists()


def test_no_human_labels_is_one_line(cli, user_error, tmp_path):
    graded, _ = graded_file(tmp_path / "graded.jsonl.gz", unlabelled=range(10))
    user_error(
        cli("evaluate", "learn", graded, "-o", tmp_path / "o.qrels"), "holds no judgments", "--judgments"
    )


def test_direct_prompts_as_features(cli, tmp_path):
    """--features direct: each direct prompt's grade (and one-hot) is a feature; Sun and Thomas
    grades that follow the label are learned from."""
    path = tmp_path / "direct.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for t in range(6):
            passages = []
            for k in range(12):
                label = k % 3
                grades = [
                    {"correctAnswered": label > 0, "answer": str(g), "llm": "m", "self_ratings": g,
                     "prompt_info": {"prompt_class": name}, "prompt_type": "direct_grading"}
                    for name, g in (("Sun", int(label > 0)), ("Thomas", label))
                ]  # fmt: skip
                judged = [{"paragraphId": f"p{k}", "query": f"t{t}", "relevance": label}]
                passages.append({
                    "paragraph_id": f"p{k}", "text": "x", "paragraph": "",
                    "paragraph_data": {"judgments": judged, "rankings": []}, "grades": grades,
                })  # fmt: skip
            f.write(json.dumps([f"t{t}", passages]) + "\n")
    out = tmp_path / "learned.qrels"
    r = cli("evaluate", "learn", path, "--features", "direct", "--folds", "3", "-o", out)
    assert r.returncode == 0, r.stderr
    assert "(7 features, extra-trees, feature set direct)" in r.stderr  # Sun 1+2, Thomas 1+3
    assert "never graded: FagB, FagB_few, HELM, Sun_few" in r.stderr
    rows = [line.split() for line in out.read_text().splitlines()]
    assert len(rows) == 72 and all(int(rel) == int(d[1:]) % 3 for _, _, d, rel in rows)
