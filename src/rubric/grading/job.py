"""A grading job: the library function that ``rubric grade``, its ``--shard`` jobs, its
``--workers`` processes and its Ray tasks all run.

:class:`GradeJob` holds everything a run needs as plain, picklable values (paths, names,
options), so a spawned worker or a Ray task on another node receives the job, not loaded data.
:func:`run_shard` grades one shard (or everything) into one output file with lock and resume.
:func:`rubric.grading.launch.grade_job` runs it in this process, in worker processes or as Ray
tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.data.models import QueryWithFullParagraphList
from rubric.errors import UserError
from rubric.grading.engine import Engine, GradeStats, check_prompts, items_by_query
from rubric.grading.runner import CHUNK_PAIRS, Kept, OutputLock, grade_file
from rubric.grading.shards import parse_shard, shard_of
from rubric.prompting.prompts import Prompt, get_prompt

Report = Callable[[str], None]


@dataclass(frozen=True)
class Loaded:
    """A job's prompts and targets, read from its files."""

    prompts: list[Prompt]
    items: dict[str, list] | None  # None: direct prompts (grade against the query text)
    query_texts: dict[str, str]


@dataclass(frozen=True)
class GradeJob:
    """What to grade with what: one ``rubric grade`` invocation, minus where the output goes.

    ``bank`` grades (passage, item) pairs with question / nugget / verify prompts; without a
    bank, ``queries`` gives the query texts for direct prompts. ``model`` None takes the
    backend's default model (:data:`rubric.llm.registry.DEFAULT_MODELS`). ``cache`` None is the
    default response cache; ``use_cache`` False asks everything.
    """

    passages: Path
    prompts: tuple[str, ...]
    bank: Path | None = None
    queries: Path | None = None
    prompt_files: tuple[Path, ...] = ()
    backend: str = "hf-seq2seq"
    model: str | None = None
    backend_options: dict[str, Any] = field(default_factory=dict)
    fast: bool = True
    cache: Path | None = None
    use_cache: bool = True
    checkpoint_pairs: int = CHUNK_PAIRS
    query_ids: tuple[str, ...] | None = None  # grade only these queries (--query/--queries); None: all
    keep_unselected: bool = False  # in place: queries not graded are copied to the output unchanged

    def __post_init__(self) -> None:
        """Option ranges fail when the job is made, before any file is read or model loaded."""
        from rubric.llm.packaged import check_installed
        from rubric.llm.registry import backend_class, check_backend_options

        check_backend_options(self.backend_options)
        backend_class(self.backend)  # an unknown backend, or one whose extra is not installed
        check_installed(self.model_name)  # a packaged model whose weights package is not
        if self.checkpoint_pairs < 1:
            raise UserError(f"--checkpoint-pairs: must be at least 1, got {self.checkpoint_pairs}")

    @property
    def inputs(self) -> list[Path]:
        """The files whose identity is part of the run's fingerprint."""
        return [self.passages, *(p for p in (self.bank, self.queries) if p is not None)]

    @property
    def model_name(self) -> str:
        from rubric.llm.registry import default_model

        return self.model or default_model(self.backend)

    def load(self) -> Loaded:
        """Prompts, bank items and query texts, every input checked before a model loads."""
        from rubric.data.jsonl import read_banks
        from rubric.llm.base import PairGrader
        from rubric.llm.registry import backend_class, check_model_fits

        if (self.bank is None) == (self.queries is None):
            raise ValueError("a GradeJob needs a bank (exam grading) or queries (direct grading), not both")
        prompts = [get_prompt(name, list(self.prompt_files)) for name in self.prompts]
        # an unknown backend and prompts it cannot ask are errors before any model loads
        pairs_only = issubclass(backend_class(self.backend), PairGrader)
        if self.bank is not None:
            banks = read_banks(self.bank)
            items: dict[str, list] | None = items_by_query(banks)
            texts = {b.query_id: b.query_text for b in banks if b.query_text}
        else:
            from rubric.data.queries import read_queries

            items, texts = None, read_queries(self.queries)
        check_prompts(
            prompts, items is None, items or {}, list(self.prompt_files), self.backend if pairs_only else None
        )
        check_model_fits(self.backend, self.model_name)
        return Loaded(prompts, items, texts)

    def passages_of(self, shard: str | None) -> Iterator[QueryWithFullParagraphList]:
        """The queries of the passages file (of one shard) to grade, read one line at a time."""
        for q in self.to_output(shard):
            if not isinstance(q, Kept):
                yield q

    def to_output(self, shard: str | None) -> Iterator[QueryWithFullParagraphList | Kept]:
        """What goes into the output, in file order: the queries to grade, and with
        ``keep_unselected`` the others as :class:`~rubric.grading.runner.Kept`."""
        from rubric.data.jsonl import read_passages

        part = parse_shard(shard)
        wanted = None if self.query_ids is None else set(self.query_ids)
        for q in read_passages(self.passages):
            if (wanted is None or q.queryId in wanted) and (
                part is None or shard_of(q.queryId, part[1]) == part[0]
            ):
                yield q
            elif self.keep_unselected:
                yield Kept(q)

    def absent_queries(self) -> list[str]:
        """Selected queries (``query_ids``) the passages file lacks; an error when it has none."""
        if self.query_ids is None:
            return []
        from rubric.data.jsonl import read_passages
        from rubric.data.query_selection import QuerySelection

        present = [q.queryId for q in read_passages(self.passages)]
        return QuerySelection(self.query_ids).check_present(present, str(self.passages))

    def plan(self, loaded: Loaded, shard: str | None) -> int:
        """Pairs to grade in a shard; direct prompts need the text of every query (said here,
        before a model loads)."""
        total, seen = 0, False
        for q in self.passages_of(shard):
            seen = True
            if loaded.items is None:
                if q.queryId not in loaded.query_texts:
                    raise UserError(
                        f"--queries {self.queries}: no text for query {q.queryId} of {self.passages}"
                    )
                total += len(q.paragraphs) * len(loaded.prompts)
            else:
                total += len(q.paragraphs) * len(loaded.items.get(q.queryId, [])) * len(loaded.prompts)
        if not seen and shard is None and self.query_ids is None:  # a shard may hold no query
            raise UserError(f"{self.passages}: holds no passages to grade (an empty file)")
        return total

    def open_cache(self) -> Any:
        from rubric.llm.cache import open_cache

        return open_cache(self.cache, self.use_cache)

    def check(self) -> None:
        """Everything that can be wrong with the inputs, before any model loads or worker starts."""
        loaded = self.load()
        self.plan(loaded, None)
        cache = self.open_cache()
        if cache is not None:
            cache.close()


def run_shard(
    job: GradeJob,
    *,
    shard: str | None = None,
    device: str | None = None,
    output: Path,
    progress: bool = False,
    threads: int = 0,
    report: Report | None = None,
) -> GradeStats:
    """Grade one shard (``"i/n"``, None = all queries) into ``output`` with lock and resume.

    ``device`` overrides the job's device (one worker per GPU); ``threads`` > 0 sets torch's
    threads (CPU workers share the cores). Module-level, so spawned processes can run it.
    """
    from rubric.llm.registry import make_backend

    loaded = job.load()
    total = job.plan(loaded, shard)
    cache = job.open_cache()
    options = dict(job.backend_options) | {"progress": False}
    if device is not None:
        options["device"] = device
    if threads and device == "cpu":
        import torch

        torch.set_num_threads(threads)
    with OutputLock(output):  # a second run on this output stops before its model loads
        backend = make_backend(job.backend, job.model_name, **options)
        engine = Engine(
            backend,
            loaded.prompts,
            items=loaded.items,
            query_texts=loaded.query_texts,
            cache=cache,
            fast=job.fast,
            prompt_files=list(job.prompt_files),
        )
        stats = grade_file(
            engine,
            job.to_output(shard),
            output,
            job.inputs,
            total_pairs=total,
            progress_factory=_bar if progress else None,
            chunk_pairs=job.checkpoint_pairs,
            report=report,
            lock=False,
            selection=[sorted(job.query_ids or ()), shard] if job.keep_unselected else None,
        )
        stats.kernels.append(backend.kernel_summary())
        return stats


def _bar(total: int | None) -> Any:
    """Progress in pairs on stderr (:func:`rubric.llm.progress.progress`); the summary line follows."""
    from rubric.llm.progress import progress

    return progress(total, "grading", "pair")
