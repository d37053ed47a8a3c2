"""Agreement tables and Cohen's kappa, checked against hand counts and scikit-learn."""

from __future__ import annotations

import math
import random
from collections import Counter

import krippendorff
import pytest
from sklearn.metrics import cohen_kappa_score

from rubric.data.grade_filter import GradeFilter
from rubric.data.kappa import krippendorff_alpha_from_counts, weighted_kappa_from_counts
from rubric.data.labels import GradeMap, LabelRule
from rubric.errors import UserError
from rubric.verify.agreement import Agreement, kappa_from_counts
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


def _random_tables(count=150, seed=3):
    """Label/judgment lists of random sizes on 0-3 with gaps (no 2 in some) and skew."""
    r = random.Random(seed)
    for _ in range(count):
        n = r.randint(2, 80)
        levels = r.choice([[0, 1, 2, 3], [0, 1, 3], [0, 3], [1, 2, 3, 4, 5, 0]])
        a = [r.choice(levels) for _ in range(n)]
        b = [min(max(levels), max(0, x + r.choice([-1, 0, 0, 0, 1, 2]))) for x in a]
        yield a, b


def test_weighted_kappa_equals_sklearn():
    for a, b in _random_tables():
        counts = Counter(zip(a, b, strict=True))
        full = list(range(min(a + b), max(a + b) + 1))  # distances are grade values, not positions
        for power, weights in ((1, "linear"), (2, "quadratic")):
            expected = (
                cohen_kappa_score(a, b, weights=weights, labels=full) if len(set(a + b)) > 1 else math.nan
            )
            got = weighted_kappa_from_counts(counts, power)
            assert (math.isnan(expected) and math.isnan(got)) or got == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_krippendorff_alpha_equals_the_krippendorff_package(level):
    checked = 0
    for a, b in _random_tables():
        got = krippendorff_alpha_from_counts(Counter(zip(a, b, strict=True)), level)
        if len(set(a + b)) < 2:
            assert math.isnan(got)  # the package refuses a one-value domain
            continue
        expected = krippendorff.alpha(reliability_data=[a, b], level_of_measurement=level)
        assert got == pytest.approx(expected, abs=1e-12)
        checked += 1
    assert checked > 100


def test_ordinal_and_interval_alpha_differ_where_the_scale_is_uneven():
    """Ordinal alpha depends on how many ratings lie between two grades, interval alpha on
    their difference: a table with few middle grades tells them apart."""
    counts = Counter({(0, 0): 40, (3, 3): 10, (0, 3): 3, (1, 2): 2, (2, 2): 1})
    ordinal = krippendorff_alpha_from_counts(counts, "ordinal")
    interval = krippendorff_alpha_from_counts(counts, "interval")
    assert abs(ordinal - interval) > 0.01


def test_scale_measures_only_on_one_scale(graded, fx):
    ag = Agreement.from_pairs(pairs_of(graded, fx.RATING), min_relevant=2)
    assert not ag.same_scale()
    assert ag.scale_table().rows == [] and "--map" in ag.scale_table().notes[0]
    mapped = Agreement.from_pairs(
        ((GradeMap.parse("5=3,4=1")(g), j) for g, j in pairs_of(graded, fx.RATING)), 2
    )
    table = mapped.scale_table()
    assert [r[0] for r in table.rows][:3] == ["n", "exact agreement", "Cohen's kappa"]
    labels, human = zip(
        *((GradeMap.parse("5=3,4=1")(g), j) for g, j in pairs_of(graded, fx.RATING)), strict=True
    )
    values = dict((r[0], r[1]) for r in table.rows)
    assert values["Cohen's kappa"] == pytest.approx(cohen_kappa_score(labels, human), abs=1e-12)
    assert values["Krippendorff's alpha (interval)"] == pytest.approx(
        krippendorff.alpha(reliability_data=[labels, human], level_of_measurement="interval"), abs=1e-12
    )
    assert "Krippendorff's alpha: ordinal" in mapped.summary()


def test_heatmap_title_shows_the_kappa_of_the_labels_shown(graded, fx):
    pairs = [(GradeMap.parse("5=3,4=1")(g), j) for g, j in pairs_of(graded, fx.RATING)]
    ag = Agreement.from_pairs(pairs, min_relevant=2, name="mapped")
    labels, human = zip(*pairs, strict=True)
    assert f"κ = {cohen_kappa_score(labels, human):.3f}," in ag.count_matrix().title
    assert "grade ≥" not in ag.count_matrix().title  # not a binarised kappa
    unmapped = Agreement.from_pairs(pairs_of(graded, fx.RATING), min_relevant=2)
    assert (
        f"κ = {unmapped.binary(unmapped.best_threshold()).kappa:.3f} (grade ≥"
        in unmapped.count_matrix().title
    )


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
