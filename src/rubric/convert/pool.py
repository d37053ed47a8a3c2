"""Pool the top-k of every run plus every judged passage into the passages interchange file.

This is how a test collection enters the workbench: each pooled passage carries its text, the
human judgments (``paragraph_data.judgments``) and where each run ranked it
(``paragraph_data.rankings``, rank in trec_eval order: score descending, docid descending).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from rubric.data.collection import load_texts
from rubric.data.jsonl import write_passages
from rubric.data.models import (
    FullParagraphData,
    Judgment,
    ParagraphData,
    ParagraphRankingEntry,
    QueryWithFullParagraphList,
)
from rubric.data.queries import Queries, read_queries
from rubric.data.table import counted
from rubric.data.trec import NAME_FROM, Qrels, RunSource, read_qrels, read_runs, run_sources
from rubric.errors import UserError, one_of


@dataclass
class PoolReport:
    """What pooling did, for the summary line the CLI prints."""

    queries: int = 0
    passages: int = 0
    judged: int = 0
    runs: list[str] = field(default_factory=list)
    missing_text: list[tuple[str, str]] = field(default_factory=list)
    runs_without_queries: list[str] = field(default_factory=list)

    def lines(self, output: Path, queries: Path) -> list[str]:
        """The summary of pooling into ``output``, after what was left out or looks wrong."""
        out = []
        if self.missing_text:
            first = ", ".join(d for _, d in self.missing_text[:5])
            out.append(f"left out {len(self.missing_text)} pooled passages without text (first: {first})")
        if self.runs_without_queries:
            names = ", ".join(self.runs_without_queries)
            out.append(
                f"warning: no query of {queries} occurs in run(s) {names}: are the query ids the same?"
            )
        summary = f"{self.queries} queries, {self.passages} passages ({self.judged} judged)"
        return [*out, f"wrote {output}: {summary} from {counted(len(self.runs), 'run')}"]


def build_pool(
    queries: Queries,
    run_paths: Sequence[Path | RunSource],
    collection: Sequence[Path],
    *,
    qrels: Qrels | None = None,
    top_k: int = 20,
    name_from: str = "tag",
    allow_missing: bool = False,
) -> tuple[list[QueryWithFullParagraphList], PoolReport]:
    """Build the passages of every query in ``queries`` (in the order of the queries file)."""
    report = PoolReport()
    rankings: dict[tuple[str, str], list[ParagraphRankingEntry]] = {}
    for run in read_runs(run_paths, queries=queries, name_from=name_from):
        name = run.name
        report.runs.append(name)
        if not run.scores:
            report.runs_without_queries.append(name)
        for qid in queries:
            for rank, (docid, score) in enumerate(run.ranking(qid)[:top_k], start=1):
                entry = ParagraphRankingEntry(
                    method=name, paragraphId=docid, queryId=qid, rank=rank, score=score
                )
                rankings.setdefault((qid, docid), []).append(entry)

    judgments: dict[tuple[str, str], list[Judgment]] = {}
    for qid, docs in (qrels or {}).items():
        if qid not in queries:
            continue
        for docid, rel in docs.items():
            judgment = Judgment(paragraphId=docid, query=qid, relevance=rel, titleQuery=queries[qid])
            judgments.setdefault((qid, docid), []).append(judgment)

    pooled = set(rankings) | set(judgments)
    texts = load_texts(collection, wanted={docid for _, docid in pooled})
    report.missing_text = sorted(key for key in pooled if key[1] not in texts)
    if report.missing_text and not allow_missing:
        first = ", ".join(docid for _, docid in report.missing_text[:5])
        raise UserError(
            f"{{collection}}: no text for {len(report.missing_text)} pooled passages (first: {first}); "
            "add the file that holds them, or pass {allow_missing} to leave them out",
            "allow_missing",
            "collection",
        )

    by_query: dict[str, list[tuple[str, str]]] = {}
    for key in pooled:
        if key[1] in texts:
            by_query.setdefault(key[0], []).append(key)

    def order(key: tuple[str, str]) -> tuple[int, str]:
        """Best rank over all runs first (judged-only passages last), then docid."""
        ranks = [r.rank for r in rankings.get(key, [])]
        return (min(ranks) if ranks else top_k + 1, key[1])

    out: list[QueryWithFullParagraphList] = []
    for qid in queries:
        keys = by_query.get(qid)
        if not keys:
            continue
        paragraphs = []
        for key in sorted(keys, key=order):
            docid = key[1]
            paragraphs.append(
                FullParagraphData(
                    paragraph_id=docid,
                    text=texts[docid],
                    paragraph="",
                    paragraph_data=ParagraphData(
                        judgments=judgments.get(key, []), rankings=rankings.get(key, [])
                    ),
                )
            )
            report.judged += bool(judgments.get(key))
        out.append(QueryWithFullParagraphList(queryId=qid, paragraphs=paragraphs))
        report.queries += 1
        report.passages += len(paragraphs)
    return out, report


def pool_inputs(
    queries: Path | Queries,
    runs: Sequence[Path],
    collection: Sequence[Path],
    *,
    qrels: Path | None = None,
    top_k: int = 20,
    name_from: str = "tag",
    allow_missing: bool = False,
) -> tuple[list[QueryWithFullParagraphList], PoolReport]:
    """Pool ``runs`` (files or directories) and the judged passages of ``qrels``, reading every
    input; ``queries`` is a queries file or ``{qid: text}``.

    The options are checked before any file is read; with neither a run nor qrels there is
    nothing to pool. `rubric convert runs` and :func:`rubric.pool` both pool through here.
    """
    one_of("name_from", name_from, NAME_FROM)
    run_paths = run_sources(runs, name_from)
    if not run_paths and qrels is None:
        raise UserError("give at least one run ({runs} or arguments) or {qrels}", "runs", "qrels")
    texts = dict(queries) if isinstance(queries, dict) else read_queries(queries)
    judged = read_qrels(qrels) if qrels is not None else None
    return build_pool(
        texts,
        run_paths,
        collection,
        qrels=judged,
        top_k=top_k,
        name_from=name_from,
        allow_missing=allow_missing,
    )


def pool_file(
    queries: Path,
    runs: Sequence[Path],
    collection: Sequence[Path],
    output: Path,
    *,
    qrels: Path | None = None,
    top_k: int = 20,
    name_from: str = "tag",
    allow_missing: bool = False,
) -> list[str]:
    """`rubric convert runs`: :func:`pool_inputs` written to ``output``; the summary lines
    (:meth:`PoolReport.lines`)."""
    pool, report = pool_inputs(
        queries, runs, collection, qrels=qrels, top_k=top_k, name_from=name_from, allow_missing=allow_missing
    )
    write_passages(output, pool)
    return report.lines(output, queries)
