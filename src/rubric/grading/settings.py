"""The settings of one ``rubric grade exam`` / ``direct`` run, and the run they describe.

The CLI declares these settings as options (its ``GradeOptions`` subclasses
:class:`GradeSettings` and adds only the declarations); turning them into a
:class:`~rubric.grading.job.GradeJob`, launching it and summing up what it did is the library's
job, so both grading commands share one body. Nothing heavy is imported at module level (the
CLI imports this module on start-up); the job's modules load when a run starts.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rubric.data.table import counted
from rubric.errors import at_least
from rubric.extras import require
from rubric.llm.settings import ApiSettings, LocalSettings
from rubric.outcome import Outcome

if TYPE_CHECKING:
    from rubric.grading.engine import GradeStats


@dataclass(frozen=True)
class GradeOutcome(Outcome):
    """The outcome of a grading run, with its counts (``stats.failed``: every failed pair)."""

    stats: GradeStats | None = None


@dataclass
class GradeSettings:
    """How to grade: output, prompts' files, backend and model, scale-out, cache and queries.

    ``query`` grades only these query ids (with the ``subset`` file of :meth:`grade`, the
    union); ``api`` reaches an OpenAI-compatible server (``backend="openai"``).
    """

    output: Path
    prompt_file: list[Path] | None = None
    backend: str = "hf-seq2seq"
    model: str | None = None
    local: LocalSettings = field(default_factory=LocalSettings)
    fast: bool = True
    cache: Path | None = None
    no_cache: bool = False
    shard: str | None = None
    checkpoint_pairs: int = 4096
    devices: str | None = None
    workers: int = 0
    ray: bool = False
    ray_address: str | None = None
    query: list[str] | None = None
    api: ApiSettings = field(default_factory=ApiSettings)

    def grade(
        self,
        passages: Path,
        prompts: list[str],
        bank: Path | None = None,
        queries: Path | None = None,
        subset: Path | None = None,
        *,
        given: tuple[str, ...] = (),
    ) -> GradeOutcome:
        """Grade ``passages`` with ``prompts`` against ``bank`` items (exam grading) or the texts
        of ``queries`` (direct grading) into :attr:`output`; notes go to the ``rubric`` logger.

        The query selection and every option range are checked when the job is made, before a
        file is read or a model loaded. The pairs that failed after every retry are the
        outcome's failures (a re-run grades only them). ``given`` names the inputs that a Python
        caller handed over as objects (see :class:`~rubric.grading.job.GradeJob`).
        """
        from rubric.data.query_selection import QuerySelection
        from rubric.grading.job import GradeJob
        from rubric.grading.launch import grade_job

        if self.ray:
            require("ray", "{ray}")
        selected = QuerySelection.from_options(self.query, subset)
        at_least("workers", self.workers, 0)
        job = GradeJob(  # checks the ranges of the options
            passages=passages,
            prompts=tuple(prompts),
            bank=bank,
            queries=queries,
            prompt_files=tuple(self.prompt_file or ()),
            backend=self.backend,
            model=self.model,
            fast=self.fast,
            cache=self.cache,
            use_cache=not self.no_cache,
            checkpoint_pairs=self.checkpoint_pairs,
            query_ids=selected.ids,
            backend_options=self.local.backend_options() | dataclasses.asdict(self.api),
            given=given,
        )
        stats = grade_job(
            job,
            self.output,
            shard=self.shard,
            devices=self.devices,
            workers=self.workers,
            ray=self.ray,
            ray_address=self.ray_address,
        )
        failed = [str(f) for f in stats.failed] if stats.failures else []
        summary = [stats.summary(), f"wrote {self.output}: {counted(stats.queries, 'query')}"]
        return GradeOutcome(summary, failed, "pair", stats)
