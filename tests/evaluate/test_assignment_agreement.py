"""`rubric evaluate meta --confusion`: the 3x3 automatic x manual nugget assignment matrix."""

from __future__ import annotations

import json
import random

import pytest
from sklearn.metrics import cohen_kappa_score, confusion_matrix

from rubric.evaluate.assignment_agreement import LABELS, assignment_confusion


def _assigned(path, labels: dict[tuple[str, str], list[str]]):
    with open(path, "w") as f:
        for (run, query), assignment in labels.items():
            nuggets = [
                {
                    "nugget_id": f"{query}/n{i}",
                    "nugget_text": f"nugget {i}",
                    "importance": "vital",
                    "assignment": a,
                }
                for i, a in enumerate(assignment)
            ]
            f.write(json.dumps({"run_id": run, "query_id": query, "nuggets": nuggets}) + "\n")
    return path


@pytest.fixture
def pair(tmp_path):
    rng = random.Random(3)
    keys = [(f"run{r}", f"q{q}") for r in range(4) for q in range(5)]
    manual = {k: [rng.choice(LABELS) for _ in range(6)] for k in keys}
    auto = {k: [a if rng.random() < 0.6 else rng.choice(LABELS) for a in v] for k, v in manual.items()}
    return (
        _assigned(tmp_path / "auto.jsonl", auto),
        _assigned(tmp_path / "manual.jsonl", manual),
        auto,
        manual,
    )


def test_counts_and_kappa_equal_scikit_learn(pair):
    auto_path, manual_path, auto, manual = pair
    result = assignment_confusion(auto_path, manual_path)
    a = [lab for k in auto for lab in auto[k]]
    m = [lab for k in manual for lab in manual[k]]
    assert result.matrix() == confusion_matrix(a, m, labels=list(LABELS)).tolist()
    assert result.n == 120
    assert result.kappa == pytest.approx(cohen_kappa_score(a, m), abs=1e-12)
    assert sum(result.share(x, y) for x in LABELS for y in LABELS) == pytest.approx(1.0)


def test_one_sided_triples_are_counted_not_matched(pair, tmp_path):
    auto_path, _, auto, manual = pair
    fewer = dict(list(manual.items())[:-1])  # the manual file lacks one (run, query): 6 nuggets
    result = assignment_confusion(auto_path, _assigned(tmp_path / "m2.jsonl", fewer))
    assert (result.n, result.only_first, result.only_second) == (114, 6, 0)


def test_cli_table_and_heatmap(cli, user_error, pair, tmp_path):
    pytest.importorskip("matplotlib")
    auto_path, manual_path, _, _ = pair
    plot = tmp_path / "confusion.png"
    r = cli("evaluate", "meta", "--confusion", auto_path, manual_path, "--plot", plot)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "auto.jsonl\tmanual.jsonl\tcount\tshare"
    assert len(lines) == 10 and sum(int(line.split("\t")[2]) for line in lines[1:]) == 120
    assert "Cohen's kappa" in r.stderr
    assert plot.read_bytes()[:4] == b"\x89PNG"
    latex = cli("evaluate", "meta", "--confusion", auto_path, manual_path, "-f", "latex")
    assert "\\%" in latex.stdout and "partial\\_support" in latex.stdout
    user_error(cli("evaluate", "meta", "--confusion", auto_path), "two ASSIGNED files")
    user_error(
        cli("evaluate", "meta", "--confusion", auto_path, manual_path, "-R", manual_path), "--reference"
    )
    other = _assigned(tmp_path / "other.jsonl", {("x", "qq"): ["support"]})
    user_error(cli("evaluate", "meta", "--confusion", auto_path, other), "no (run, query, nugget)")
