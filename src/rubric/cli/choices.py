"""The fixed choices of options as ``Literal`` types, so that Typer lists them in ``--help``
(``-f, --format [tsv|csv|json|latex|trec_eval]``), refuses any other value before the command
runs and offers them to shell completion.

Each is the tuple of the library function that takes the value (it checks it again for its
Python callers); ``tests/cli/test_choices.py`` keeps the two equal through :data:`MIRRORS`. An
option whose values are open (``--label nth:M``, ``--device cuda:N``, ``--backend``) stays text.
"""

from __future__ import annotations

from typing import Literal

ReportFormat = Literal["tsv", "json", "latex"]
LeaderboardFormat = Literal["tsv", "csv", "json", "latex", "trec_eval"]
AgreementFormat = Literal["tsv", "md", "latex"]
TableFormat = Literal["tsv", "csv", "md"]
QueriesFormat = Literal["json", "tsv", "jsonl"]
ImportFormat = Literal["list", "tqa", "genq"]
BankKind = Literal["questions", "nuggets"]
BankStyle = Literal["dl", "car"]
NameFrom = Literal["tag", "file"]
Test = Literal["t", "randomization", "bootstrap"]
Correction = Literal["holm", "bonferroni", "none"]
EstimateMode = Literal["finite", "ppi_py"]
FeatureSet = Literal["all", "questions", "nuggets", "direct"]
Classifier = Literal["extra-trees", "random-forest"]
GradesAs = Literal["grades", "judgments", "both"]
Dtype = Literal["auto", "float32", "bfloat16", "float16"]
Attention = Literal["auto", "eager", "sdpa", "flex"]
ComputeType = Literal["auto", "float32", "int8", "int8_float16", "float16"]

#: Each choice type and the library tuple (``module:NAME``) it mirrors; the three without one are
#: checked by their library function's own test (``read_queries``' writer, ``generate``'s style,
#: ``import_bank``'s format).
MIRRORS: list[tuple[object, str]] = [
    (ReportFormat, "rubric.evaluate.report:FORMATS"),
    (ReportFormat, "rubric.evaluate.estimate:FORMATS"),
    (LeaderboardFormat, "rubric.evaluate.leaderboards:FORMATS"),
    (AgreementFormat, "rubric.verify.agreement_report:FORMATS"),
    (BankKind, "rubric.bank.ids:KINDS"),
    (NameFrom, "rubric.data.trec:NAME_FROM"),
    (Test, "rubric.evaluate.paired:TESTS"),
    (Correction, "rubric.evaluate.paired:CORRECTIONS"),
    (EstimateMode, "rubric.evaluate.ppi:MODES"),
    (FeatureSet, "rubric.evaluate.learn:FEATURE_SETS"),
    (Classifier, "rubric.evaluate.learn:CLASSIFIERS"),
    (GradesAs, "rubric.grading.judgments:AS"),
    (Dtype, "rubric.llm.hf_common:DTYPES"),
    (Attention, "rubric.llm.hf_common:ATTENTIONS"),
    (ComputeType, "rubric.llm.ct2_models:COMPUTE_TYPES"),
]
