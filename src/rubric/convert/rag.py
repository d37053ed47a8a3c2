"""TREC RAG answers (2024 and 2025 formats) as passages, so RAG systems are graded like runs.

RAG 2024: ``{run_id, topic_id, topic, references, answer: [{text, citations}]}``; RAG 2025 keeps
``run_id``, ``topic_id``/``narrative_id`` and ``topic``/``narrative`` under ``metadata``. Each
answer becomes one or more passages of its query: one per answer sentence by default, or
consecutive sentences packed into passages of at most N words (``words:N``; a sentence longer
than N is cut). The run id is the ranking ``method`` and passage order is the rank, so Rubric-Cover
and every other run-based measure apply to RAG answers unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from rubric.data.answers import RagAnswer, read_answers
from rubric.data.jsonl import write_passages
from rubric.data.models import (
    FullParagraphData,
    ParagraphData,
    ParagraphRankingEntry,
    QueryWithFullParagraphList,
)
from rubric.data.queries import write_queries
from rubric.data.table import counted
from rubric.errors import UserError


def parse_segment(spec: str) -> int | None:
    """``sentence`` -> None (one passage per sentence); ``words:N`` -> N."""
    if spec == "sentence":
        return None
    m = re.fullmatch(r"words:(\d+)", spec)
    if not m or int(m.group(1)) < 1:
        raise UserError(f"{{segment}}: expected 'sentence' or 'words:N' with N >= 1, got {spec!r}", "segment")
    return int(m.group(1))


def segment(sentences: list[tuple[str, list]], max_words: int | None) -> list[tuple[str, list]]:
    """Group sentences into passages; citations of the grouped sentences are merged (in order)."""
    sentences = [(t.strip(), c) for t, c in sentences if t.strip()]
    if max_words is None:
        return sentences
    passages: list[tuple[str, list]] = []
    words: list[str] = []
    cites: list = []
    for text, c in sentences:
        toks = text.split()
        if words and len(words) + len(toks) > max_words:
            passages.append((" ".join(words), cites))
            words, cites = [], []
        while len(toks) > max_words:  # one sentence longer than a passage
            passages.append((" ".join(toks[:max_words]), list(c)))
            toks = toks[max_words:]
        words.extend(toks)
        cites.extend(x for x in c if x not in cites)
    if words:
        passages.append((" ".join(words), cites))
    return passages


def answers_to_passages(
    answers: Iterable[RagAnswer], max_words: int | None = None
) -> tuple[list[QueryWithFullParagraphList], dict[str, str]]:
    """Passages grouped by topic (first-seen order) and the topics' texts ``{qid: text}``."""
    by_topic: dict[str, list[FullParagraphData]] = {}
    topics: dict[str, str] = {}
    seen: set[tuple[str, str]] = set()
    for ans in answers:
        if (ans.run_id, ans.topic_id) in seen:
            raise UserError(f"run {ans.run_id} answers topic {ans.topic_id} twice")
        seen.add((ans.run_id, ans.topic_id))
        topics.setdefault(ans.topic_id, ans.topic)
        pieces = segment(ans.sentences, max_words)
        for rank, (text, cites) in enumerate(pieces, start=1):
            pid = f"{ans.run_id}/{ans.topic_id}/{rank}"
            cited = [ans.references[c] for c in cites if isinstance(c, int) and 0 <= c < len(ans.references)]
            ranking = ParagraphRankingEntry(
                method=ans.run_id,
                paragraphId=pid,
                queryId=ans.topic_id,
                rank=rank,
                score=float(len(pieces) - rank + 1),
            )
            by_topic.setdefault(ans.topic_id, []).append(
                FullParagraphData(
                    paragraph_id=pid,
                    text=text,
                    paragraph="",
                    paragraph_data=ParagraphData(judgments=[], rankings=[ranking]),
                    citations=cited,
                )
            )
    return [QueryWithFullParagraphList(queryId=q, paragraphs=ps) for q, ps in by_topic.items()], topics


def answers_file(
    paths: Sequence[Path], output: Path, *, segment: str = "sentence", queries_out: Path | None = None
) -> str:
    """`rubric convert rag`: the answers of every file as passages in ``output`` (and the topics
    as queries JSON in ``queries_out``); the summary line.

    ``segment`` (:func:`parse_segment`) is checked before any file is read; files without a
    single answer are an error (a wrong file, not an empty run).
    """
    max_words = parse_segment(segment)
    records = [a for path in paths for a in read_answers(path)]
    if not records:
        raise UserError(f"{', '.join(map(str, paths))}: no RAG answers in the file(s)")
    pool, topics = answers_to_passages(records, max_words)
    write_passages(output, pool)
    if queries_out:
        write_queries(queries_out, topics)
    runs = {a.run_id for a in records}
    n = sum(len(q.paragraphs) for q in pool)
    return f"wrote {output}: {len(pool)} topics, {n} passages from {counted(len(runs), 'run')}"
