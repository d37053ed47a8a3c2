"""Phase 4: turn grades into system scores (qrels, leaderboards, Cover, nuggets, correlation).

The Python API the CLI calls; files or loaded objects, with the CLI's defaults::

    from rubric.evaluate import leaderboard, cover, correlate
    report = leaderboard("qrels.txt", ["runs/"], "nDCG@10,AP(rel=2),RR(rel=2)@10", queries=["1037798"])
    print(report.to_tsv())            # also .to_json(), .to_latex(), .values("nDCG@10")
    cover("graded.jsonl.gz", k=20, bank="questions.jsonl.gz")          # min_grade 4, as the CLI
    correlate(report, "official.json")                                 # or {"run": rank} dicts
    meta_evaluate([("auto", read_score_table("auto.tsv"))], read_score_table("manual.tsv"))

Names are imported lazily (PEP 562) so that ``rubric.data.labels`` and the CLI stay light:
pytrec_eval and scipy load only when a function that needs them is used. Never imports torch
or transformers.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "leaderboard": "rubric.evaluate.leaderboards",
    "evaluate": "rubric.evaluate.leaderboards",
    "evaluate_runs": "rubric.evaluate.leaderboards",
    "Evaluation": "rubric.evaluate.leaderboards",
    "QuerySelection": "rubric.data.query_selection",
    "GradeFilter": "rubric.data.grade_filter",
    "Official": "rubric.evaluate.correlation",
    "Report": "rubric.evaluate.report",
    "Score": "rubric.evaluate.report",
    "Evaluator": "rubric.evaluate.treceval",
    "parse_measures": "rubric.evaluate.measures",
    "build_qrels": "rubric.evaluate.qrels",
    "cover": "rubric.evaluate.coverage",
    "correlate": "rubric.evaluate.correlation",
    "meta_evaluate": "rubric.evaluate.meta",
    "MetaReport": "rubric.evaluate.meta",
    "read_score_table": "rubric.evaluate.score_tables",
    "ScoreTable": "rubric.evaluate.score_tables",
    "assignment_confusion": "rubric.evaluate.assignment_agreement",
    "read_official": "rubric.evaluate.correlation",
    "sweep": "rubric.evaluate.correlation",
    "compare": "rubric.evaluate.significance",
    "LabelRule": "rubric.data.labels",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rubric.evaluate' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
