"""``rubric.grade``: grading from Python (a notebook, a script) without files in between.

    import rubric
    graded = rubric.grade("passages.jsonl.gz", "questions.jsonl.gz",
                          "QuestionSelfRatedUnanswerablePromptWithChoices",
                          "hf-seq2seq", model="google/flan-t5-small", cache="responses.sqlite")
    graded.queries[0].paragraphs[0].exam_grades      # the same records `rubric grade` writes
    graded.stats.summary(); graded.stats.failed      # counts, and every pair that failed

The same engine as the command (cache, fast rating, batching across queries, failures per pair),
in memory: for files with resume, locks and workers use :class:`rubric.grading.job.GradeJob`
with :func:`rubric.grading.launch.grade_job`, or the command.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from rubric.data.models import QueryWithFullParagraphList, TestBank
from rubric.grading.engine import Engine, GradeStats, items_by_query
from rubric.grading.runner import CHUNK_PAIRS
from rubric.llm.base import Backend
from rubric.llm.cache import ResponseCache
from rubric.prompting.prompts import Prompt, get_prompt


@dataclass
class Graded:
    """The graded queries and what it took (``stats.failed`` lists the pairs without a grade)."""

    queries: list[QueryWithFullParagraphList]
    stats: GradeStats

    def write(self, path: str | Path) -> int:
        """Write the graded passages file (atomically); returns the number of queries."""
        from rubric.data.jsonl import write_passages

        return write_passages(path, self.queries)


def grade(
    passages: str | Path | Iterable[QueryWithFullParagraphList],
    bank: str | Path | Iterable[TestBank] | None,
    prompts: str | Prompt | Sequence[str | Prompt],
    backend: Backend | str = "hf-seq2seq",
    *,
    queries: str | Path | dict[str, str] | None = None,
    model: str | None = None,
    cache: str | Path | ResponseCache | None = None,
    fast: bool = True,
    prompt_files: Sequence[str | Path] = (),
    chunk_pairs: int = CHUNK_PAIRS,
    **backend_options: Any,
) -> Graded:
    """Grade every (passage, item) pair of ``bank`` -- or, with ``bank=None``, every (passage,
    query) pair with direct prompts and the texts of ``queries`` -- and return the graded queries.

    ``passages``, ``bank`` and ``queries`` are paths or loaded objects. ``backend`` is a backend
    object or a registry name (built with ``model`` and ``backend_options``, e.g. ``device="cpu"``).
    ``cache`` is a response cache (path or object); None asks the model everything.
    """
    from rubric.data.jsonl import read_bank, read_passages
    from rubric.data.queries import read_queries
    from rubric.llm.registry import default_model, make_backend

    files = [Path(f) for f in prompt_files]
    chosen = [prompts] if isinstance(prompts, (str, Prompt)) else list(prompts)
    loaded = [p if isinstance(p, Prompt) else get_prompt(p, files) for p in chosen]
    if isinstance(backend, str):
        backend = cast(Backend, make_backend(backend, model or default_model(backend), **backend_options))
    texts: dict[str, str] = {}
    items = None
    if bank is not None:
        banks = list(read_bank(bank) if isinstance(bank, (str, Path)) else bank)
        items = items_by_query(banks)
        texts = {b.query_id: b.query_text for b in banks if b.query_text}
    if queries is not None:
        texts |= read_queries(queries) if isinstance(queries, (str, Path)) else dict(queries)
    responses = ResponseCache(cache) if isinstance(cache, (str, Path)) else cache
    engine = Engine(
        backend, loaded, items=items, query_texts=texts, cache=responses, fast=fast, prompt_files=files
    )
    graded: list[QueryWithFullParagraphList] = []
    chunk: list[QueryWithFullParagraphList] = []
    size = 0
    for q in read_passages(passages) if isinstance(passages, (str, Path)) else passages:
        chunk.append(q)
        size += engine.count_pairs([q])
        if size >= chunk_pairs:
            graded += engine.grade_chunk(chunk)
            chunk, size = [], 0
    if chunk:
        graded += engine.grade_chunk(chunk)
    engine.stats.queries = len(graded)
    return Graded(graded, engine.stats)
