"""AutoNuggetizer (TREC 2024 RAG, "The Great Nugget Recall" §4.1): nuggets from relevant passages.

1. Creation (Figure 1): per query, walk the passages judged >= ``min_judgment`` in windows of
   ``window`` (10), each turn asking the LLM to update the running nugget list (1-12 words per
   nugget, at most ``max_nuggets`` = 30). Queries advance in lock-step, so every turn is one
   concurrent batch over all queries.
2. Importance (Figure 2): label the nuggets vital/okay, at most 10 per call.
3. Keep (§4.1.1): sort vital first, stable, so the creation order (by decreasing importance, as
   the prompt asks) breaks ties; keep the first ``keep`` (20).

A window or importance call whose answer stays unreadable (or unanswered) after the bounded
re-asks keeps the previous nugget list / leaves the importance unset; both are counted in the
bank's ``info`` and reported, and unlabelled nuggets are kept (after the labelled ones).

Any text generator of the registry does the asking (``--backend openai``, ``hf-causal``,
``ct2-causal``, ...): a local model gets each window's passages cut by tokens so the prompt fits
its input (:func:`rubric.llm.ask.fitted`), and its answers as castorini/nuggetizer reads them
(Python lists, in fences or not) or as small models write them (``[1] nugget`` lines, JSON,
numbered or bulleted lines; :func:`rubric.llm.lists.parse_list`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.bank.ids import item_id
from rubric.data.jsonl import write_bank
from rubric.data.models import NuggetItem, TestBank
from rubric.data.queries import read_queries
from rubric.data.query_selection import Queries, QuerySelection
from rubric.errors import UserError, at_least
from rubric.llm.ask import AskCounts, ask_parsed, backend_info, fitted
from rubric.llm.base import Request, TextGenerator
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.lists import ParseError, parse_labels, parse_list
from rubric.llm.settings import ChatSettings
from rubric.outcome import Outcome
from rubric.prompting.prompts import Prompt, get_prompt

IMPORTANCE = {"vital": "vital", "okay": "okay", "ok": "okay"}
IMPORTANCE_BATCH = 10  # "at most 10 nuggets are passed to the LLM" (Figure 2)


@dataclass
class QueryState:
    query_id: str
    query_text: str
    passages: list[str]
    nuggets: list[str] = field(default_factory=list)
    failed_windows: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def windows(passages: Sequence[str], size: int) -> list[list[str]]:
    return [list(passages[i : i + size]) for i in range(0, len(passages), size)]


def format_context(passages: Sequence[str]) -> str:
    """``[1] text`` lines, as in Figure 1 (newlines inside a passage become spaces)."""
    return "\n".join(f"[{i}] {' '.join(p.split())}" for i, p in enumerate(passages, start=1))


def create_nuggets(
    states: list[QueryState],
    prompt: Prompt,
    llm: CachedBackend,
    *,
    window: int,
    max_nuggets: int,
    retries: int,
    counts: AskCounts | None = None,
) -> None:
    """Run the iterative creation turns (updates ``states`` in place)."""
    per_query = [windows(s.passages, window) for s in states]
    turns = max((len(w) for w in per_query), default=0)
    for turn in range(turns):
        active = [(s, w[turn]) for s, w in zip(states, per_query, strict=True) if turn < len(w)]
        jobs = [(_creation(prompt, s, max_nuggets), format_context(win)) for s, win in active]
        requests = fitted(llm.backend, jobs, prompt.system)
        asked = ask_parsed(
            llm,
            requests,
            lambda i, a: parse_list(a),
            retries=retries,
            desc=f"nuggetize window {turn + 1} of {turns}",
            counts=counts,
        )
        for (state, _), res in zip(active, asked, strict=True):
            if res.value is None:
                state.failed_windows.append(turn + 1)
                state.errors.append(f"{state.query_id} window {turn + 1}: {res.error}")
            else:
                state.nuggets = res.value[:max_nuggets]


def _creation(prompt: Prompt, state: QueryState, max_nuggets: int) -> Callable[[str], str]:
    """The creation prompt of one query's turn, as a function of its (cut) passages."""
    nuggets = json.dumps(state.nuggets, ensure_ascii=False)
    return lambda context: prompt.render(
        query=state.query_text,
        context=context,
        nuggets=nuggets,
        nuggets_length=str(len(state.nuggets)),
        max_nuggets=str(max_nuggets),
    )


def label_importance(
    states: list[QueryState],
    prompt: Prompt,
    llm: CachedBackend,
    retries: int,
    counts: AskCounts | None = None,
) -> dict[str, list[str | None]]:
    """Importance per query, aligned with its nuggets (``None`` where labelling failed)."""
    jobs: list[tuple[QueryState, int, list[str]]] = []
    for s in states:
        for start in range(0, len(s.nuggets), IMPORTANCE_BATCH):
            jobs.append((s, start, s.nuggets[start : start + IMPORTANCE_BATCH]))
    requests = [
        Request(
            prompt.render(
                query=s.query_text, nuggets=json.dumps(batch, ensure_ascii=False), count=str(len(batch))
            ),
            system=prompt.system,
        )
        for s, _, batch in jobs
    ]
    asked = ask_parsed(
        llm,
        requests,
        lambda i, a: parse_labels(a, IMPORTANCE, len(jobs[i][2])),
        retries=retries,
        desc="importance",
        counts=counts,
    )
    labels: dict[str, list[str | None]] = {s.query_id: [None] * len(s.nuggets) for s in states}
    for (s, start, batch), res in zip(jobs, asked, strict=True):
        if res.value is None:
            s.errors.append(
                f"{s.query_id} importance of nuggets {start + 1}-{start + len(batch)}: {res.error}"
            )
            continue
        labels[s.query_id][start : start + len(batch)] = res.value
    return labels


def select(
    nuggets: Sequence[str], importance: Sequence[str | None], keep: int
) -> list[tuple[str, str | None]]:
    """Vital first, then okay, then unlabelled; stable; the first ``keep``."""
    rank = {"vital": 0, "okay": 1, None: 2}
    ordered = sorted(zip(nuggets, importance, strict=True), key=lambda pair: rank[pair[1]])
    return ordered[:keep]


def nuggetize(
    queries: dict[str, str],
    passages: dict[str, list[str]],
    create_prompt: Prompt,
    *,
    importance_prompt: Prompt,
    backend: TextGenerator,
    window: int = 10,
    max_nuggets: int = 30,
    keep: int = 20,
    retries: int = 2,
    settings: dict[str, Any] | None = None,
    cache: ResponseCache | None = None,
    counts: AskCounts | None = None,
) -> tuple[list[TestBank], list[str]]:
    """One nugget bank per query that has passages; and every failure, one message each.

    Every answer goes to ``cache`` as it arrives, so a rerun pays only for what failed;
    ``counts`` adds up what was asked (one failure message per failed LLM call).
    """
    llm = CachedBackend(backend, cache)
    states = [QueryState(q, queries[q], ps) for q, ps in passages.items() if ps]
    create_nuggets(
        states, create_prompt, llm, window=window, max_nuggets=max_nuggets, retries=retries, counts=counts
    )
    importance = label_importance(states, importance_prompt, llm, retries, counts)
    banks, errors = [], []
    for s in states:
        errors.extend(s.errors)
        chosen = select(s.nuggets, importance[s.query_id], keep)
        items = []
        seen = set()
        for text, label in chosen:
            nid = item_id(s.query_id, text)
            if nid not in seen:
                seen.add(nid)
                items.append(
                    NuggetItem(query_id=s.query_id, nugget_id=nid, nugget_text=text, importance=label)
                )
        info = {
            "generator": "autonuggetizer",
            **backend_info(backend),
            "prompt_class": create_prompt.name,
            "importance_prompt_class": importance_prompt.name,
            **(settings or {}),
            "window": window,
            "max_nuggets": max_nuggets,
            "keep": keep,
            "passages": len(s.passages),
            "windows": len(windows(s.passages, window)),
            "failed_windows": s.failed_windows,
            "unlabelled": sum(label is None for label in importance[s.query_id]),
            "created": len(s.nuggets),
            "trimmed": max(0, len(s.nuggets) - keep),
        }
        banks.append(TestBank(query_id=s.query_id, query_text=s.query_text, info=info, items=items))
    return banks, errors


__all__ = ["nuggetize", "nuggetize_file", "select", "format_context", "ParseError"]


def relevant_passages(
    passages: str | Path,
    texts: dict[str, str],
    qrels: str | Path | None = None,
    min_judgment: int = 1,
    queries: str | Path = "queries",
    *,
    selection: QuerySelection | None = None,
) -> dict[str, list[str]]:
    """The texts of the passages judged at least ``min_judgment`` relevant, per query, each
    passage once: by ``qrels`` (e.g. UMBRELA LLM qrels) or else by the passages' own judgments;
    only the queries of ``selection`` (none of them in ``passages`` is an error).

    Every query of ``passages`` needs a text in ``texts`` (read from ``queries``); no relevant
    passage at all is an error (there would be nothing to nuggetize).
    """
    from rubric.data.jsonl import read_passages
    from rubric.data.trec import read_qrels

    chosen = selection or QuerySelection()

    judged = read_qrels(qrels) if qrels else None
    relevant: dict[str, list[str]] = {}
    seen: set[tuple[str, str]] = set()
    judged_here = 0  # passages of the file with a judgment (in qrels, or their own)
    present: list[str] = []
    for q in chosen.select(read_passages(passages), lambda q: q.queryId):
        present.append(q.queryId)
        if q.queryId not in texts:
            raise UserError(f"{{queries}} {queries}: no text for query {q.queryId} of {passages}", "queries")
        for p in q.paragraphs:
            key = (q.queryId, p.paragraph_id)
            grade = (
                judged.get(q.queryId, {}).get(p.paragraph_id) if judged is not None else p.judgment(q.queryId)
            )
            judged_here += grade is not None
            if grade is not None and grade >= min_judgment and key not in seen:
                seen.add(key)
                relevant.setdefault(q.queryId, []).append(p.text)
    chosen.check_present(present, str(passages))
    if not relevant and judged is not None and not judged_here:
        example = next((f"{q} {d}" for q, docs in judged.items() for d in docs), "none")
        raise UserError(
            f"{{qrels}} {qrels} and the passages {passages} share no (query, passage id) pair (a qrels "
            f"line reads e.g. '{example}'): the qrels judge other passages or other queries, e.g. "
            "segment ids (msmarco_v2.1_doc_..#..) against a pool of other ids",
            "qrels",
        )
    if not relevant:
        source = f"{{qrels}} {qrels}" if qrels else f"the judgments in {passages}"
        raise UserError(
            f"{{min_judgment}} {min_judgment}: no passage is judged that relevant in {source}",
            "min_judgment",
            "qrels",
        )
    return relevant


def nuggetize_file(
    passages: Path,
    queries: Path,
    output: Path,
    llm: ChatSettings,
    *,
    qrels: Path | None = None,
    min_judgment: int = 1,
    window: int = 10,
    max_nuggets: int = 30,
    keep: int = 20,
    create_prompt: str = "AutoNuggetizerCreate",
    importance_prompt: str = "AutoNuggetizerImportance",
    prompt_files: list[Path] | None = None,
    selection: Queries = None,
) -> Outcome:
    """`rubric bank nuggetize`: a nugget bank per query with relevant passages, written to ``output``.

    The options are checked before any file is read or request sent; ``selection`` nuggetizes
    only these queries (``--query``/``--queries``). The LLM calls that failed after every retry
    and re-ask are the outcome's failures (and are counted in each bank's info); the summary line
    counts the same failures.
    """
    for name, value in (("window", window), ("max_nuggets", max_nuggets), ("keep", keep)):
        at_least(name, value, 1)
    llm.check()
    chosen = QuerySelection.of(selection)
    create, importance = get_prompt(create_prompt, prompt_files), get_prompt(importance_prompt, prompt_files)
    texts = read_queries(queries)
    relevant = relevant_passages(passages, texts, qrels, min_judgment, queries, selection=chosen)
    backend, responses = llm.generator()
    settings = {"min_judgment": min_judgment, "judgments": str(qrels) if qrels else "passages"}
    counts = AskCounts()
    banks, failures = nuggetize(
        texts,
        relevant,
        create,
        importance_prompt=importance,
        backend=backend,
        window=window,
        max_nuggets=max_nuggets,
        keep=keep,
        retries=llm.parse_retries,
        settings=settings,
        cache=responses,
        counts=counts,
    )
    write_bank(output, banks)
    vital = sum(getattr(i, "importance", None) == "vital" for b in banks for i in b.items)
    nuggets = sum(len(b.items) for b in banks)
    lines = [f"wrote {nuggets} nuggets ({vital} vital) for {len(banks)} queries to {output}"]
    if without := sum(1 for q in texts if q in chosen and q not in relevant):
        lines.append(f"{without} queries have no passage judged >= {min_judgment} and got no nuggets")
    return Outcome([*lines, counts.summary(backend, "LLM call")], failures, "LLM call")
