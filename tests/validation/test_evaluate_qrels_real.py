"""Rubric-Qrels from the original tool's real graded file (LLMJudge dev, FLAN-T5-large grades).

* ``--label max`` equals the best self-rating of each passage, read straight from the JSON.
* TREMA-UNH's LLMJudge submission (submission/description.mkd): the 2nd-best question grade
  (``--label nth:2``) mapped 5 -> 3, 4 -> 1, else 0 has multiclass Cohen's kappa 0.167 against the
  human dev labels; our qrels reproduce it.
"""

from __future__ import annotations

import gzip
import json

from sklearn.metrics import cohen_kappa_score

from rubric.data.trec import read_qrels

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def test_max_labels_and_published_kappa(cli, shared, tmp_path):
    graded = shared("rubric-llm-judge", "all-ExtraTrees", "dev.jsonl.gz")
    human = read_qrels(shared("llm4eval-LLMJudge", "llm4eval_dev_qrel_2024.txt"))
    best = {}
    with gzip.open(graded, "rt") as f:
        for line in f:
            qid, passages = json.loads(line)
            for p in passages:
                (g,) = [g for g in p["exam_grades"] if g["prompt_info"]["prompt_class"] == QSR]
                best[(qid, p["paragraph_id"])] = max(r["self_rating"] for r in g["self_ratings"])
    out = tmp_path / "max.qrels"
    result = cli("evaluate", "qrels", graded, "--prompt-class", QSR, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "7263 lines" in result.stderr
    ours = read_qrels(out)
    assert {(q, d): r for q, docs in ours.items() for d, r in docs.items()} == best

    out2 = tmp_path / "second.qrels"
    result = cli("evaluate", "qrels", graded, "--prompt-class", QSR, "--label", "nth:2", "-o", out2)
    assert result.returncode == 0, result.stderr
    second = read_qrels(out2)
    pairs = [(h, second[q][d]) for q, docs in human.items() for d, h in docs.items()]
    assert len(pairs) == 7263

    def heuristic(grade: int) -> int:
        return 3 if grade >= 5 else 1 if grade >= 4 else 0

    kappa = cohen_kappa_score([h for h, _ in pairs], [heuristic(g) for _, g in pairs])
    assert round(kappa, 3) == 0.167
