"""Learned labels on LLMJudge dev against TREMA-UNH's published classifier figures.

rubric-llm-judge/summary.txt has, per feature set, classifier and restart, two Cohen's kappas of
its rubric_llm_judge/label.py `train`: the model trained on the first half of the dev queries (in
file order) and scored on those training passages, then on the second half (validation). Its
features of the training passages use item statistics over the training half, the scored features
over all queries; restarts differ only in the classifier's random state. This test runs that
protocol with our features and classifiers (seeds 0-4) and compares the means over the restarts.

The released graded file (all-ExtraTrees/dev.jsonl.gz) lost the six direct prompts' grades (the
original's `predict` overwrote each passage's `grades` with its predicted label), so the "all"
set here is nuggets + questions: its figures are compared with the original's "all" and the gap
is bounded, not closed (docs/validation.md).
"""

from __future__ import annotations

import pytest

from rubric.data.graded import GradedFile
from rubric.data.trec import read_qrels
from rubric.evaluate import learn

pytestmark = pytest.mark.slow

# means over the five restarts of summary.txt: (train kappa, validation kappa)
PUBLISHED = {
    ("all", "extra-trees"): (0.42547, 0.16836),
    ("all", "random-forest"): (0.24999, 0.16131),
    ("nuggets", "extra-trees"): (0.38514, 0.12612),
    ("nuggets", "random-forest"): (0.18676, 0.11333),
    ("questions", "extra-trees"): (0.25906, 0.12833),
    ("questions", "random-forest"): (0.19636, 0.13108),
}
SELF_RATED = ("NuggetSelfRatedPrompt", "QuestionSelfRatedUnanswerablePromptWithChoices")


@pytest.fixture(scope="module")
def dev(shared_data_dir):
    with GradedFile(shared_data_dir / "rubric-llm-judge" / "all-ExtraTrees" / "dev.jsonl.gz") as f:
        table = learn.GradeTable.from_queries(f.queries())
    human = read_qrels(shared_data_dir / "llm4eval-LLMJudge" / "llm4eval_dev_qrel_2024.txt")
    return table, human


@pytest.fixture(scope="module")
def shared_data_dir():
    from helpers import SHARED_DATA

    if not (SHARED_DATA / "rubric-llm-judge").exists():
        pytest.skip(f"validation data not available: {SHARED_DATA}")
    return SHARED_DATA


def original_protocol(table, human, feature_set, method):
    """Mean (train kappa, validation kappa) over 5 restarts of the original's half split."""
    classes = {c: r for c, r in learn.prompt_classes(feature_set).items() if c in SELF_RATED}
    topics = table.topics()
    first = set(topics[: len(topics) // 2])
    train = [p for p in table.pairs if p[0] in first]
    held = [p for p in table.pairs if p[0] not in first]
    x_train = learn.feature_matrix(table, train, classes, train)
    x_all = learn.feature_matrix(table, table.pairs, classes, table.pairs)
    row = {p: i for i, p in enumerate(table.pairs)}
    kappas = []
    for seed in range(5):
        model = learn.classifier(method, seed)
        model.fit(x_train, [human[q][d] for q, d in train])
        kappas.append(
            tuple(
                learn.kappa([human[q][d] for q, d in part], model.predict(x_all[[row[p] for p in part]]))
                for part in (train, held)
            )
        )
    return tuple(sum(k[i] for k in kappas) / 5 for i in (0, 1))


@pytest.mark.parametrize(("feature_set", "method"), sorted(k for k in PUBLISHED if k[0] != "all"))
def test_questions_and_nuggets_reproduce_the_published_kappas(dev, feature_set, method):
    train, validation = original_protocol(*dev, feature_set, method)
    published_train, published_validation = PUBLISHED[(feature_set, method)]
    assert abs(train - published_train) < 0.03
    assert abs(validation - published_validation) < 0.03


def test_all_without_the_lost_direct_grades(dev):
    """ExtraTrees on nuggets + questions: validation within 0.03 of the published "all"; the
    training kappa is lower by less than 0.06 (19 direct features missing)."""
    train, validation = original_protocol(*dev, "all", "extra-trees")
    published_train, published_validation = PUBLISHED[("all", "extra-trees")]
    assert abs(validation - published_validation) < 0.03
    assert 0 < published_train - train < 0.06


def test_cross_validated_labels_agree_with_the_released_ones(dev, shared_data_dir):
    """5-fold topic cross-validation runs on the real file; the labels of the final model agree
    with the released all-ExtraTrees/dev.qrel well above chance."""
    table, human = dev
    result = learn.learn_labels(table, human, feature_set="all", method="extra-trees", folds=5, seed=0)
    assert len(result.folds) == 5 and len(result.labels) == 7263
    held_out = sum(f.held_out_kappa for f in result.folds) / 5
    assert 0.08 < held_out < 0.25
    released = read_qrels(shared_data_dir / "rubric-llm-judge" / "all-ExtraTrees" / "dev.qrel")
    pairs = [(q, d) for q in released for d in released[q]]
    assert learn.kappa([released[q][d] for q, d in pairs], [result.labels[p] for p in pairs]) > 0.4


def test_apply_trains_on_dev_and_labels_test(shared_data_dir, tmp_path):
    """`evaluate learn dev --apply test`: the challenge's protocol (train on the dev labels, label
    the test pairs). All 4,423 test pairs get a label; their Cohen's kappa with the test's human
    labels (which the test file does not hold) is measured here: 0.131, against 0.147 for the
    team's submitted "all" labels, whose features also had the six direct prompts this release
    lost; within 0.05 of the submission."""
    from sklearn.metrics import cohen_kappa_score

    test = shared_data_dir / "rubric-workbench/rubric-llm-judge/out-final/questions-ExtraTrees/ExtraTrees"
    out = tmp_path / "test.qrels"
    lines = learn.learn_file(
        shared_data_dir / "rubric-llm-judge/all-ExtraTrees/dev.jsonl.gz", out, apply=test / "test.jsonl.gz"
    )
    assert "trained on 7263 labelled passages" in lines[-1] and "wrote 4423 learned labels" in lines[-1]
    ours = read_qrels(out)
    human = read_qrels(shared_data_dir / "llm4eval-LLMJudge/llmjudge_test_qrel_idx.txt")
    submitted = read_qrels(
        shared_data_dir / "rubric-llm-judge/submission/llm4eval_test_qrel_2024-all-ExtraTrees-all.txt"
    )
    pairs = [(q, d) for q in human for d in human[q]]
    assert len(pairs) == 4423 and all(d in ours.get(q, {}) for q, d in pairs)
    truth = [human[q][d] for q, d in pairs]
    our_kappa = cohen_kappa_score(truth, [ours[q][d] for q, d in pairs])
    their_kappa = cohen_kappa_score(truth, [submitted[q][d] for q, d in pairs])
    assert our_kappa > 0.1 and abs(our_kappa - their_kappa) < 0.05, (our_kappa, their_kappa)
