"""TREC RAG answer files (2024 and 2025 formats), read into one record per system and topic.

RAG 2024: ``{run_id, topic_id, topic, references, answer: [{text, citations}]}``; RAG 2025 keeps
``run_id``, ``topic_id``/``narrative_id`` and ``topic``/``narrative`` under ``metadata``. The file
format lives here, below the phases, because two of them read it: ``convert rag`` turns answers into
passages (:mod:`rubric.convert.rag`) and ``grade assign`` assigns nuggets to whole answers
(:mod:`rubric.grading.assign`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rubric.data.jsonl import iter_json_lines
from rubric.errors import UserError


@dataclass
class RagAnswer:
    """One system's answer to one topic, as a list of (sentence, citations)."""

    run_id: str
    topic_id: str
    topic: str
    sentences: list[tuple[str, list]]
    references: list[str]


def _field(rec: dict, names: Sequence[str]) -> object | None:
    meta = rec.get("metadata") if isinstance(rec.get("metadata"), dict) else {}
    for name in names:
        for source in (rec, meta):
            if source.get(name) is not None:
                return source[name]
    return None


def read_answers(path: str | Path) -> list[RagAnswer]:
    """Read a RAG 2024 or 2025 answer file; errors name file:line and the missing field."""
    answers = []
    for line_no, rec in iter_json_lines(path):
        if not isinstance(rec, dict):
            raise UserError(f"{path}:{line_no}: expected a JSON object (a RAG answer record)")
        run_id = _field(rec, ("run_id",))
        topic_id = _field(rec, ("topic_id", "narrative_id", "query_id"))
        topic = _field(rec, ("topic", "narrative", "query"))
        answer = rec.get("answer")
        for name, value in (("run_id", run_id), ("topic_id", topic_id), ("answer", answer)):
            if value is None:
                raise UserError(f"{path}:{line_no}: missing field {name!r}")
        if not isinstance(answer, list):
            raise UserError(f"{path}:{line_no}: 'answer' must be a list of {{text, citations}}")
        sentences = []
        for i, s in enumerate(answer):
            if isinstance(s, str):
                sentences.append((s, []))
            elif isinstance(s, dict) and isinstance(s.get("text"), str):
                sentences.append((s["text"], list(s.get("citations") or [])))
            else:
                raise UserError(f"{path}:{line_no}: answer[{i}] has no 'text'")
        answers.append(
            RagAnswer(
                run_id=str(run_id),
                topic_id=str(topic_id),
                topic=str(topic or ""),
                sentences=sentences,
                references=[str(r) for r in rec.get("references") or []],
            )
        )
    return answers
