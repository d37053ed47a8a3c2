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
from rubric.errors import UserError, at_least
from rubric.grading.engine import Engine, GradeStats, check_prompts, items_by_query
from rubric.grading.runner import CHUNK_PAIRS, Kept, OutputLock, grade_file
from rubric.grading.shards import parse_shard, shard_of
from rubric.prompting.prompts import Prompt, get_prompt


@dataclass(frozen=True)
class Loaded:
    """A job's prompts, targets and backend, read and checked once: a run makes its engine from
    these, so no prompt file, bank or registry entry is read twice."""

    prompts: list[Prompt]
    answer_prompts: dict[str, Prompt]  # the extraction prompt of each verify prompt
    items: dict[str, list] | None  # None: direct prompts (grade against the query text)
    query_texts: dict[str, str]
    backend: Any  # the registry's class of the job's backend
    model: str


@dataclass(frozen=True)
class Plan:
    """What a run of one shard does, found before any model loads: the loaded job, the pairs to
    grade and the selected queries the passages file lacks (one read of the passages file)."""

    loaded: Loaded
    pairs: int
    absent: list[str]
    problem: UserError | None  # an input that stops the run, raised after the absent queries are said

    def checked(self) -> Plan:
        if self.problem is not None:
            raise self.problem
        return self


@dataclass(frozen=True)
class GradeJob:
    """What to grade with what: one ``rubric grade`` invocation, minus where the output goes.

    ``bank`` grades (passage, item) pairs with question / nugget / verify prompts; without a
    bank, ``queries`` gives the query texts for direct prompts. ``model`` None takes the
    backend's default model (:data:`rubric.llm.registry.DEFAULT_MODELS`). ``cache`` None is the
    default response cache; ``use_cache`` False asks everything. ``given`` names the inputs
    (``passages``, ``bank``, ``queries``) a Python caller handed over as objects, written to a
    temporary file: the run's fingerprint takes their content, since that file's path is new
    every call.
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
    given: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        """Option ranges fail when the job is made, before any file is read or model loaded."""
        from rubric.llm.registry import (
            check_backend,
            check_backend_options,
            check_installed_model,
            default_model,
        )

        check_backend_options(self.backend_options, self.backend)
        check_backend(self.backend)  # an unknown backend, or one whose extra is not installed
        check_installed_model(self.backend, self.model or default_model(self.backend))
        at_least("checkpoint_pairs", self.checkpoint_pairs, 1)

    @property
    def inputs(self) -> list[Path | list[str]]:
        """The identity of each input file, part of the run's fingerprint: the file itself (path,
        size, modification time), or the content's digest for an input given as objects."""
        named = [("passages", self.passages), ("bank", self.bank), ("queries", self.queries)]
        return [
            path if name not in self.given else _content(path) for name, path in named if path is not None
        ]

    def load(self) -> Loaded:
        """Prompts, bank items, query texts and the backend's class, every input checked before a
        model loads."""
        from rubric.data.jsonl import read_banks
        from rubric.llm.base import PairGrader, ScaleGrader
        from rubric.llm.registry import backend_class, check_model_fits, default_model

        if (self.bank is None) == (self.queries is None):
            raise ValueError("a GradeJob needs a bank (exam grading) or queries (direct grading), not both")
        prompts = [get_prompt(name, list(self.prompt_files), option="prompts") for name in self.prompts]
        # an unknown backend and prompts it cannot ask are errors before any model loads
        backend = backend_class(self.backend)
        if self.bank is not None:
            banks = read_banks(self.bank)
            items: dict[str, list] | None = items_by_query(banks)
            texts = {b.query_id: b.query_text for b in banks if b.query_text}
        else:
            from rubric.data.queries import read_queries

            items, texts = None, read_queries(self.queries)
        pairs_only = self.backend if issubclass(backend, PairGrader) else None
        answer_prompts = check_prompts(
            prompts,
            direct=items is None,
            items=items or {},
            prompt_files=list(self.prompt_files),
            pair_backend=pairs_only,
            pair_scales=issubclass(backend, ScaleGrader),
        )
        model = self.model or default_model(self.backend)
        check_model_fits(self.backend, model)
        return Loaded(prompts, answer_prompts, items, texts, backend, model)

    def to_output(self, shard: str | None) -> Iterator[QueryWithFullParagraphList | Kept]:
        """What goes into the output, in file order: the queries to grade, and with
        ``keep_unselected`` the others as :class:`~rubric.grading.runner.Kept`."""
        from rubric.data.jsonl import read_passages

        wanted = self._wanted(shard)
        for q in read_passages(self.passages):
            if wanted(q.queryId):
                yield q
            elif self.keep_unselected:
                yield Kept(q)

    def _wanted(self, shard: str | None) -> Callable[[str], bool]:
        """Whether a query is graded: selected (``query_ids``) and in the shard."""
        part = parse_shard(shard)
        selected = None if self.query_ids is None else set(self.query_ids)

        def wanted(query_id: str) -> bool:
            return (selected is None or query_id in selected) and (
                part is None or shard_of(query_id, part[1]) == part[0]
            )

        return wanted

    def plan(self, shard: str | None) -> Plan:
        """Load the job and read the passages file once: the pairs of a shard, the selected
        queries it lacks; direct prompts need the text of every query (said here, before a
        model loads)."""
        from rubric.data.jsonl import read_passages
        from rubric.data.query_selection import QuerySelection

        loaded = self.load()
        wanted = self._wanted(shard)
        total, seen, present = 0, False, []
        problem: UserError | None = None
        for q in read_passages(self.passages):
            present.append(q.queryId)
            if not wanted(q.queryId):
                continue
            seen = True
            if loaded.items is None:
                if q.queryId not in loaded.query_texts and problem is None:
                    problem = UserError(
                        f"{{queries}} {self.queries}: no text for query {q.queryId} of {self.passages}",
                        "queries",
                    )
                total += len(q.paragraphs) * len(loaded.prompts)
            else:
                total += len(q.paragraphs) * len(loaded.items.get(q.queryId, [])) * len(loaded.prompts)
        absent = []
        if self.query_ids is not None:
            absent = QuerySelection(self.query_ids).check_present(present, str(self.passages))
        if not seen and shard is None and self.query_ids is None and problem is None:
            problem = UserError(f"{self.passages}: holds no passages to grade (an empty file)")
        return Plan(loaded, total, absent, problem)

    def open_cache(self) -> Any:
        from rubric.llm.cache import open_cache

        return open_cache(self.cache, use=self.use_cache)

    def check(self, plan: Plan) -> None:
        """Everything that can be wrong with the inputs (``plan``) and the cache, before any model
        loads or worker starts."""
        plan.checked()
        cache = self.open_cache()
        if cache is not None:
            cache.close()


def _content(path: Path) -> list[str]:
    """An input given as objects, by its content."""
    import hashlib

    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return ["given", digest.hexdigest()]


def run_shard(
    job: GradeJob,
    *,
    shard: str | None = None,
    device: str | None = None,
    output: Path,
    progress: bool = False,
    threads: int = 0,
    plan: Plan | None = None,
) -> GradeStats:
    """Grade one shard (``"i/n"``, None = all queries) into ``output`` with lock and resume.

    ``device`` overrides the job's device (one worker per GPU); ``threads`` > 0 sets torch's
    threads (CPU workers share the cores). ``plan`` is the shard's :meth:`GradeJob.plan` when
    the caller made it already (else it is made here: a worker process). Module-level, so
    spawned processes can run it.
    """
    plan = (plan or job.plan(shard)).checked()
    loaded = plan.loaded
    cache = job.open_cache()
    options = dict(job.backend_options) | {"progress": False}
    if device is not None:
        options["device"] = device
    if threads and device == "cpu":
        import torch

        torch.set_num_threads(threads)
    with OutputLock(output):  # a second run on this output stops before its model loads
        backend = loaded.backend.from_options(loaded.model, **options)
        engine = Engine(
            backend,
            loaded.prompts,
            items=loaded.items,
            query_texts=loaded.query_texts,
            cache=cache,
            fast=job.fast,
            answer_prompts=loaded.answer_prompts,
        )
        stats = grade_file(
            engine,
            job.to_output(shard),
            output,
            job.inputs,
            total_pairs=plan.pairs,
            progress_factory=_bar if progress else None,
            chunk_pairs=job.checkpoint_pairs,
            lock=False,
            selection=[sorted(job.query_ids or ()), shard] if job.keep_unselected else None,
        )
        stats.kernels.append(backend.kernel_summary())
        return stats


def _bar(total: int | None) -> Any:
    """Progress in pairs on stderr (:func:`rubric.progress.progress`); the summary line follows."""
    from rubric.progress import progress

    return progress(total, "grading", "pair")
