"""Phase 1: generate a test bank of questions or nuggets per query (or query facet) with an LLM.

The prompts are the papers' (Workbench Table 1, RUBRIC Table 1, EXAM++ Table 1) with the JSON
instruction; answers are parsed robustly (:mod:`rubric.llm.lists`) and re-asked a bounded
number of times. A topic whose answer stays unreadable or unanswered gets no bank and is
reported by the caller, never written as an empty bank.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rubric.bank.ids import check_kind, item_id
from rubric.data.files import read_text, text_lines
from rubric.data.jsonl import write_bank
from rubric.data.models import NuggetItem, QuestionItem, TestBank
from rubric.data.queries import read_queries
from rubric.errors import UserError, at_least
from rubric.llm.ask import ask_parsed, backend_info
from rubric.llm.base import Request, TextGenerator
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.lists import ParseError, parse_list
from rubric.llm.settings import ChatSettings
from rubric.outcome import Outcome
from rubric.prompting.prompts import Prompt, get_prompt


@dataclass(frozen=True)
class Topic:
    """One query, or one facet (CAR subtopic) of a query, to write a bank for."""

    query_id: str
    query_text: str
    facet_id: str | None = None
    facet_text: str | None = None

    @property
    def label(self) -> str:
        return f"{self.query_id}/{self.facet_id}" if self.facet_id else self.query_id


def build_items(topic: Topic, kind: str, texts: Sequence[str]) -> list[QuestionItem | NuggetItem]:
    """Bank items with ids ``qid[/facet]/md5(text)``; duplicates (same id) are kept once."""
    items: list[QuestionItem | NuggetItem] = []
    seen: set[str] = set()
    for text in texts:
        iid = item_id(topic.query_id, text, topic.facet_id)
        if iid in seen:
            continue
        seen.add(iid)
        if kind == "questions":
            items.append(
                QuestionItem(
                    query_id=topic.query_id, question_id=iid, question_text=text, facet_id=topic.facet_id
                )
            )
        else:
            items.append(
                NuggetItem(query_id=topic.query_id, nugget_id=iid, nugget_text=text, facet_id=topic.facet_id)
            )
    return items


def generate_banks(
    topics: Sequence[Topic],
    prompt: Prompt,
    backend: TextGenerator,
    *,
    kind: str,
    per_query: int = 10,
    parse_retries: int = 2,
    test_collection: str = "",
    cache: ResponseCache | None = None,
) -> tuple[list[TestBank], list[str]]:
    """Banks of the topics that got items, and one message per topic that failed.

    Every answer goes to ``cache`` as it arrives; a rerun asks only what failed.
    """
    requests = [
        Request(
            prompt.render(query=t.query_text, facet=t.facet_text or "", count=str(per_query)),
            system=prompt.system,
        )
        for t in topics
    ]

    def parse(i: int, answer: str) -> list[str]:
        items = parse_list(answer, key=kind)
        if not items:
            raise ParseError("the list is empty")
        return items

    asked = ask_parsed(CachedBackend(backend, cache), requests, parse, retries=parse_retries, desc="bank")
    banks, failures = [], []
    for topic, res in zip(topics, asked, strict=True):
        if res.value is None:
            failures.append(f"{topic.label}: {res.error}")
            continue
        info = {
            "generator": "rubric bank generate",
            **backend_info(backend),
            "prompt_class": prompt.name,
            "prompt_target": kind,
            "prompt_style": prompt.prompt_info.get("prompt_style", ""),
            "format_instruction": "json",
            "attempts": res.attempts,
            "test_collection": test_collection,
        }
        query_text = topic.query_text if not topic.facet_id else f"{topic.query_text} / {topic.facet_text}"
        banks.append(
            TestBank(
                query_id=topic.query_id,
                facet_id=topic.facet_id,
                facet_text=topic.facet_text,
                test_collection=test_collection,
                query_text=query_text,
                info=info,
                items=build_items(topic, kind, res.value),
            )
        )
    return banks, failures


def read_facets(path: str | Path) -> dict[str, list[tuple[str, str]]]:
    """CAR subtopics ``{qid: [(facet_id, facet_text)]}`` from TSV ``qid<TAB>facet_id<TAB>text`` or
    JSON ``{qid: {facet_id: text}}`` / ``{qid: [{"facet_id", "facet_text"}]}``."""
    path = Path(path)
    content = read_text(path)
    out: dict[str, list[tuple[str, str]]] = {}
    if content.lstrip().startswith("{"):
        try:
            data = json.loads(content)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
        for qid, facets in data.items():
            if isinstance(facets, dict):
                out[str(qid)] = [(str(k), str(v)) for k, v in facets.items()]
            elif isinstance(facets, list) and all(isinstance(f, dict) for f in facets):
                try:
                    out[str(qid)] = [(str(f["facet_id"]), str(f["facet_text"])) for f in facets]
                except KeyError as e:
                    raise UserError(f"{path}: query {qid}: a facet has no {e.args[0]!r}") from None
            else:
                raise UserError(f"{path}: query {qid}: expected {{facet_id: text}} or a list of facets")
        return out
    seen: dict[tuple[str, str], int] = {}
    for line_no, line in text_lines(content):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != 3 or not all(c.strip() for c in cols):
            raise UserError(f"{path}:{line_no}: expected 'qid<TAB>facet_id<TAB>facet text'")
        qid, facet = cols[0].strip(), cols[1].strip()
        if (qid, facet) in seen:
            raise UserError(
                f"{path}:{line_no}: facet {facet} of query {qid} again (first on line {seen[qid, facet]})"
            )
        seen[qid, facet] = line_no
        out.setdefault(qid, []).append((facet, cols[2].strip()))
    return out


#: The shipped prompt of each (kind, style).
GENERATE_PROMPTS = {
    ("questions", "dl"): "GenerateQuestionsDL",
    ("nuggets", "dl"): "GenerateNuggetsDL",
    ("questions", "car"): "GenerateQuestionsCAR",
    ("nuggets", "car"): "GenerateNuggetsCAR",
}


def topics(
    texts: dict[str, str],
    style: str = "dl",
    facets: str | Path | None = None,
    queries: str | Path = "queries",
) -> list[Topic]:
    """What to generate for: every query (``dl``), or every subtopic of the ``facets`` file
    (``car``: query title + subtopic; a subtopic of a query not in ``texts`` is an error)."""
    if style not in ("dl", "car"):
        raise UserError(f"{{style}}: expected dl or car, got {style!r}", "style")
    if style == "dl":
        return [Topic(q, t) for q, t in texts.items()]
    if facets is None:
        raise UserError("{facets}: the car style needs the subtopics of each query", "facets")
    facet_map = read_facets(facets)
    unknown = [q for q in facet_map if q not in texts]
    if unknown:
        raise UserError(
            f"{{facets}} {facets}: query {unknown[0]} is not in {{queries}} {queries}", "facets", "queries"
        )
    return [Topic(q, texts[q], f, t) for q, fs in facet_map.items() for f, t in fs]


def generate_bank_file(
    queries: Path,
    output: Path,
    llm: ChatSettings,
    *,
    kind: str = "questions",
    style: str = "dl",
    facets: Path | None = None,
    per_query: int = 10,
    prompt: str | None = None,
    prompt_files: list[Path] | None = None,
    test_collection: str = "",
) -> Outcome:
    """`rubric bank generate`: banks for the queries (or ``facets``) written to ``output``.

    The options are checked before any file is read or request sent; topics that got no bank
    after every retry are the outcome's failures (a re-run asks only them).
    """
    check_kind(kind)
    at_least("items_per_query", per_query, 1)
    llm.check()
    chosen = topics(read_queries(queries), style, facets, queries)
    chosen_prompt = get_prompt(prompt or GENERATE_PROMPTS[(kind, style)], prompt_files)
    backend, responses = llm.generator()
    banks, failures = generate_banks(
        chosen,
        chosen_prompt,
        backend,
        kind=kind,
        per_query=per_query,
        parse_retries=llm.parse_retries,
        test_collection=test_collection,
        cache=responses,
    )
    write_bank(output, banks)
    items = sum(len(b.items) for b in banks)
    wrote = f"wrote {len(banks)} of {len(chosen)} banks ({items} {kind}) to {output}"
    return Outcome([wrote, backend.stats.summary(backend.model)], failures, "query")
