"""Citation support of RAG answers: each answer sentence against each segment it cites.

The TREC 2024 RAG track judged, besides nuggets, whether the segments an answer cites support
its sentences ("Support Evaluation for the TREC 2024 RAG Track: Comparing Human versus LLM
Judges", Thakur et al., SIGIR 2025): for every (sentence, cited segment) pair, Full Support, Partial
Support or No Support, first by GPT-4o with the prompt ``TREC24Support`` (the paper's), then by
assessors. This module asks any text backend that prompt for every pair; the scores the track
computes from the judgments are in :mod:`rubric.evaluate.support`.

SUPPORT file, one JSON object per (run, topic)::

    {"run_id", "topic_id", "llm", "llm_options", "prompt_class",
     "sentences": [{"text", "citations": [{"docid", "support"}]}], "failed_pairs"}

``support`` is ``full_support``, ``partial_support``, ``no_support``, or ``null`` for a pair the
LLM did not judge after every retry and re-ask (counted in ``failed_pairs``; the scores leave
such an answer out rather than read the gap as no support).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rubric.data.answers import RagAnswer, read_answers
from rubric.data.collection import load_texts
from rubric.data.jsonl import write_json_lines
from rubric.errors import UserError
from rubric.llm.ask import ask_parsed, backend_info
from rubric.llm.base import Request, TextGenerator
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.lists import ParseError
from rubric.llm.settings import ChatSettings
from rubric.outcome import Outcome
from rubric.prompting.prompts import Prompt, get_prompt

_LABEL = re.compile(r"\b(full|partial|no|not)[\s_-]*(support(?:ed)?)\b", re.I)
_NAMES = {"full": "full_support", "partial": "partial_support", "no": "no_support", "not": "no_support"}


def parse_support(answer: str) -> str:
    """The support level an answer names: "Full Support", "Partial Support" or "No Support" (any
    case, ``_`` or ``-`` for the space, "Supported" too). An answer that starts with one is that
    one; otherwise exactly one level may be named (an answer naming two is ambiguous, re-asked)."""
    found = [_NAMES[m.group(1).lower()] for m in _LABEL.finditer(answer)]
    first = _LABEL.match(answer.strip().strip("\"'*`[]().: "))
    if first is not None:
        return _NAMES[first.group(1).lower()]
    if len(set(found)) == 1:
        return found[0]
    if not found:
        raise ParseError(f"no support level (Full / Partial / No Support) in {answer[:80]!r}")
    raise ParseError(f"several support levels in {answer[:80]!r}")


@dataclass(frozen=True)
class CitedAnswer:
    """One run's answer to one topic: its sentences, each with the ids of the segments it cites."""

    run_id: str
    topic_id: str
    sentences: list[tuple[str, list[str]]]


def cited_answers(path: str | Path) -> list[CitedAnswer]:
    """The answers of a TREC RAG answer file with each citation resolved to a segment id.

    RAG 2024 citations are indices into the record's ``references``; an id given as text (as some
    2025 files do) is taken as it is. An index outside the references, or a citation that is
    neither, is an error naming the run, topic and sentence."""
    out = []
    for a in read_answers(path):
        sentences = []
        for n, (text, citations) in enumerate(a.sentences):
            sentences.append((text, [_segment(c, a, n, path) for c in citations]))
        out.append(CitedAnswer(a.run_id, a.topic_id, sentences))
    return out


def _segment(citation: object, answer: RagAnswer, sentence: int, path: str | Path) -> str:
    where = f"{path}: run {answer.run_id} topic {answer.topic_id} sentence {sentence + 1}"
    if isinstance(citation, bool) or not isinstance(citation, (int, str)):
        raise UserError(
            f"{where}: a citation must be an index into 'references' or a segment id, got {citation!r}"
        )
    if isinstance(citation, str):
        return citation
    if not 0 <= citation < len(answer.references):
        raise UserError(
            f"{where}: cites reference {citation}, but the answer has {len(answer.references)} references"
        )
    return answer.references[citation]


def read_cited(paths: Sequence[str | Path]) -> list[CitedAnswer]:
    """Every file's answers; a run answering one topic twice is an error."""
    answers = []
    for path in paths:
        found = cited_answers(path)
        if not found:
            raise UserError(f"{path}: the file holds no answers")
        answers.extend(found)
    seen: set[tuple[str, str]] = set()
    for a in answers:
        if (a.run_id, a.topic_id) in seen:
            raise UserError(
                f"run {a.run_id} answers topic {a.topic_id} twice in {', '.join(map(str, paths))}"
            )
        seen.add((a.run_id, a.topic_id))
    return answers


def segment_texts(answers: Sequence[CitedAnswer], segments: Sequence[str | Path]) -> dict[str, str]:
    """The text of every cited segment, read from ``segments`` (MS MARCO v2.1 segment JSONL or any
    format of :mod:`rubric.data.collection`). Cited segments without a text are an error before
    any LLM call: all of them (the files share no id with the citations) or some (listed)."""
    cited = {d for a in answers for _, cites in a.sentences for d in cites}
    if not cited:
        raise UserError("the answers cite no segment: there is no citation to judge")
    texts = load_texts(segments, cited)
    missing = sorted(cited - texts.keys())
    if missing:
        files = ", ".join(map(str, segments))
        example = ", ".join(missing[:3])
        if len(missing) == len(cited):
            raise UserError(
                f"{{segments}} {files}: none of the {len(cited)} cited segment ids is in it "
                f"(e.g. {example}); give the segment file(s) the answers cite (MS MARCO v2.1 segment "
                "ids look like msmarco_v2.1_doc_11_1429319552#2_3022858430)",
                "segments",
            )
        raise UserError(
            f"{{segments}} {files}: no text for {len(missing)} of the {len(cited)} cited segments "
            f"(e.g. {example})",
            "segments",
        )
    return texts


def judge_support(
    answers: Sequence[CitedAnswer],
    texts: dict[str, str],
    prompt: Prompt,
    backend: TextGenerator,
    *,
    retries: int = 2,
    cache: ResponseCache | None = None,
) -> tuple[list[dict[str, Any]], list[str]]:
    """SUPPORT records (module docstring) and one failure message per pair left unjudged.

    One prompt per (sentence, cited segment) pair; the same pair in two answers is the same prompt
    and, through ``cache``, asked once."""
    records: list[dict[str, Any]] = []
    pairs: list[tuple[dict[str, Any], dict[str, Any], str]] = []  # (record, citation entry, where)
    requests: list[Request] = []
    for a in answers:
        record: dict[str, Any] = {
            "run_id": a.run_id,
            "topic_id": a.topic_id,
            **backend_info(backend),
            "prompt_class": prompt.name,
            "sentences": [],
            "failed_pairs": 0,
        }
        records.append(record)
        for n, (text, cites) in enumerate(a.sentences, start=1):
            entries: list[dict[str, Any]] = []
            record["sentences"].append({"text": text, "citations": entries})
            for docid in cites:
                entry = {"docid": docid, "support": None}
                entries.append(entry)
                pairs.append(
                    (record, entry, f"run {a.run_id} topic {a.topic_id} sentence {n} citation {docid}")
                )
                rendered = prompt.render(statement=text, citation=texts[docid])
                requests.append(Request(rendered, system=prompt.system))
    asked = ask_parsed(
        CachedBackend(backend, cache),
        requests,
        lambda _, answer: parse_support(answer),
        retries,
        desc="support",
    )
    failures = []
    for (record, entry, where), res in zip(pairs, asked, strict=True):
        if res.value is None:
            record["failed_pairs"] += 1
            failures.append(f"{where}: {res.error}")
        else:
            entry["support"] = res.value
    return records, failures


def support_file(
    answers: Sequence[Path],
    segments: Sequence[Path],
    output: Path,
    llm: ChatSettings,
    *,
    prompt: str = "TREC24Support",
    prompt_files: list[Path] | None = None,
) -> tuple[Outcome, list[dict[str, Any]]]:
    """`rubric evaluate support`, the judging half: every (sentence, cited segment) pair judged and
    the SUPPORT records written to ``output``; returns the outcome (failures: the pairs left
    unjudged) and the records, for the scores. Options, prompt, answers and segments are checked
    before any request is sent."""
    llm.check()
    chosen = get_prompt(prompt, prompt_files)
    if chosen.kind != "support":
        raise UserError(
            f"{{prompt}} {prompt}: a {chosen.kind} prompt; support needs a support prompt", "prompt"
        )
    cited = read_cited(answers)
    texts = segment_texts(cited, segments)
    backend, responses = llm.generator()
    records, failures = judge_support(
        cited, texts, chosen, backend, retries=llm.parse_retries, cache=responses
    )
    write_json_lines(output, records)
    n_pairs = sum(len(s["citations"]) for r in records for s in r["sentences"])
    runs = len({r["run_id"] for r in records})
    lines = [
        f"wrote {len(records)} judged answers ({runs} runs, {n_pairs} sentence-citation pairs) to {output}",
        backend.stats.summary(backend.model),
    ]
    return Outcome(lines, failures, "sentence-citation pair"), records
