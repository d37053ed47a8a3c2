"""Judgments as grades (the original workbench's exam_import_judgments): a qrels file's labels
written into a graded passages file, as direct grades, as judgments, or both.

Why: human or other-system labels (NIST qrels, UMBRELA qrels, a learned model's labels) then
travel with the passages and every report treats them like any prompt's grades: `evaluate qrels
--prompt-class QrelImport`, `verify agreement` against the stored judgments, Cover, the review
page. A grade is recorded as the original recorded it: ``llm`` "imported", the label as
``self_ratings``, ``relevance_label`` and ``answer``, ``correctAnswered`` when it is above 0,
prompt type ``direct_grading``, and the qrels file named in ``prompt_info``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from rubric.data.jsonl import read_passages, write_passages
from rubric.data.models import Grades, Judgment, PromptInfo, QueryWithFullParagraphList
from rubric.data.queries import read_queries
from rubric.data.trec import read_qrels
from rubric.errors import UserError, one_of

IMPORT_PROMPT_CLASS = "QrelImport"
AS = ("grades", "judgments", "both")


def import_judgments_file(
    graded: str | Path,
    qrels: str | Path,
    output: str | Path,
    *,
    prompt_class: str = IMPORT_PROMPT_CLASS,
    as_: str = "grades",
    append_judgments: bool = False,
    topics: str | Path | None = None,
) -> list[str]:
    """`rubric grade import`: ``graded`` with the labels of ``qrels`` added to the passages they
    judge, written to ``output`` (one query in memory at a time); returns the summary lines.

    ``as_``: ``grades`` (a direct grade per judged passage; one of the same prompt class and
    ``llm`` "imported" is replaced), ``judgments`` (the passage's judgments replaced by the label,
    or extended with ``append_judgments``) or ``both``. ``topics``: query texts for the
    judgments' ``titleQuery``.
    """
    one_of("as_", as_, AS)
    if not prompt_class.strip():
        raise UserError("{prompt_class}: must not be empty", "prompt_class")
    if append_judgments and as_ == "grades":
        raise UserError(
            "{append_judgments}: only with {as_} judgments or {as_} both", "append_judgments", "as_"
        )
    labels = read_qrels(qrels)
    titles = read_queries(topics) if topics is not None else {}
    counts = {"grades": 0, "judgments": 0, "passages": 0}
    seen: set[tuple[str, str]] = set()
    info = PromptInfo.model_validate({"prompt_class": prompt_class, "qrels_file": str(qrels)})

    def updated() -> Iterator[QueryWithFullParagraphList]:
        for query in read_passages(graded):
            judged = labels.get(query.queryId, {})
            for p in query.paragraphs:
                counts["passages"] += 1
                if p.paragraph_id not in judged:
                    continue
                label = judged[p.paragraph_id]
                seen.add((query.queryId, p.paragraph_id))
                if as_ in ("grades", "both"):
                    kept = [
                        g
                        for g in p.grades or []
                        if not (g.prompt_class == prompt_class and g.llm == "imported")
                    ]
                    grade = Grades(
                        correctAnswered=label > 0,
                        answer=str(label),
                        llm="imported",
                        llm_options={},
                        prompt_info=info,
                        self_ratings=label,
                        relevance_label=label,
                        prompt_type="direct_grading",
                    )
                    p.grades = [*kept, grade]
                    counts["grades"] += 1
                if as_ in ("judgments", "both"):
                    judgment = Judgment(
                        paragraphId=p.paragraph_id,
                        query=query.queryId,
                        relevance=label,
                        titleQuery=titles.get(query.queryId),
                    )
                    old = p.paragraph_data.judgments if append_judgments else []
                    p.paragraph_data.judgments = [*old, judgment]
                    counts["judgments"] += 1
            yield query
        if not counts["passages"]:
            raise UserError(f"{graded}: holds no passages to import labels into")

    write_passages(output, updated())
    unmatched = sum(len(docs) for docs in labels.values()) - len(seen)
    lines = [
        f"imported {len(seen)} labels of {qrels} into {counts['passages']} passages "
        f"({counts['grades']} grades as {prompt_class}, {counts['judgments']} judgments); wrote {output}"
    ]
    if unmatched:
        lines.append(f"{unmatched} qrels lines name a passage that {graded} does not hold (not imported)")
    return lines
