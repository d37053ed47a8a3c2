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

import os
import shutil
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import fields
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from rubric.data.files import atomic_write
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


def cpu_threads(devices: Sequence[str]) -> int:
    """Torch threads per CPU worker: the cores shared out, unless ``OMP_NUM_THREADS`` decides (0).

    Without this every CPU worker would start one thread per core, and oversubscribed cores make
    torch many times slower (STACK.md measured up to 27x).
    """
    cpu_workers = sum(1 for d in devices if d == "cpu")
    if not cpu_workers or os.environ.get("OMP_NUM_THREADS"):
        return 0
    return max(1, (os.cpu_count() or 1) // cpu_workers)


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
    threads = cpu_threads(devices)
    with ProcessPoolExecutor(max_workers=n, mp_context=get_context("spawn")) as pool:
        futures = {
            pool.submit(job, shard=f"{i}/{n}", device=dev, output=part, threads=threads, **kwargs): (i, dev)
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
        if not any(folder.iterdir()):  # nothing to resume from: leave no trace
            folder.rmdir()
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


def run_ray(
    job: Callable[..., GradeStats],
    shards: int,
    gpus: bool,
    output: Path,
    order: Path,
    report: Callable[[str], None],
    address: str | None,
    **kwargs: Any,
) -> GradeStats:
    """Run the ``shards`` shards as Ray tasks (one GPU each when ``gpus``) and merge them into ``output``.

    ``address`` None starts a private Ray instance on 127.0.0.1; otherwise it names a running
    cluster (``auto``, ``HOST:6379``, ``ray://HOST:10001``). A task grades its shard on its node
    and returns the part's bytes, so only the inputs and the model must be at the same path on
    every node (a shared file system); the driver saves each finished part in ``OUT.workers/`` and
    a rerun skips shards whose part is there. Ray retries a task whose node died.
    """
    try:
        import ray
    except ImportError:
        raise UserError("--ray: Ray is not installed (pip install 'rubric-workbench[ray]')") from None
    folder = parts_folder(output)
    folder.mkdir(parents=True, exist_ok=True)
    parts = [folder / f"part-{i}-of-{shards}.jsonl.gz" for i in range(1, shards + 1)]
    init: dict[str, Any] = {"include_dashboard": False, "configure_logging": False}
    if address is None:
        init["_node_ip_address"] = "127.0.0.1"
    try:
        ray.init(address=address, **init)
    except (ConnectionError, RuntimeError, ValueError) as e:
        raise UserError(f"--ray-address {address}: cannot connect to Ray ({e})") from None
    total = GradeStats()
    try:
        task = ray.remote(_ray_shard).options(num_gpus=1 if gpus else 0, num_cpus=1, max_retries=2)
        pending = {
            task.remote(job, f"{i}/{shards}", "cuda" if gpus else "cpu", kwargs): i
            for i, part in enumerate(parts, start=1)
            if not part.exists()
        }
        if len(pending) < shards:
            report(f"{shards - len(pending)} of {shards} shards were graded by an earlier run")
        while pending:
            (ready,), _ = ray.wait(list(pending), num_returns=1)
            i = pending.pop(ready)
            try:
                stats, text = ray.get(ready)
            except ray.exceptions.RayTaskError as e:
                cause = e.as_instanceof_cause()
                if isinstance(cause, UserError):
                    raise UserError(str(cause)) from None
                raise
            report(f"shard {i}/{shards} (ray): {stats.summary()}")
            _add(total, stats)
            # a part with failed pairs is kept under another name: the next run grades that shard again
            done = parts[i - 1] if not stats.failures else _failed(parts[i - 1])
            with atomic_write(done) as f:
                f.write(text)
    finally:
        ray.shutdown()
    merge_parts([p if p.exists() else _failed(p) for p in parts], output, order)
    if not total.failures:
        shutil.rmtree(folder)
    return total


def _failed(part: Path) -> Path:
    return part.with_name(part.name.replace(".jsonl.gz", ".failed.jsonl.gz"))


def _ray_shard(job: Callable[..., GradeStats], shard: str, device: str, kwargs: dict) -> tuple:
    """In a Ray worker: grade one shard into a local temporary file; returns (stats, the file's text)."""
    import gzip
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rubric-ray-") as tmp:
        out = Path(tmp) / "part.jsonl.gz"
        stats = job(shard=shard, device=device, output=out, **kwargs)
        return stats, gzip.decompress(out.read_bytes()).decode("utf-8")
