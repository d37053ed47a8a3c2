"""Listwise nugget assignment (AutoNuggetizer "AutoAssign", TREC 2024 RAG §4.2.1, Figure 3).

Each system answer (a whole RAG answer, or a run's passages for a query joined in rank order) is
shown to the LLM with at most 10 nuggets per call; the LLM labels each nugget support,
partial_support or not_support. A batch whose answer stays unreadable (wrong number of labels,
unknown label) after the bounded re-asks, or unanswered after the backend's retries, leaves
``assignment: null`` on its nuggets and is counted in ``failed_batches``: scoring refuses such
records rather than reading them as not_support.

Any text generator of the registry assigns (``--backend openai``, ``hf-causal``, ``ct2-causal``,
...); a local model gets the answer cut by tokens so the prompt fits its input.

``--backend embedding`` is a baseline, not the AutoNuggetizer: no prompt, no LLM; each nugget is
compared with every segment of the answer (an answer sentence, or a run's passage) by the cosine
similarity of their sentence embeddings, and the best segment's 0-5 bucket is put on the 0-2
scale of the labels (:mod:`rubric.llm.embedding`): support from cosine 0.45, partial_support
from 0.25, else not_support. Its records say so (``method``, ``prompt_class`` null) and keep each
nugget's ``similarity``.

ASSIGNED file, one JSON object per (run, query)::

    {"run_id", "query_id", "query_text", "llm", "llm_options", "method", "prompt_class",
     "nuggets": [{"nugget_id", "nugget_text", "importance", "assignment"}], "failed_batches"}

``method`` is ``llm-listwise`` (the AutoNuggetizer's assignment) or ``embedding-baseline``.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric.data.answers import read_answers
from rubric.data.files import input_identity, readable_again
from rubric.data.jsonl import iter_json_lines, read_banks, read_passages, write_json_lines
from rubric.data.models import NuggetItem, TestBank
from rubric.data.queries import read_queries
from rubric.data.query_selection import Queries, QuerySelection
from rubric.data.table import counted
from rubric.errors import UserError, at_least
from rubric.llm.ask import AskCounts, ask_parsed, backend_info, fitted
from rubric.llm.base import Answer, Backend, Failure, ScaleGrader, TextGenerator
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.lists import parse_labels
from rubric.llm.settings import ChatSettings
from rubric.outcome import Outcome
from rubric.prompting.prompts import Prompt, get_prompt

LABELS = ("support", "partial_support", "not_support")
#: The labels of the embedding baseline by grade on the 0-2 scale.
BASELINE_LABELS = ("not_support", "partial_support", "support")
LLM_METHOD, BASELINE_METHOD = "llm-listwise", "embedding-baseline"
ALLOWED = {
    "support": "support",
    "supported": "support",
    "full_support": "support",
    "partial_support": "partial_support",
    "partially_supported": "partial_support",
    "partial": "partial_support",
    "not_support": "not_support",
    "not_supported": "not_support",
    "no_support": "not_support",
    "unsupported": "not_support",
}


@dataclass(frozen=True)
class SystemAnswer:
    """The text of one run's answer to one query."""

    run_id: str
    query_id: str
    query_text: str
    text: str
    segments: tuple[str, ...] = ()  # its sentences (RAG answers) or passages (runs); () = the text

    @property
    def parts(self) -> tuple[str, ...]:
        """What the embedding baseline compares a nugget with: the segments, else the whole text."""
        return self.segments or (self.text,)


def read_system_answers(path: str | Path) -> list[SystemAnswer]:
    """TREC RAG 2024/2025 answer files, or a passages file (grouped by ranking method and query,
    passages joined in rank order), detected from the first record. Standard input or a pipe is
    spooled to a temporary file first, since detecting the format reads the start twice."""
    if input_identity(path) is None:
        with tempfile.TemporaryDirectory(prefix="rubric-answers-") as tmp:
            return read_system_answers(readable_again(path, tmp))
    first = next(iter_json_lines(path), None)
    if first is None:
        raise UserError(f"{path}: the file holds no answers")
    if isinstance(first[1], list):
        return _answers_from_passages(path)
    out = []
    for a in read_answers(path):
        sentences = tuple(t.strip() for t, _ in a.sentences if t.strip())
        out.append(SystemAnswer(a.run_id, a.topic_id, a.topic, " ".join(sentences), sentences))
    return out


def _answers_from_passages(path: str | Path) -> list[SystemAnswer]:
    out = []
    for query in read_passages(path):
        by_run: dict[str, list[tuple[int, str]]] = {}
        for p in query.paragraphs:
            for r in p.paragraph_data.rankings:
                if r.queryId in (None, "", query.queryId):
                    by_run.setdefault(r.method, []).append((r.rank, p.text))
        for run, ranked in by_run.items():
            texts = tuple(t for _, t in sorted(ranked, key=lambda x: x[0]))
            out.append(SystemAnswer(run, query.queryId, "", "\n".join(texts), texts))
    if not out:
        raise UserError(f"{path}: no passage has a ranking (method and rank), so there are no run answers")
    return out


def nuggets_by_query(banks: Sequence[TestBank]) -> dict[str, list[dict[str, Any]]]:
    """The nuggets of each query (facet banks of one query are joined), as ASSIGNED entries."""
    out: dict[str, list[dict[str, Any]]] = {}
    for bank in banks:
        for item in bank.items:
            importance = item.importance if isinstance(item, NuggetItem) else None
            out.setdefault(bank.query_id, []).append(
                {"nugget_id": item.item_id, "nugget_text": item.item_text, "importance": importance}
            )
    return out


def assign(
    answers: Sequence[SystemAnswer],
    banks: Sequence[TestBank],
    prompt: Prompt,
    backend: Backend,
    *,
    batch: int = 10,
    retries: int = 2,
    query_texts: dict[str, str] | None = None,
    cache: ResponseCache | None = None,
    counts: AskCounts | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """ASSIGNED records (answers of queries without nuggets are skipped) and failure messages, one
    per failed batch (LLM) or failed (answer, nugget) (embedding baseline).

    ``backend`` is a text generator (listwise prompts of ``batch`` nuggets) or a
    :class:`~rubric.llm.base.ScaleGrader` (the embedding baseline, which ignores ``prompt``).
    Every answer goes to ``cache`` as it arrives, so a rerun pays only for what failed.
    """
    nuggets = nuggets_by_query(banks)
    texts = {b.query_id: b.query_text for b in banks if b.query_text}
    texts.update(query_texts or {})
    baseline = isinstance(backend, ScaleGrader)
    if not isinstance(backend, ScaleGrader | TextGenerator):
        raise UserError(f"{{backend}} {backend.name}: neither writes text nor grades on a scale", "backend")
    records: list[tuple[SystemAnswer, dict[str, Any]]] = []
    for ans in answers:
        if ans.query_id not in nuggets:
            continue
        query_text = ans.query_text or texts.get(ans.query_id, "")
        if not query_text:
            raise UserError(
                f"no query text for query {ans.query_id}: give {{queries}} (the answers and bank lack it)",
                "queries",
            )
        record = {
            "run_id": ans.run_id,
            "query_id": ans.query_id,
            "query_text": query_text,
            **backend_info(backend),
            "method": BASELINE_METHOD if baseline else LLM_METHOD,
            "prompt_class": None if baseline else prompt.name,
            "nuggets": [dict(n, assignment=None) for n in nuggets[ans.query_id]],
            "failed_batches": 0,
        }
        records.append((ans, record))
    llm = CachedBackend(backend, cache)
    if isinstance(backend, ScaleGrader):
        failures = _assign_by_similarity(records, llm, backend, counts)
    else:
        failures = _assign_listwise(records, prompt, llm, batch=batch, retries=retries, counts=counts)
    return [r for _, r in records], failures


def _assign_listwise(
    records: list[tuple[SystemAnswer, dict[str, Any]]],
    prompt: Prompt,
    llm: CachedBackend,
    *,
    batch: int,
    retries: int,
    counts: AskCounts | None,
) -> list[str]:
    """The AutoNuggetizer's assignment: ``batch`` nuggets per prompt, labels parsed and re-asked."""
    jobs: list[tuple[dict[str, Any], int, list[dict[str, Any]]]] = []
    renders = []
    for ans, record in records:
        entries = record["nuggets"]
        for start in range(0, len(entries), batch):
            chunk = entries[start : start + batch]
            jobs.append((record, start, chunk))
            values = {
                "query": record["query_text"],
                "nuggets": json.dumps([n["nugget_text"] for n in chunk], ensure_ascii=False),
                "count": str(len(chunk)),
            }
            renders.append((lambda context, v=values: prompt.render(**v, context=context), ans.text))
    asked = ask_parsed(
        llm,
        fitted(llm.backend, renders, prompt.system),
        lambda i, a: parse_labels(a, ALLOWED, len(jobs[i][2])),
        retries=retries,
        desc="assign",
        counts=counts,
    )
    failures = []
    for (record, start, chunk), res in zip(jobs, asked, strict=True):
        if res.value is None:
            record["failed_batches"] += 1
            where = f"run {record['run_id']} query {record['query_id']}"
            failures.append(f"{where} nuggets {start + 1}-{start + len(chunk)}: {res.error}")
            continue
        for entry, label in zip(chunk, res.value, strict=True):
            entry["assignment"] = label
    return failures


def _assign_by_similarity(
    records: list[tuple[SystemAnswer, dict[str, Any]]],
    llm: CachedBackend,
    grader: ScaleGrader,
    counts: AskCounts | None,
) -> list[str]:
    """The embedding baseline: each nugget's label from its most similar segment of the answer.
    A nugget whose pairs could not be encoded stays unassigned (its record's ``failed_batches``
    counts it) and is listed."""
    pairs = [
        (entry["nugget_text"], part)
        for ans, record in records
        for entry in record["nuggets"]
        for part in ans.parts
    ]
    from rubric.progress import progress

    bar = progress(len(pairs), "assign (embedding baseline)", "pair")
    try:
        got = iter(llm.grade_pairs(pairs, lambda done: bar.update(len(done))))
    finally:
        bar.close()
    failures = []
    for ans, record in records:
        for entry in record["nuggets"]:
            results = [next(got) for _ in ans.parts]
            failed = next((r for r in results if isinstance(r, Failure)), None)
            if failed is not None:
                record["failed_batches"] += 1
                where = f"run {record['run_id']} query {record['query_id']} nugget {entry['nugget_id']}"
                failures.append(f"{where}: {failed.cause}")
                continue
            best = max((r for r in results if isinstance(r, Answer)), key=lambda r: r.score or 0.0)
            entry["assignment"] = BASELINE_LABELS[grader.grade_on_scale(best, 2)]
            entry["similarity"] = None if best.score is None else round(best.score, 4)
    if counts is not None:
        counts.prompts += len(pairs)
        counts.unanswered += len(failures)
    return failures


def read_answers_to_assign(
    paths: Sequence[str | Path], banks: Sequence[TestBank], bank: str | Path
) -> list[SystemAnswer]:
    """The answers of every file, checked before any LLM call: a run answers a query once, and
    some answered query has nuggets in ``banks`` (read from ``bank``)."""
    answers = [a for path in paths for a in read_system_answers(path)]
    seen: set[tuple[str, str]] = set()
    for a in answers:
        if (a.run_id, a.query_id) in seen:
            raise UserError(
                f"run {a.run_id} answers query {a.query_id} twice in {', '.join(map(str, paths))}"
            )
        seen.add((a.run_id, a.query_id))
    with_nuggets = {b.query_id for b in banks if b.items}
    if not any(a.query_id in with_nuggets for a in answers):
        raise UserError(f"{{bank}} {bank}: none of the answered queries has nuggets in the bank", "bank")
    return answers


def assign_file(
    answers: Sequence[Path],
    bank: Path,
    output: Path,
    llm: ChatSettings,
    *,
    queries: Path | None = None,
    prompt: str = "AutoNuggetizerAssign",
    prompt_files: list[Path] | None = None,
    batch: int = 10,
    selection: Queries = None,
) -> Outcome:
    """`rubric grade assign`: the ASSIGNED records of every answer written to ``output``.

    The options are checked before any file is read or request sent; ``selection`` assigns only
    the answers of these queries (``--query``/``--queries``). The batches that failed after every
    retry and re-ask are the outcome's failures (left unassigned in the output), counted alike in
    the summary line. ``--backend embedding`` writes the labelled embedding baseline instead.
    """
    at_least("batch", batch, 1)
    llm.check(scale_graders=True)
    chosen_queries = QuerySelection.of(selection)
    chosen = get_prompt(prompt, prompt_files)
    banks = read_banks(bank)
    every_answer = read_answers_to_assign(answers, banks, bank)
    system_answers = list(chosen_queries.select(every_answer, lambda a: a.query_id))
    chosen_queries.check_present([a.query_id for a in every_answer], ", ".join(map(str, answers)))
    backend, responses = llm.build(scale_graders=True)
    texts = read_queries(queries) if queries else None
    counts = AskCounts()
    records, failures = assign(
        system_answers,
        banks,
        chosen,
        backend,
        batch=batch,
        retries=llm.parse_retries,
        query_texts=texts,
        cache=responses,
        counts=counts,
    )
    write_json_lines(output, records)
    runs, nq = len({r["run_id"] for r in records}), len({r["query_id"] for r in records})
    what = "embedding-baseline assignments" if isinstance(backend, ScaleGrader) else "assignments"
    lines = [f"wrote {len(records)} {what} ({counted(runs, 'run')}, {counted(nq, 'query')}) to {output}"]
    if skipped := len(system_answers) - len(records):
        lines.append(f"skipped {skipped} answers of queries without nuggets in {bank}")
    one = "nugget pair" if isinstance(backend, ScaleGrader) else "assignment batch"
    return Outcome([*lines, counts.summary(backend, one)], failures, one)
