"""Where grading's time goes: host phases, kernel families and the GPU's idle share, in one file.

One prepared command for a lent GPU (a few minutes of device time, the model built offline):

    python benchmarks/gpu_profile.py --device cuda --shape large --passages 300 --batch-size 256 --out "$OUT"

and the same on CPU for a look at the host side (and as the test runs it):

    OMP_NUM_THREADS=1 python benchmarks/gpu_profile.py --device cpu --shape small --passages 4 --out /tmp/prof

It builds the random FLAN-T5-shaped grader of ``grade_throughput.py`` (same prompts, same paths),
rates the prompts once to warm up, then once more under ``torch.profiler`` with every host phase
of the backend timed by wall clock. ``--out`` receives ``profile-summary.md`` (the tables below)
and ``profile-summary.json`` (the same numbers), plus ``trace.json`` (Chrome trace) with ``--trace``.

What the summary says:

phases         host wall time of each step of the rating path, by thread: tokenising the prompts,
               building padded / packed tensors and copying them to the device (the prefetch
               thread: it overlaps with the model), the model calls (the first decoder steps of
               rating, ``generate`` for rows generated to the end) and, inside them, the encoder;
               on CUDA a call returns when its kernels are queued, so the time is the host's
               launch work plus any wait for results (the probabilities read back).
kernels        device time per kernel family (matrix products, attention, softmax/normalisation,
               elementwise, copies, other) and the top kernels by time; on CPU the operators'
               self time by the same families.
GPU busy/idle  the share of the profiled window in which at least one kernel or copy ran on the
               GPU; the rest is time the GPU waited for the host.

torch.profiler records operators of the thread that started it only, so the prefetch thread's
phases are timed by wall clock here, and its GPU copies still appear among the kernels (CUPTI
records the device whatever thread queued the work).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import grade_throughput as gt  # noqa: E402 - the sibling benchmark: model, prompts, paths

# kernel or operator name -> family; the first pattern that matches wins
FAMILIES: list[tuple[str, re.Pattern[str]]] = [
    ("copy", re.compile(r"memcpy|memset|copy_|aten::to\b|_to_copy|pin_memory", re.I)),
    ("attention", re.compile(r"flash|fmha|attention|sdpa|efficient_attention|flex", re.I)),
    (
        "matmul",
        re.compile(
            r"gemm|cutlass|cublas|sm\d\d_xmma|matmul|aten::mm\b|aten::bmm|aten::addmm|aten::linear", re.I
        ),
    ),
    ("softmax/norm", re.compile(r"softmax|norm|rsqrt|reduce|aten::mean|aten::pow", re.I)),
    (
        "elementwise",
        re.compile(r"elementwise|vectorized|aten::(add|mul|gelu|tanh|where|masked_fill|div|sub)", re.I),
    ),
]


def family(name: str) -> str:
    for label, pattern in FAMILIES:
        if pattern.search(name):
            return label
    return "other"


MODEL = "model calls (encoder, decoder steps, generate)"
ENCODER = "encoder (inside the model calls)"
DECODER = "decoder steps and generate's own work (model calls - encoder)"


class PhaseClock:
    """Wall-clock seconds per (phase, thread), summed over calls; nested calls of one phase count once."""

    def __init__(self) -> None:
        self.seconds: dict[tuple[str, str], float] = defaultdict(float)
        self.calls: dict[tuple[str, str], int] = defaultdict(int)
        self._depth = threading.local()

    def wrap(self, obj: Any, method: str, phase: str) -> None:
        """Time ``obj.method`` as ``phase`` (an instance attribute shadowing the class's method)."""
        inner: Callable[..., Any] = getattr(obj, method)

        def timed(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._depth, phase, 0)
            setattr(self._depth, phase, depth + 1)
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                setattr(self._depth, phase, depth)
                if depth == 0:
                    key = (
                        phase,
                        "main" if threading.current_thread() is threading.main_thread() else "prefetch",
                    )
                    self.seconds[key] += time.perf_counter() - start
                    self.calls[key] += 1

        setattr(obj, method, timed)

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def instrument(backend: Any) -> PhaseClock:
    """The rating path's host phases of an hf-seq2seq / hf-causal backend, timed."""
    clock = PhaseClock()
    clock.wrap(backend, "_rows", "tokenise")
    clock.wrap(backend, "_tensors", "build batch + copy to device")
    clock.wrap(backend, "_inputs", ENCODER)
    clock.wrap(backend, "_run", MODEL)  # generate: the rows generated to the end
    clock.wrap(backend, "_first_steps", MODEL)  # rating's first decoder steps (nested: counted once)
    return clock


def busy_share(intervals: Iterable[tuple[float, float]], window: tuple[float, float]) -> float:
    """The share of ``window`` covered by the union of ``intervals`` (clipped to the window)."""
    lo, hi = window
    if hi <= lo:
        return 0.0
    covered, end = 0.0, lo
    for a, b in sorted((max(a, lo), min(b, hi)) for a, b in intervals):
        if b <= end:
            continue
        covered += b - max(a, end)
        end = b
    return covered / (hi - lo)


def summarise(prof: Any, clock: PhaseClock, wall: float, prompts: int, cuda: bool) -> dict[str, Any]:
    """The numbers of the summary from a finished profiler and the phase clock."""
    events = list(prof.events())
    device_events = [e for e in events if e.device_type.name == "CUDA"] if cuda else []
    by_family: dict[str, float] = defaultdict(float)
    by_kernel: dict[str, float] = defaultdict(float)
    if cuda:
        for e in device_events:
            us = e.time_range.end - e.time_range.start
            by_family[family(e.name)] += us / 1e6
            by_kernel[e.name[:100]] += us / 1e6
    else:  # operators' own CPU time (children excluded), by family
        for avg in prof.key_averages():
            if avg.key.startswith("aten::") or avg.key.startswith("rubric"):
                by_family[family(avg.key)] += avg.self_cpu_time_total / 1e6
                by_kernel[avg.key[:100]] += avg.self_cpu_time_total / 1e6
    seconds = dict(clock.seconds)
    if (MODEL, "main") in seconds and (ENCODER, "main") in seconds:
        seconds[DECODER, "main"] = seconds[MODEL, "main"] - seconds[ENCODER, "main"]
        clock.calls[DECODER, "main"] = clock.calls[MODEL, "main"]
    host = [e for e in events if e.device_type.name == "CPU"]
    window = (
        min((e.time_range.start for e in host), default=0.0),
        max((e.time_range.end for e in host), default=0.0),
    )
    busy = (
        busy_share(((e.time_range.start, e.time_range.end) for e in device_events), window) if cuda else None
    )
    return {
        "prompts": prompts,
        "wall_seconds": wall,
        "prompts_per_second": prompts / wall if wall else 0.0,
        "phases": [
            {"phase": p, "thread": t, "seconds": s, "calls": clock.calls[p, t], "share_of_wall": s / wall}
            for (p, t), s in sorted(seconds.items(), key=lambda kv: -kv[1])
        ],
        "device": "cuda" if cuda else "cpu",
        "families": dict(sorted(by_family.items(), key=lambda kv: -kv[1])),
        "top": sorted(by_kernel.items(), key=lambda kv: -kv[1])[:15],
        "gpu_busy_share": busy,
        "gpu_idle_share": None if busy is None else 1.0 - busy,
    }


def markdown(summary: dict[str, Any], header: str) -> str:
    s = summary
    lines = [
        "# Grading profile",
        "",
        header,
        "",
        f"{s['prompts']} prompts in {s['wall_seconds']:.2f} s: "
        f"**{s['prompts_per_second']:.1f} prompts/s** (profiler on).",
        "",
    ]
    if s["gpu_busy_share"] is not None:
        lines += [
            f"GPU busy {100 * s['gpu_busy_share']:.1f}% of the profiled window, "
            f"**idle {100 * s['gpu_idle_share']:.1f}%**.",
            "",
        ]
    lines += [
        "## Host phases (wall clock)",
        "",
        "| phase | thread | seconds | calls | share of wall |",
        "|---|---|---:|---:|---:|",
    ]
    for p in s["phases"]:
        lines.append(
            f"| {p['phase']} | {p['thread']} | {p['seconds']:.3f} | {p['calls']} "
            f"| {100 * p['share_of_wall']:.1f}% |"
        )
    kind = "device time" if s["device"] == "cuda" else "operators' self CPU time"
    total = sum(s["families"].values()) or 1.0
    lines += ["", f"## Kernel families ({kind})", "", "| family | seconds | share |", "|---|---:|---:|"]
    for name, sec in s["families"].items():
        lines.append(f"| {name} | {sec:.3f} | {100 * sec / total:.1f}% |")
    lines += ["", "## Top kernels", "", "| kernel | seconds |", "|---|---:|"]
    for name, sec in s["top"]:
        lines.append(f"| `{name}` | {sec:.3f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--shape", choices=["tiny", *sorted(gt.SHAPES)], default="small", help="tiny: the tests' 2-layer T5"
    )
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default: cpu)")
    ap.add_argument("--passages", type=int, default=8, help="passages, 10 questions each (default: 8)")
    ap.add_argument("--batch-size", type=int, default=0, help="0 = the backend's auto choice")
    ap.add_argument("--dtype", default="auto", help="auto: bfloat16 on GPU, float32 on CPU")
    ap.add_argument(
        "--path",
        default="sdpa",
        choices=["today", "eager", "sdpa", "sdpa-generate", "flex", "flex+compile", "sdpa+compile"],
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, required=True, help="folder for profile-summary.md/.json")
    ap.add_argument("--trace", action="store_true", help="also write trace.json (Chrome trace; large)")
    args = ap.parse_args(argv)

    import torch
    from torch.profiler import ProfilerActivity, profile

    from rubric.llm.base import Request
    from rubric.prompting.parse import get_parser

    args.out.mkdir(parents=True, exist_ok=True)
    folder = Path(tempfile.mkdtemp(prefix="grade-profile-"))
    if args.shape == "tiny":
        gt.tiny_models().build_t5(folder, grader_like=True, seed=args.seed)
    else:
        gt.build_model("t5", folder, args.shape, args.seed)
    common = dict(device=args.device, batch_size=args.batch_size, max_new_tokens=20, dtype=args.dtype)
    backend = gt.make("t5", folder, common, args.path, **gt.PATHS[args.path])
    per_passage = gt.make_prompts(list(gt.tiny_models().WORDS), args.passages, 10, args.seed)
    flat = [Request(p) for ps in per_passage for p in ps]
    choices = get_parser("self_rating").choices
    cuda = str(backend.device).startswith("cuda")

    gt.grade_like_the_grader(backend, flat, choices)  # warm-up: allocation, kernel choice, compiling
    clock = instrument(backend)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        _, wall, _ = gt.grade_like_the_grader(backend, flat, choices)
    summary = summarise(prof, clock, wall, len(flat), cuda)
    gpu = torch.cuda.get_device_name(backend.device) if cuda else "none"
    header = (
        f"Random FLAN-T5-{args.shape} shape, path `{args.path}` ({backend.attention}), "
        f"device {backend.device} "
        f"(GPU: {gpu}), dtype {backend.torch_dtype}, batch size {backend.settings.batch_size}; "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; {len(flat)} prompts "
        f"({args.passages} passages x 10 questions)."
    )
    summary["header"] = header
    (args.out / "profile-summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    (args.out / "profile-summary.md").write_text(markdown(summary, header))
    if args.trace:
        prof.export_chrome_trace(str(args.out / "trace.json"))
    print(markdown(summary, header))


if __name__ == "__main__":
    main()
