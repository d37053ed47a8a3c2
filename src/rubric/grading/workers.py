"""One machine, several devices: one grading process per device, one merged output.

Worker ``i`` of ``n`` grades shard ``i/n`` (the query split of :mod:`rubric.grading.shards`, so a
worker's share does not depend on the file's order) into ``OUT.workers/part-i-of-n.jsonl.gz``
with the usual resume; the parts are then merged in the passages file's order, so the output is
byte for byte the file of a one-process run. Processes, not threads: each owns its model, its
CUDA context and its GIL. They start with ``spawn`` (CUDA cannot be forked) and share the
response cache, which sqlite's WAL mode allows. A killed or failed run keeps ``OUT.workers`` and
resumes from it when rerun with the same devices.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import fields
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.grading.grader import GradeStats
from rubric.grading.shards import merge_parts


def parse_devices(devices: str | None, workers: int, device: str) -> list[str] | None:
    """``--devices a,b`` or ``--workers N`` (on ``--device``) -> one device per worker; None = no workers.

    ``--workers N --device cuda`` (or ``auto`` on a GPU machine) takes GPUs ``cuda:0 .. cuda:N-1``;
    on CPU it starts N CPU processes.
    """
    if devices is not None and workers:
        raise UserError("--devices and --workers: give one of them (--devices names each worker's device)")
    if devices is not None:
        names = [d.strip() for d in devices.split(",")]
        if not all(names):
            raise UserError(
                f"--devices: expected a comma-separated list such as cuda:0,cuda:1, got {devices!r}"
            )
        from rubric.llm.hf_common import resolve_device

        return [resolve_device(d) for d in names]
    if not workers:
        return None
    from rubric.llm.hf_common import resolve_device

    kind = resolve_device(device)
    if kind != "cuda":
        return [kind] * workers
    import torch

    if workers > torch.cuda.device_count():
        raise UserError(f"--workers {workers}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return [f"cuda:{i}" for i in range(workers)]


def parts_folder(output: Path) -> Path:
    return output.with_name(output.name + ".workers")


def run_workers(
    job: Callable[..., GradeStats],
    devices: Sequence[str],
    output: Path,
    order: Path,
    report: Callable[[str], None],
    **kwargs: Any,
) -> GradeStats:
    """Run ``job(shard=..., device=..., output=..., **kwargs)`` once per device and merge the parts.

    ``job`` must be a module-level function (it is pickled by name into spawned processes). The
    merged file is written when every worker finished, also when some pairs failed (as a one-process
    run does); the parts are removed only when nothing failed.
    """
    n = len(devices)
    folder = parts_folder(output)
    folder.mkdir(parents=True, exist_ok=True)
    parts = [folder / f"part-{i}-of-{n}.jsonl.gz" for i in range(1, n + 1)]
    total = GradeStats()
    errors: list[BaseException] = []
    with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(job, shard=f"{i}/{n}", device=dev, output=part, **kwargs): (i, dev)
            for i, (dev, part) in enumerate(zip(devices, parts, strict=True), start=1)
        }
        for fut in as_completed(futures):
            i, dev = futures[fut]
            try:
                stats = fut.result()
            except BaseException as e:  # noqa: BLE001 - reported after the other workers finish
                errors.append(e)
                report(f"worker {i}/{n} ({dev}) stopped: {e}")
                continue
            report(f"worker {i}/{n} ({dev}): {stats.summary()}")
            _add(total, stats)
    if errors:
        user = [e for e in errors if isinstance(e, UserError)]
        if user:
            raise user[0]
        raise errors[0]
    merge_parts(parts, output, order)
    if not total.failures:
        shutil.rmtree(folder)
    return total


def _add(total: GradeStats, part: GradeStats) -> None:
    for f in fields(GradeStats):
        value = getattr(part, f.name)
        setattr(total, f.name, getattr(total, f.name) + value)
