"""Agreement tables and Cohen's kappa, checked against hand counts and scikit-learn."""

from __future__ import annotations

import math

import pytest
from sklearn.metrics import cohen_kappa_score

from rubric.data.labels import LabelRule
from rubric.data.select import GradeFilter
from rubric.errors import UserError
from rubric.verify.agreement import Agreement, GradeMap, kappa_from_counts
from rubric.verify.matrix import judgments, load_matrix, passage_labels


def pairs_of(graded, prompt_class, rule=LabelRule()):
    m = load_matrix(graded, GradeFilter(prompt_class), answer_prompt=None)
    labels, human = passage_labels(m, rule), judgments(m)
    return [(lab, human[k]) for k, lab in labels.items() if k in human]


def test_binarised_counts_and_kappa_by_hand(graded, fx):
    ag = Agreement.from_pairs(pairs_of(graded, fx.RATING), min_relevant=2)
    assert ag.n == 7  # p6 is ungraded, r3 has no judgment
    b = ag.binary(4)
    assert (b.tp, b.fp, b.fn, b.tn) == (2, 3, 1, 1)
    # p_o = 3/7, p_e = (5*3 + 2*4)/49 = 23/49  ->  kappa = (21 - 23) / (49 - 23)
    assert b.kappa == pytest.approx(-2 / 26, abs=1e-12)
    assert b.precision == pytest.approx(2 / 5) and b.recall == pytest.approx(2 / 3)
    assert b.accuracy == pytest.approx(3 / 7)
    assert ag.thresholds() == [1, 2, 3, 4, 5]
    assert ag.counts[(5, 0)] == 2 and ag.counts[(4, 2)] == 1


def test_direct_prompt_kappa(graded, fx):
    ag = Agreement.from_pairs(pairs_of(graded, fx.DIRECT), min_relevant=2)
    b = ag.binary(1)
    assert (b.tp, b.fp, b.fn, b.tn) == (3, 1, 0, 3)
    assert b.kappa == pytest.approx(18 / 25, abs=1e-12)


@pytest.mark.parametrize("rule", [LabelRule(), LabelRule("count", 4), LabelRule("nth", 1, 2)])
def test_kappa_equals_sklearn_on_every_threshold(graded, fx, rule):
    pairs = pairs_of(graded, fx.RATING, rule)
    ag = Agreement.from_pairs(pairs, min_relevant=1)
    labels, human = zip(*pairs, strict=True)
    for t in ag.thresholds():
        expected = cohen_kappa_score([x >= t for x in labels], [y >= 1 for y in human])
        got = ag.binary(t).kappa
        assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)
    assert ag.multiclass_kappa() == pytest.approx(cohen_kappa_score(labels, human), abs=1e-12)


def test_degenerate_kappa_is_nan_not_a_crash():
    assert math.isnan(kappa_from_counts({(1, 1): 4}))
    assert math.isnan(kappa_from_counts({}))


def test_grade_map():
    m = GradeMap.parse("5=3,4=1")
    assert [m(g) for g in range(6)] == [0, 0, 0, 0, 1, 3]
    with pytest.raises(UserError, match="^mapping: expected GRADE=LEVEL"):
        GradeMap.parse("5:3")


def test_tables_render_latex_booktabs(graded, fx):
    ag = Agreement.from_pairs(pairs_of(graded, fx.RATING), min_relevant=2, name="Q_rating")
    latex = ag.binarised_table().to_latex()
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    assert "Q\\_rating" in latex and "\\textgreater{}=4 & 2 & 3 & 5 & -0.0769" in latex
    tsv = ag.confusion_table().to_tsv().splitlines()
    assert tsv[1] == "grade\tjudgment=3\tjudgment=2\tjudgment=1\tjudgment=0\ttotal"
    assert tsv[2] == "5\t1\t0\t0\t2\t3"  # p1 (3), p3 (0), r2 (0)
