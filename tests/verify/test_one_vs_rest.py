"""The original workbench's GRADED and MERGE tables (one-vs-rest kappa per row)."""

from __future__ import annotations

import random

import pytest
from sklearn.metrics import cohen_kappa_score

from rubric.verify.agreement import Agreement
from rubric.verify.one_vs_rest import graded_table, merge_table


@pytest.fixture
def pairs():
    rng = random.Random(5)
    out = []
    for _ in range(400):
        j = rng.choice([0, 0, 0, 1, 1, 2, 3])
        g = max(0, min(5, j + rng.choice([-2, -1, 0, 1, 2]) + (2 if j >= 2 else 0)))
        out.append((g, j))
    return out


def _row(table, label):
    return dict(zip(table.header, next(r for r in table.rows if r[0] == label), strict=True))


@pytest.mark.parametrize(
    "min_relevant, paired",
    [(1, {5: 2, 4: 2, 3: 1, 2: 1, 1: 1, 0: 0}), (2, {5: 3, 4: 3, 3: 2, 2: 2, 1: 2, 0: 0})],
)
def test_graded_rows_count_and_kappa_one_vs_rest(pairs, min_relevant, paired):
    table = graded_table(Agreement.from_pairs(pairs, min_relevant))
    assert [r[0] for r in table.rows] == ["5", "4", "3", "2", "1", "0"]
    for g, j in paired.items():
        row = _row(table, str(g))
        assert row["kappa_vs"] == str(j)
        for level in range(4):
            assert row[f"judgment={level}"] == sum(1 for a, b in pairs if a == g and b == level)
        expected = cohen_kappa_score([a == g for a, _ in pairs], [b == j for _, b in pairs])
        assert row["kappa"] == pytest.approx(expected, abs=1e-12)


def test_merge_rows(pairs):
    lenient = merge_table(Agreement.from_pairs(pairs, 1))
    assert [(r[0], r[-2]) for r in lenient.rows] == [("4+5", "2+3"), ("1+2+3", "1"), ("0", "0")]
    row = _row(lenient, "4+5")
    assert row["judgment=2+3"] == sum(1 for a, b in pairs if a >= 4 and b >= 2)
    expected = cohen_kappa_score([a >= 4 for a, _ in pairs], [b >= 2 for _, b in pairs])
    assert row["kappa"] == pytest.approx(expected, abs=1e-12)
    strict = merge_table(Agreement.from_pairs(pairs, 2))
    assert [r[-2] for r in strict.rows] == ["3", "2", "-2+-1+0+1"]
    row = _row(strict, "0")
    expected = cohen_kappa_score([a == 0 for a, _ in pairs], [b <= 1 for _, b in pairs])
    assert row["kappa"] == pytest.approx(expected, abs=1e-12)


def test_binary_labels_get_the_binary_graded_table():
    table = graded_table(Agreement.from_pairs([(1, 3), (1, 2), (0, 0), (0, 1), (1, 0)], 2))
    assert [(r[0], r[-2]) for r in table.rows] == [("1", "2"), ("0", "0")]


def test_cli_one_vs_rest_and_plot(cli, tmp_path, pairs):
    pytest.importorskip("matplotlib")
    labels, judgments = tmp_path / "llm.qrels", tmp_path / "human.qrels"
    labels.write_text("".join(f"q1 0 d{i} {g}\n" for i, (g, _) in enumerate(pairs)))
    judgments.write_text("".join(f"q1 0 d{i} {j}\n" for i, (_, j) in enumerate(pairs)))
    plot = tmp_path / "agreement.png"
    r = cli("verify", "agreement", "--labels", labels, "--judgments", judgments, "-j", "2", "--one-vs-rest",
            "--plot", plot)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "GRADED" in r.stdout and "MERGE" in r.stdout
    assert plot.read_bytes()[:4] == b"\x89PNG"
