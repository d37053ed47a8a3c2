"""Launching a grading job: in this process, in one worker process per device, or as Ray tasks.

:func:`grade_job` is what ``rubric grade`` runs once its options are parsed: it checks the
combination of scale-out options and every input before a model loads or a worker starts, then
grades (:func:`rubric.grading.job.run_shard`) and, with workers or Ray, merges the parts.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

from rubric.errors import UserError
from rubric.grading.engine import GradeStats
from rubric.grading.job import GradeJob, run_shard
from rubric.grading.workers import parse_devices, run_ray, run_workers

Report = Callable[[str], None]


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def grade_job(
    job: GradeJob,
    output: Path,
    *,
    shard: str | None = None,
    devices: str | None = None,
    workers: int = 0,
    ray: bool = False,
    ray_address: str | None = None,
    report: Report = _stderr,
) -> GradeStats:
    """The whole run: in this process, in one worker process per device (``devices`` /
    ``workers``), or as ``workers`` Ray tasks; the parts are merged into ``output``."""
    if ray_address is not None and not ray:
        raise UserError("--ray-address: only with --ray")
    if ray:
        if shard is not None or devices is not None or not workers:
            raise UserError("--ray: give --workers N (the number of shards), and no --shard or --devices")
        if job.backend == "openai":
            raise UserError("--ray: only for the local backends (openai: --concurrency)")
        job.check()
        gpus = job.backend_options.get("device", "auto") != "cpu"
        report(f"grading {workers} shards as Ray tasks, one {'GPU' if gpus else 'CPU'} each")
        return run_ray(job, workers, gpus, output, report, ray_address)
    if devices is not None or workers:
        if shard is not None:
            raise UserError("--shard with --devices/--workers: the workers split the queries themselves")
        if job.backend == "openai":
            raise UserError("--devices/--workers: for the local backends (use --concurrency with openai)")
        job.check()
        names = parse_devices(devices, workers, job.backend_options.get("device", "auto"))
        report(f"grading with {len(names)} workers on {', '.join(names)}")
        return run_workers(job, names, output, report)
    return run_shard(job, shard=shard, output=output, progress=True, report=report)
