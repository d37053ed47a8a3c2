"""One machine, several devices: one grading process per device, one merged output; or Ray tasks.

Worker ``i`` of ``n`` grades shard ``i/n`` (the query split of :mod:`rubric.grading.shards`, so a
worker's share does not depend on the file's order) into ``OUT.workers/part-i-of-n.jsonl.gz``
with the usual lock and resume (:func:`rubric.grading.job.run_shard`); the parts are then merged
in the passages file's order, so the output is byte for byte the file of a one-process run.
Processes, not threads: each owns its model, its CUDA context and its GIL. They start with
``spawn`` (CUDA cannot be forked) and share the response cache, which sqlite's WAL mode allows.
A killed or failed run keeps ``OUT.workers`` and resumes from it when rerun with the same devices.

Workers die with their parent, however it ends. SIGINT and SIGTERM reach the parent, which
terminates its workers before it exits; a parent killed with SIGKILL cannot do anything, so each
worker asks the kernel for SIGKILL when its parent dies (Linux ``prctl(PR_SET_PDEATHSIG)``) and,
everywhere, a watchdog thread kills the worker once its parent process is gone. Ray's private
instance gets a watcher process instead (:mod:`rubric.grading.reaper`).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import shutil
import signal
import sys
import threading
import time
import traceback
from collections.abc import Iterator, Sequence
from multiprocessing import get_context
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import Any

from rubric.data.files import atomic_write
from rubric.errors import UserError
from rubric.extras import load
from rubric.grading.engine import GradeStats
from rubric.grading.job import GradeJob, run_shard
from rubric.grading.reaper import reaping_descendants
from rubric.grading.runner import OutputLock
from rubric.grading.shards import merge_parts

log = logging.getLogger(__name__)
PR_SET_PDEATHSIG = 1  # linux/prctl.h
WATCHDOG_SECONDS = 0.5
STOP_SECONDS = 5.0  # how long terminated workers get before SIGKILL


def parse_devices(devices: str | None, workers: int, device: str) -> list[str] | None:
    """``--devices a,b`` or ``--workers N`` (on ``--device``) -> one device per worker; None = no workers.

    ``--workers N --device cuda`` (or ``auto`` on a GPU machine) takes GPUs ``cuda:0 .. cuda:N-1``;
    on CPU it starts N CPU processes.
    """
    if devices is not None and workers:
        raise UserError(
            "{devices} and {workers}: give one of them ({devices} names each worker's device)",
            "devices",
            "workers",
        )
    if devices is not None:
        names = [d.strip() for d in devices.split(",")]
        if not all(names):
            raise UserError(
                f"{{devices}}: expected a comma-separated list such as cuda:0,cuda:1, got {devices!r}",
                "devices",
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
        raise UserError(
            f"{{workers}} {workers}: this machine has {torch.cuda.device_count()} CUDA device(s)", "workers"
        )
    return [f"cuda:{i}" for i in range(workers)]


def cpu_threads(devices: Sequence[str]) -> int:
    """Torch threads per CPU worker: the cores shared out, unless ``OMP_NUM_THREADS`` decides (0).

    Without this every CPU worker would start one thread per core, and when cores are
    oversubscribed torch runs many times slower (up to 27x measured on a 2-core machine).
    """
    cpu_workers = sum(1 for d in devices if d == "cpu")
    if not cpu_workers or os.environ.get("OMP_NUM_THREADS"):
        return 0
    return max(1, (os.cpu_count() or 1) // cpu_workers)


def parts_folder(output: Path) -> Path:
    return output.with_name(output.name + ".workers")


def die_with_parent(parent: int) -> None:
    """Make this process end when process ``parent`` ends, even by SIGKILL.

    Linux delivers SIGKILL to us when the parent dies (``PR_SET_PDEATHSIG``); a parent that died
    before the request took effect is caught by the check after it, and a daemon thread polls
    the parent everywhere else (macOS, or a parent that is a thread of another process).
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(WATCHDOG_SECONDS)
            if os.getppid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="rubric-parent-watchdog", daemon=True).start()


def _worker(
    job: GradeJob, shard: str, device: str, output: Path, *, threads: int, parent: int, conn: Connection
) -> None:
    """In a spawned process: grade one shard and send back ("ok", stats) or why it stopped."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C goes to the parent, which stops us
    try:
        stats = run_shard(job, shard=shard, device=device, output=output, threads=threads)
        conn.send(("ok", stats))
    except UserError as e:
        conn.send(("user", e))  # the error itself: the CLI spells its parameters as flags
    except BaseException as e:  # noqa: BLE001 - reported by the parent, with the traceback
        conn.send(("error", f"{type(e).__name__}: {e}\n{traceback.format_exc()}"))
    finally:
        conn.close()


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """SIGTERM (and SIGHUP) raise ``SystemExit(128 + signal)`` in the main thread while the block
    runs, so ``finally`` clauses stop the workers; the previous handlers come back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def run_workers(job: GradeJob, devices: Sequence[str], output: Path) -> GradeStats:
    """Grade shard ``i/n`` on device ``i`` in ``n`` processes and merge the parts into ``output``.

    The merged file is written when every worker finished, also when some pairs failed (as a
    one-process run does); the parts are removed only when nothing failed.
    """
    n = len(devices)
    folder = parts_folder(output)
    parts = [folder / f"part-{i}-of-{n}.jsonl.gz" for i in range(1, n + 1)]
    total = GradeStats()
    errors: list[str] = []
    user_errors: list[UserError] = []
    threads = cpu_threads(devices)
    ctx = get_context("spawn")
    with OutputLock(output), stopping_on_signals():
        folder.mkdir(parents=True, exist_ok=True)
        procs: dict[Connection, tuple[int, str, Any]] = {}
        try:
            for i, (dev, part) in enumerate(zip(devices, parts, strict=True), start=1):
                receive, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(
                    target=_worker,
                    args=(job, f"{i}/{n}", dev, part),
                    kwargs={"threads": threads, "parent": os.getpid(), "conn": send},
                    name=f"rubric-grade-worker-{i}",
                )
                proc.start()
                send.close()
                procs[receive] = (i, dev, proc)
            pending = set(procs)
            while pending:
                for conn in wait(list(pending)):
                    i, dev, proc = procs[conn]
                    pending.discard(conn)
                    try:
                        kind, value = conn.recv()
                    except EOFError:
                        proc.join()
                        kind, value = "error", f"the process ended (exit code {proc.exitcode})"
                    if kind == "ok":
                        log.info("worker %d/%d (%s): %s", i, n, dev, value.summary())
                        total.add(value)
                    else:
                        (user_errors if kind == "user" else errors).append(value)
                        log.warning("worker %d/%d (%s) stopped: %s", i, n, dev, str(value).splitlines()[0])
        finally:
            _stop([proc for _, _, proc in procs.values()])
        if errors or user_errors:
            if not any(folder.iterdir()):  # nothing to resume from: leave no trace
                folder.rmdir()
            if user_errors:
                raise user_errors[0]
            raise RuntimeError(f"a grading worker failed: {errors[0]}")
        merge_parts(parts, output, job.passages, selected=job.query_ids)
    if not total.failures:
        shutil.rmtree(folder)
    return total


def _stop(procs: Sequence[Any]) -> None:
    """Terminate the workers still running (SIGTERM, then SIGKILL after a grace period)."""
    for proc in procs:
        if proc.is_alive():
            proc.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for proc in procs:
        proc.join(max(0.0, deadline - time.monotonic()))
        if proc.is_alive():
            proc.kill()
            proc.join()


def run_ray(job: GradeJob, shards: int, *, gpus: bool, output: Path, address: str | None) -> GradeStats:
    """Run the ``shards`` shards as Ray tasks (one GPU each when ``gpus``) and merge them into ``output``.

    ``address`` None starts a private Ray instance on 127.0.0.1 whose processes end with the
    driver, even when it is killed with SIGKILL (:mod:`rubric.grading.reaper`); otherwise it
    names a running cluster (``auto``, ``HOST:6379``, ``ray://HOST:10001``). A task grades its
    shard on its node and returns the part's bytes, so only the inputs and the model must be at
    the same path on every node (a shared file system); the driver saves each finished part in
    ``OUT.workers/`` and a rerun skips shards whose part is there. Ray retries a task whose node
    died. SIGINT and SIGTERM shut Ray down (cancelling the tasks) before the driver exits.
    """
    ray = load("ray", "ray", "{ray}")
    folder = parts_folder(output)
    parts = [folder / f"part-{i}-of-{shards}.jsonl.gz" for i in range(1, shards + 1)]
    init: dict[str, Any] = {"include_dashboard": False, "configure_logging": False}
    if address is None:
        init["_node_ip_address"] = "127.0.0.1"
    total = GradeStats()
    private = reaping_descendants() if address is None else contextlib.nullcontext()
    with OutputLock(output), stopping_on_signals(), private:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            ray.init(address=address, **init)
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise UserError(
                f"{{ray_address}} {address}: cannot connect to Ray ({e})", "ray_address"
            ) from None
        try:
            task = ray.remote(_ray_shard).options(num_gpus=1 if gpus else 0, num_cpus=1, max_retries=2)
            pending = {
                task.remote(job, f"{i}/{shards}", "cuda" if gpus else "cpu"): i
                for i, part in enumerate(parts, start=1)
                if not part.exists()
            }
            if len(pending) < shards:
                log.info("%d of %d shards were graded by an earlier run", shards - len(pending), shards)
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
                log.info("shard %d/%d (ray): %s", i, shards, stats.summary())
                total.add(stats)
                # a part with failed pairs is kept under another name: the next run grades that shard again
                done = parts[i - 1] if not stats.failures else _failed(parts[i - 1])
                with atomic_write(done) as f:
                    f.write(text)
        finally:
            ray.shutdown()
        merge_parts(
            [p if p.exists() else _failed(p) for p in parts], output, job.passages, selected=job.query_ids
        )
    if not total.failures:
        shutil.rmtree(folder)
    return total


def _failed(part: Path) -> Path:
    return part.with_name(part.name.replace(".jsonl.gz", ".failed.jsonl.gz"))


def _ray_shard(job: GradeJob, shard: str, device: str) -> tuple[GradeStats, str]:
    """In a Ray worker: grade one shard into a local temporary file; returns (stats, the file's text)."""
    import gzip
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rubric-ray-") as tmp:
        out = Path(tmp) / "part.jsonl.gz"
        stats = run_shard(job, shard=shard, device=device, output=out)
        return stats, gzip.decompress(out.read_bytes()).decode("utf-8")
