"""Launching a grading job: in this process, in one worker process per device, or as Ray tasks.

:func:`grade_job` is what ``rubric grade`` runs once its options are parsed: it checks the
combination of scale-out options and every input before a model loads or a worker starts, then
grades (:func:`rubric.grading.job.run_shard`) and, with workers or Ray, merges the parts.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

from rubric.errors import UserError
from rubric.grading.engine import GradeStats
from rubric.grading.job import GradeJob, Plan, run_shard
from rubric.grading.shards import parse_shard
from rubric.grading.workers import parse_devices, run_ray, run_workers

log = logging.getLogger(__name__)


def grade_job(
    job: GradeJob,
    output: Path,
    *,
    shard: str | None = None,
    devices: str | None = None,
    workers: int = 0,
    ray: bool = False,
    ray_address: str | None = None,
) -> GradeStats:
    """The whole run: in this process, in one worker process per device (``devices`` /
    ``workers``), or as ``workers`` Ray tasks; the parts are merged into ``output``.

    The scale-out options are checked first, then every input (:meth:`GradeJob.plan`: prompts,
    bank, backend and one read of the passages file) before a model loads or a worker starts.
    Inputs that cannot be read twice (``-``, pipes) are copied once into a temporary folder,
    since the job reads them more than once. An output that is written in place (``-``, a fifo)
    gets the graded file when the run is complete; such a run keeps no partial file to resume.

    Grading in place (``output`` is the passages file) with a query selection or a shard keeps
    the other queries as they are (``keep_unselected``); with workers or Ray, whose parts hold
    only graded queries, that combination is refused before any work.
    """
    from rubric.data.files import is_input, open_output, readable_again, writes_in_place

    if (job.query_ids is not None or shard is not None) and is_input(output, job.passages):
        if devices is not None or workers or ray:
            raise UserError(
                f"{{output}} {output}: grading the passages file in place with "
                "{query}/{queries_file} and {devices}/{workers}/{ray} would drop the queries not "
                "selected; grade without workers, or write to another file",
                "output",
                "devices",
                "workers",
                "ray",
                "query",
                "queries_file",
            )
        job = replace(job, keep_unselected=True)
    _check_scale(job, shard=shard, devices=devices, workers=workers, ray=ray, ray_address=ray_address)
    with tempfile.TemporaryDirectory(prefix="rubric-grade-") as tmp:
        inputs = {f: getattr(job, f) for f in ("passages", "bank", "queries") if getattr(job, f) is not None}
        job = replace(job, **{f: readable_again(path, tmp) for f, path in inputs.items()})
        scaled = ray or devices is not None or bool(workers)
        plan = job.plan(None if scaled else shard)
        for query_id in plan.absent:
            log.warning("--query/--queries: query %s is not in %s", query_id, inputs["passages"])
        if scaled:  # before any worker starts (one process checks its plan when it runs it)
            job.check(plan)
        scale = dict(devices=devices, workers=workers, ray=ray, ray_address=ray_address)
        if not writes_in_place(output):
            return _launch(job, plan, output, shard=shard, **scale)
        graded = Path(tmp) / "graded.jsonl"
        stats = _launch(job, plan, graded, shard=shard, **scale)
        with open(graded, encoding="utf-8") as source, open_output(output) as target:
            shutil.copyfileobj(source, target)
        return stats


def _check_scale(
    job: GradeJob, *, shard: str | None, devices: str | None, workers: int, ray: bool, ray_address: str | None
) -> None:
    """The combination of scale-out options, before any file is read."""
    if ray_address is not None and not ray:
        raise UserError("{ray_address}: only with {ray}", "ray_address", "ray")
    if ray:
        if shard is not None or devices is not None or not workers:
            raise UserError(
                "{ray}: give {workers} N (the number of shards), and no {shard} or {devices}",
                "ray",
                "workers",
                "shard",
                "devices",
            )
        if job.backend == "openai":
            raise UserError(
                "{ray}: only for the local backends (openai: {concurrency})", "ray", "concurrency"
            )
    elif devices is not None or workers:
        if shard is not None:
            raise UserError(
                "{shard} with {devices}/{workers}: the workers split the queries themselves",
                "shard",
                "devices",
                "workers",
            )
        if job.backend == "openai":
            raise UserError(
                "{devices}/{workers}: for the local backends (use {concurrency} with openai)",
                "devices",
                "workers",
                "concurrency",
            )
    parse_shard(shard)


def _launch(
    job: GradeJob,
    plan: Plan,
    output: Path,
    *,
    shard: str | None,
    devices: str | None,
    workers: int,
    ray: bool,
    ray_address: str | None,
) -> GradeStats:
    if ray:
        gpus = job.backend_options.get("device", "auto") != "cpu"
        log.info("grading %d shards as Ray tasks, one %s each", workers, "GPU" if gpus else "CPU")
        return run_ray(job, workers, gpus=gpus, output=output, address=ray_address)
    if devices is not None or workers:
        names = parse_devices(devices, workers, job.backend_options.get("device", "auto"))
        log.info("grading with %d workers on %s", len(names), ", ".join(names))
        return run_workers(job, names, output)
    return run_shard(job, shard=shard, output=output, progress=True, plan=plan)
