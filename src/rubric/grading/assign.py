"""Listwise nugget assignment (AutoNuggetizer "AutoAssign", TREC 2024 RAG §4.2.1, Figure 3).

Each system answer (a whole RAG answer, or a run's passages for a query joined in rank order) is
shown to the LLM with at most 10 nuggets per call; the LLM labels each nugget support,
partial_support or not_support. A batch whose answer stays unreadable (wrong number of labels,
unknown label) after the bounded re-asks, or unanswered after the backend's retries, leaves
``assignment: null`` on its nuggets and is counted in ``failed_batches``: scoring refuses such
records rather than reading them as not_support.

ASSIGNED file, one JSON object per (run, query)::

    {"run_id", "query_id", "query_text", "llm", "llm_options", "prompt_class",
     "nuggets": [{"nugget_id", "nugget_text", "importance", "assignment"}], "failed_batches"}
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
from rubric.errors import UserError, at_least
from rubric.llm.ask import ask_parsed, backend_info
from rubric.llm.base import Request, TextGenerator
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.lists import parse_labels
from rubric.llm.outcome import Outcome
from rubric.llm.settings import ChatSettings
from rubric.prompting.prompts import Prompt, get_prompt

LABELS = ("support", "partial_support", "not_support")
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
    return [
        SystemAnswer(a.run_id, a.topic_id, a.topic, " ".join(t.strip() for t, _ in a.sentences if t.strip()))
        for a in read_answers(path)
    ]


def _answers_from_passages(path: str | Path) -> list[SystemAnswer]:
    out = []
    for query in read_passages(path):
        by_run: dict[str, list[tuple[int, str]]] = {}
        for p in query.paragraphs:
            for r in p.paragraph_data.rankings:
                if r.queryId in (None, "", query.queryId):
                    by_run.setdefault(r.method, []).append((r.rank, p.text))
        for run, ranked in by_run.items():
            text = "\n".join(t for _, t in sorted(ranked, key=lambda x: x[0]))
            out.append(SystemAnswer(run, query.queryId, "", text))
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
    backend: TextGenerator,
    *,
    batch: int = 10,
    retries: int = 2,
    query_texts: dict[str, str] | None = None,
    cache: ResponseCache | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """ASSIGNED records (answers of queries without nuggets are skipped) and failure messages.

    Every answer goes to ``cache`` as it arrives, so a rerun pays only for failed batches.
    """
    nuggets = nuggets_by_query(banks)
    texts = {b.query_id: b.query_text for b in banks if b.query_text}
    texts.update(query_texts or {})
    records: list[dict[str, Any]] = []
    jobs: list[tuple[int, int, list[dict[str, Any]]]] = []
    requests: list[Request] = []
    for ans in answers:
        if ans.query_id not in nuggets:
            continue
        query_text = ans.query_text or texts.get(ans.query_id, "")
        if not query_text:
            raise UserError(
                f"no query text for query {ans.query_id}: give {{queries}} (the answers and bank lack it)",
                "queries",
            )
        entries = [dict(n, assignment=None) for n in nuggets[ans.query_id]]
        records.append(
            {
                "run_id": ans.run_id,
                "query_id": ans.query_id,
                "query_text": query_text,
                **backend_info(backend),
                "prompt_class": prompt.name,
                "nuggets": entries,
                "failed_batches": 0,
            }
        )
        for start in range(0, len(entries), batch):
            chunk = entries[start : start + batch]
            jobs.append((len(records) - 1, start, chunk))
            requests.append(
                Request(
                    prompt.render(
                        query=query_text,
                        context=ans.text,
                        nuggets=json.dumps([n["nugget_text"] for n in chunk], ensure_ascii=False),
                        count=str(len(chunk)),
                    ),
                    system=prompt.system,
                )
            )
    asked = ask_parsed(
        CachedBackend(backend, cache),
        requests,
        lambda i, a: parse_labels(a, ALLOWED, len(jobs[i][2])),
        retries=retries,
        desc="assign",
    )
    failures = []
    for (rec_index, start, chunk), res in zip(jobs, asked, strict=True):
        record = records[rec_index]
        if res.value is None:
            record["failed_batches"] += 1
            where = f"run {record['run_id']} query {record['query_id']}"
            failures.append(f"{where} nuggets {start + 1}-{start + len(chunk)}: {res.error}")
            continue
        for entry, label in zip(chunk, res.value, strict=True):
            entry["assignment"] = label
    return records, failures


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
) -> Outcome:
    """`rubric grade assign`: the ASSIGNED records of every answer written to ``output``.

    The options are checked before any file is read or request sent; the batches that failed
    after every retry are the outcome's failures (left unassigned in the output).
    """
    at_least("batch", batch, 1)
    llm.check()
    banks = read_banks(bank)
    system_answers = read_answers_to_assign(answers, banks, bank)
    chosen = get_prompt(prompt, prompt_files)
    backend, responses = llm.backend()
    texts = read_queries(queries) if queries else None
    records, failures = assign(
        system_answers,
        banks,
        chosen,
        backend,
        batch=batch,
        retries=llm.parse_retries,
        query_texts=texts,
        cache=responses,
    )
    write_json_lines(output, records)
    runs, nq = len({r["run_id"] for r in records}), len({r["query_id"] for r in records})
    lines = [f"wrote {len(records)} assignments ({runs} runs, {nq} queries) to {output}"]
    if skipped := len(system_answers) - len(records):
        lines.append(f"skipped {skipped} answers of queries without nuggets in {bank}")
    return Outcome([*lines, backend.stats.summary(backend.model)], failures, "assignment batch")
