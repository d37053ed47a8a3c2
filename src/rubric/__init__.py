"""rubric-workbench: evaluate retrieval, generation and RAG systems with LLM-graded rubrics.

The public API, one verb per step, each taking paths or loaded objects and returning data or a
report object (``to_tsv()``, ``to_json()``, ``to_latex()``)::

    import rubric
    passages = rubric.pool("topics.json", ["runs/"], "collection.tsv", qrels="qrels.txt")
    graded = rubric.grade(passages, "nuggets.jsonl", prompts="NuggetSelfRatedPrompt", backend="embedding")
    graded.to_dataframe()                     # one row per grade (pandas)
    board = rubric.leaderboard(rubric.qrels(graded), ["runs/"], "nDCG@10", level=4)
    board                                     # a short table; board.to_dataframe(), board.to_tsv()

Library modules log to the ``rubric`` logger (the CLI shows its messages on stderr); a notebook
sees warnings through Python's default handler and can turn on the rest with
``logging.getLogger("rubric").setLevel(logging.INFO)`` plus a handler.

Names load on first use (PEP 562), so ``import rubric`` loads nothing heavy: torch, transformers
and openai only when a backend is built, pytrec_eval and scipy when something is scored.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.2.0"

if TYPE_CHECKING:  # what type checkers and IDEs see; at run time the names load on first use
    from rubric.api import pool, qrels
    from rubric.data.grade_filter import GradeFilter
    from rubric.data.grade_table import GradeRow, read_graded
    from rubric.data.jsonl import read_bank, read_passages, write_bank, write_passages
    from rubric.data.queries import read_queries
    from rubric.data.query_selection import QuerySelection
    from rubric.data.trec import read_qrels
    from rubric.errors import UserError
    from rubric.evaluate.correlation import Correlation, correlate
    from rubric.evaluate.coverage import cover
    from rubric.evaluate.estimate import EstimateReport, estimate
    from rubric.evaluate.leaderboards import leaderboard
    from rubric.evaluate.meta import meta_evaluate
    from rubric.evaluate.nuggets import NuggetReport, nugget_scores
    from rubric.evaluate.qrels import QrelsResult
    from rubric.evaluate.report import Report, Score
    from rubric.evaluate.significance import Comparisons, compare
    from rubric.grading.api import Graded, grade

_EXPORTS = {
    # files
    "read_passages": "rubric.data.jsonl",
    "write_passages": "rubric.data.jsonl",
    "read_bank": "rubric.data.jsonl",
    "write_bank": "rubric.data.jsonl",
    "read_queries": "rubric.data.queries",
    "read_qrels": "rubric.data.trec",
    "read_graded": "rubric.data.grade_table",
    # phases
    "pool": "rubric.api",
    "grade": "rubric.grading.api",
    "Graded": "rubric.grading.api",
    "GradeRow": "rubric.data.grade_table",
    "qrels": "rubric.api",
    "leaderboard": "rubric.evaluate.leaderboards",
    "cover": "rubric.evaluate.coverage",
    "correlate": "rubric.evaluate.correlation",
    "compare": "rubric.evaluate.significance",
    "nugget_scores": "rubric.evaluate.nuggets",
    "meta_evaluate": "rubric.evaluate.meta",
    "estimate": "rubric.evaluate.estimate",
    # report objects and choices
    "Report": "rubric.evaluate.report",
    "Score": "rubric.evaluate.report",
    "NuggetReport": "rubric.evaluate.nuggets",
    "Comparisons": "rubric.evaluate.significance",
    "Correlation": "rubric.evaluate.correlation",
    "QrelsResult": "rubric.evaluate.qrels",
    "EstimateReport": "rubric.evaluate.estimate",
    "GradeFilter": "rubric.data.grade_filter",
    "QuerySelection": "rubric.data.query_selection",
    "UserError": "rubric.errors",
}
__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'rubric' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
