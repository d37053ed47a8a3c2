"""Grading throughput by attention path: the original tool's way vs each of ours, same grades.

Rows, all on the same model and prompts, in one process:

original way   the Autograding Workbench's loop: one ``text2text-generation`` call per passage
               with its ~10 prompts, which generates prompt by prompt (beam 5, early_stopping,
               max_length 512; and the same loop greedy), fp32 eager; timed on the first
               ``--original-passages`` passages (it is 25-100x slower than the rest);
today          the hf-seq2seq backend as it was before the attention paths: transformers' own
               T5 with its SDPA attention (transformers 5's default), padded length-sorted batches;
eager          ``--attention eager``: transformers' T5 with eager attention;
sdpa           ``--attention sdpa``: the fused encoder, T5's bias merged into one SDPA mask per batch;
sdpa-generate  the same with rating's first two decoder steps taken by ``generate`` (as before the
               direct decoder steps: hf_seq2seq.HFSeq2Seq._direct_first_steps);
flex           ``--attention flex``: FlexAttention on packed rows (bias in the kernel; on CPU
               without compile this is PyTorch's unfused reference, slow, so not a CPU default);
flex+compile   ``--attention flex --compile``; also ``sdpa+compile`` on request (``--paths``);
ct2-float32    ``--backend ct2-seq2seq`` (or ``ct2-causal``): CTranslate2 in float32 (the model converted
               once into a temporary model cache, not timed); ``--threads`` from OMP_NUM_THREADS;
ct2-int8       the same with ``--compute-type int8`` (its grade flips against fp32 are counted);
ct2-float16, ct2-int8_float16   the GPU's compute types (flips counted likewise).

``--model gpt2`` times a causal model instead (GPT-2 small or large shape): ``today`` is
transformers' SDPA on left-padded batches, ``eager`` and ``sdpa`` add the shared prompt head
(computed once per batch); there is no original way for causal models.

Each path runs once untimed ("first run": allocation, kernel choice, compilation; ``warm-up`` is
its extra time over the best timed run), then ``--repeats`` rounds of timed runs, the paths taken
in turn, as the grader calls them (``token_lengths`` for context fitting, then ``rate``); the best
run is reported, with peak GPU memory (the path's weights plus its run's peak) and the padding
share of the model's input slots. All paths' models stay loaded (a large-shape copy is ~1.6 GiB
in bf16).

Exactness: the reference is greedy generation to the end with eager attention in fp32 (its
fast rating must give the same answers, checked). Every path's grades are compared with it; a
path that differs where it runs in fp32 fails the script (exit 1). In bf16 (the GPU default) an
argmax may flip: the flips are counted and their margins printed, the fp32 reference's logit
gap between its choice and the path's (``ln p(a) - ln p(b)`` of the first step's distribution).

The model is random but shaped like FLAN-T5-small (``--shape small``, CPU) or FLAN-T5-large
(``--shape large``), its embeddings set so it answers like a grader ("4", then end of sequence);
prompts are the real QuestionSelfRatedUnanswerablePromptWithChoices with 200-300-word passages.

    OMP_NUM_THREADS=1 python benchmarks/grade_throughput.py --device cpu --shape small
    OMP_NUM_THREADS=2 python benchmarks/grade_throughput.py --shape base --paths sdpa,ct2-float32,ct2-int8
    python benchmarks/grade_throughput.py --device cuda --shape large --passages 300 --batch-size 256
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import math
import os
import random
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

SHAPES = {  # FLAN-T5 sizes: d_model, layers, heads, d_kv, d_ff, vocab
    "small": dict(d_model=512, layers=8, heads=6, d_kv=64, d_ff=1024, vocab_size=32128),
    "base": dict(d_model=768, layers=12, heads=12, d_kv=64, d_ff=2048, vocab_size=32128),
    "large": dict(d_model=1024, layers=24, heads=16, d_kv=64, d_ff=2816, vocab_size=32128),
}
GPT2_SHAPES = {  # GPT-2 sizes: d_model, layers, heads, positions, vocab
    "small": dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=50257),
    "base": dict(n_embd=768, n_layer=12, n_head=12, n_positions=1024, vocab_size=50257),
    "large": dict(n_embd=1280, n_layer=36, n_head=20, n_positions=1024, vocab_size=50257),
}
BACKENDS = {"t5": "hf-seq2seq", "gpt2": "hf-causal"}
CT2_BACKENDS = {"t5": "ct2-seq2seq", "gpt2": "ct2-causal"}
PATHS = {  # row name -> backend options (``today``: see make)
    "today": {},
    "eager": dict(attention="eager"),
    "sdpa": dict(attention="sdpa"),
    "sdpa-generate": dict(attention="sdpa"),  # rating's first steps through generate, as before
    "flex": dict(attention="flex"),
    "flex+compile": dict(attention="flex", compile=True),
    "sdpa+compile": dict(attention="sdpa", compile=True),
    "ct2-float32": dict(compute_type="float32"),
    "ct2-int8": dict(compute_type="int8"),
    "ct2-float16": dict(compute_type="float16"),  # GPU only
    "ct2-int8_float16": dict(compute_type="int8_float16"),  # GPU only
}
DEFAULT_PATHS = {
    ("t5", "cpu"): "today,eager,sdpa,flex+compile",
    ("t5", "cuda"): "today,eager,sdpa,flex,flex+compile",
    ("gpt2", "cpu"): "today,eager,sdpa",
    ("gpt2", "cuda"): "today,eager,sdpa",
}


def tiny_models():
    path = ROOT / "tests" / "helpers" / "tiny_models.py"
    spec = importlib.util.spec_from_file_location("tiny_models", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_prompts(words: list[str], passages: int, questions: int, seed: int) -> list[list[str]]:
    """Per passage, its rendered prompts (one per question)."""
    from rubric.prompting.prompts import get_prompt

    prompt = get_prompt("QuestionSelfRatedUnanswerablePromptWithChoices")
    rng = random.Random(seed)
    out = []
    for _ in range(passages):
        context = " ".join(rng.choice(words) for _ in range(rng.randint(200, 300)))
        qs = [" ".join(rng.choice(words) for _ in range(rng.randint(4, 12))) + " ?" for _ in range(questions)]
        out.append([prompt.render(question=q, context=context) for q in qs])
    return out


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()


def original_way(backend, per_passage: list[list[str]], beams: int) -> tuple[list[str], float]:
    """Per passage one pipeline call, which generates prompt by prompt (batch size 1)."""
    import torch

    tok, net = backend.tokenizer, backend.net
    answers: list[str] = []
    synchronize(backend.device)
    start = time.perf_counter()
    with torch.inference_mode():
        for prompts in per_passage:
            for prompt in prompts:
                enc = tok([prompt], truncation=True, max_length=512, return_tensors="pt").to(backend.device)
                out = net.generate(
                    **enc, num_beams=beams, early_stopping=beams > 1, max_length=512, do_sample=False
                )
                answers.append(tok.decode(out[0, 1:], skip_special_tokens=True))
    synchronize(backend.device)
    return answers, time.perf_counter() - start


def build_model(model: str, folder: Path, shape: str, seed: int) -> None:
    tm = tiny_models()
    if model == "t5":
        tm.build_t5(folder, grader_like=True, seed=seed, **SHAPES[shape])
    else:
        tm.build_gpt2(folder, grader_like=True, seed=seed, **GPT2_SHAPES[shape])


def make(model: str, folder: Path, common: dict, name: str, **options):
    """The backend of row ``name``; ``today`` is the backend as it was before the attention paths:
    transformers' T5 with its default SDPA attention, or a causal model without shared heads."""
    from rubric.llm.hf_common import use_attention
    from rubric.llm.registry import make_backend

    if name.startswith("ct2"):
        return make_backend(CT2_BACKENDS[model], str(folder), **dict(common, dtype=None), **options)
    if name == "today":
        options = dict(options, attention="eager" if model == "t5" else "sdpa")
    backend = make_backend(BACKENDS[model], str(folder), **common, **options)
    if name == "today" and model == "t5":
        use_attention(backend.net, "sdpa")
        backend.attention = "transformers sdpa"
    if name.endswith("-generate"):
        backend.direct_steps = False
    if name in ("today", "reference") and model == "gpt2":
        backend.share_heads = False
    return backend


def grade_like_the_grader(backend, prompts: list, choices) -> tuple[list, float, float]:
    """(ratings, seconds, GiB): fitting's token count, then rating, as the grader calls them; on
    CUDA the path's peak memory (its weights plus the run's peak above what was allocated before)."""
    import torch

    from rubric.llm.packing import PaddingTally

    backend._ids = {}  # nothing remembered from an earlier run
    if hasattr(backend, "padding"):  # CTranslate2 pads inside its own kernels
        backend.padding = PaddingTally()
    cuda = str(backend.device).startswith("cuda") and hasattr(backend, "net")
    if cuda:
        torch.cuda.synchronize()
        before = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    start = time.perf_counter()
    backend.token_lengths(prompts)
    ratings = backend.rate(prompts, choices)
    synchronize(backend.device)
    seconds = time.perf_counter() - start
    memory = 0.0
    if cuda:
        weights = sum(p.numel() * p.element_size() for p in backend.net.parameters())
        memory = (weights + torch.cuda.max_memory_allocated() - before) / 2**30
    return ratings, seconds, memory


@dataclass
class Row:
    name: str
    attention: str = ""
    seconds: float = math.inf
    first: float = 0.0
    memory: float = 0.0
    padding: float | None = None
    compile_note: str = ""
    grades: list = field(default_factory=list)
    ratings: list = field(default_factory=list)
    fp32: bool = True
    unsteady: int = 0  # answers that changed between runs of the same path (bf16 kernels on GPU)
    failures: list = field(default_factory=list)  # the causes of prompts the path could not answer


def text_of(result) -> str:
    """An answer's text; a failure (the backend's recorded error) as a text no grade parses."""
    from rubric.llm.base import Answer

    return result.text if isinstance(result, Answer) else f"<failed: {result.cause}>"


def run_paths(
    model: str, names: list[str], folder: Path, common: dict, prompts: list, choices, repeats: int
) -> list[Row]:
    """Every path once untimed (its first run), then ``repeats`` rounds taking the paths in turn,
    so that a change in the machine's load hits all paths alike; the best run of each counts."""
    import torch

    from rubric.llm.base import Failure

    cuda = common["device"].startswith("cuda")
    backends = [make(model, folder, common, name, **PATHS[name]) for name in names]
    rows = [
        Row(n, b.attention, fp32=b.torch_dtype == torch.float32)
        if hasattr(b, "torch_dtype")
        else Row(n, b.kernel_summary(), fp32=b.compute_type == "float32")
        for n, b in zip(names, backends, strict=True)
    ]
    for row, backend in zip(rows, backends, strict=True):
        row.ratings, row.first, _ = grade_like_the_grader(backend, prompts, choices)
        print(f"  {row.name}: first run {row.first:.1f} s", flush=True)
    for _ in range(repeats):
        for row, backend in zip(rows, backends, strict=True):
            ratings, seconds, memory = grade_like_the_grader(backend, prompts, choices)
            row.seconds = min(row.seconds, seconds)
            row.memory = max(row.memory, memory)
            changed = sum(text_of(a) != text_of(b) for a, b in zip(ratings, row.ratings, strict=True))
            row.unsteady = max(row.unsteady, changed)  # in fp32 a failure, in bf16 counted
            print(f"  {row.name}: {len(prompts) / seconds:.2f} prompts/s", flush=True)
    for row, backend in zip(rows, backends, strict=True):
        row.failures = [r.cause for r in row.ratings if isinstance(r, Failure)]
        row.padding = backend.padding.ratio if hasattr(backend, "padding") else None
        encoder = getattr(backend, "encoder", None)
        if encoder is not None and encoder.log.graphs:
            row.compile_note = f"{encoder.log.graphs} graphs, {encoder.log.seconds:.1f} s compiling"
    del backends
    gc.collect()
    if cuda:
        torch.cuda.empty_cache()
    return rows


def table_line(name: str, *cells: str) -> None:
    *numbers, exactness = cells
    widths = (10, 10, 8, 9, 8)
    print(
        f"{name:<34} "
        + " ".join(f"{c:>{w}}" for c, w in zip(numbers, widths, strict=True))
        + f"  {exactness}"
    )


def flips(row: Row, reference: list, ref_ratings: list) -> tuple[int, list[float]]:
    """Rows whose grade differs from the reference, and the fp32 logit margins where both are choices."""
    margins = []
    count = 0
    for mine, ref, rating in zip(row.grades, reference, ref_ratings, strict=True):
        if mine == ref:
            continue
        count += 1
        probs = rating.probabilities or {}
        a, b = probs.get(str(ref), 0.0), probs.get(str(mine), 0.0)
        if a > 0 and b > 0:
            margins.append(math.log(a) - math.log(b))
    return count, margins


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=sorted(BACKENDS), default="t5", help="model family (random weights)")
    ap.add_argument("--shape", choices=sorted(SHAPES), default="small")
    ap.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N")
    ap.add_argument("--passages", type=int, default=8)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--original-passages", type=int, default=20, help="passages timed the original way")
    ap.add_argument("--batch-size", type=int, default=0, help="0 = the backend's auto choice")
    ap.add_argument(
        "--dtype", default="auto", help="of the timed paths (auto: bfloat16 on GPU, float32 on CPU)"
    )
    ap.add_argument("--paths", default="", help=f"comma-separated rows from {', '.join(PATHS)}")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeats", type=int, default=2, help="timed runs per path after the first")
    ap.add_argument("--skip-beam", action="store_true", help="leave out the original way with beam 5")
    args = ap.parse_args()

    import torch

    from rubric.llm.base import Request
    from rubric.llm.hf_common import device_type
    from rubric.llm.hf_seq2seq import default_attention
    from rubric.prompting.parse import get_parser

    paths = (args.paths or DEFAULT_PATHS[args.model, device_type(args.device)]).split(",")
    unknown = [p for p in paths if p not in PATHS]
    if unknown:
        ap.error(f"--paths: unknown {', '.join(unknown)}; known: {', '.join(PATHS)}")
    folder = Path(tempfile.mkdtemp(prefix="grade-bench-"))
    os.environ["RUBRIC_CACHE_DIR"] = str(folder / "cache")  # the ct2 rows' conversions: thrown away
    build_model(args.model, folder, args.shape, args.seed)
    common = dict(device=args.device, batch_size=args.batch_size, max_new_tokens=20, dtype=args.dtype)
    per_passage = make_prompts(list(tiny_models().WORDS), args.passages, args.questions, args.seed)
    flat = [Request(p) for ps in per_passage for p in ps]
    n = len(flat)
    parser = get_parser("self_rating")

    # the reference: greedy generation to the end, eager attention, fp32
    ref = make(args.model, folder, dict(common, dtype="float32"), "reference", attention="eager")
    gpu = torch.cuda.get_device_name(ref.device) if ref.device.startswith("cuda") else "none"
    family = "FLAN-T5" if args.model == "t5" else "GPT-2"
    print(
        f"model: random {family}-{args.shape} shape; device {ref.device} (GPU: {gpu}); "
        f"torch {torch.__version__}, {torch.get_num_threads()} threads; batch size {ref.settings.batch_size}"
    )
    mean = sum(ref.token_lengths(flat)) / n
    print(f"{n} prompts ({args.passages} passages x {args.questions}), {mean:.0f} tokens on average")
    start = time.perf_counter()
    ref_answers = [r.text for r in ref.generate(flat)]
    t_ref = time.perf_counter() - start
    ref_ratings = ref.rate(flat, parser.choices)
    reference = [parser.parse(a) for a in ref_answers]
    if [r.text for r in ref_ratings] != ref_answers:
        sys.exit("FAIL: fast rating differs from greedy generation in the fp32 eager reference")
    print(f"reference (eager fp32 greedy generation, batched): {n / t_ref:.2f} prompts/s; fast rating agrees")

    subset = per_passage[: args.original_passages]
    m = sum(len(ps) for ps in subset)
    original = []
    for beams in ([] if args.skip_beam else [5]) + [1] if args.model == "t5" and m else []:
        answers, seconds = original_way(ref, subset, beams=beams)
        same = sum(parser.parse(a) == g for a, g in zip(answers, reference, strict=False))
        original.append((f"original way, {'beam 5' if beams > 1 else 'greedy'}", m / seconds, same, m))
    del ref
    gc.collect()

    rows = run_paths(args.model, paths, folder, common, flat, parser.choices, args.repeats)
    for row in rows:
        row.grades = [parser.parse(text_of(r)) for r in row.ratings]

    print()
    table_line("path", "prompts/s", "first run", "warm-up", "peak GiB", "padding", "exactness")
    for name, rate, same, total in original:
        table_line(name, f"{rate:.2f}", "", "", "", "", f"grades == reference {same}/{total}")
    failed = []
    for row in rows:
        count, margins = flips(row, reference, ref_ratings)
        exact = f"grades == reference {n - count}/{n}"
        if count:
            gaps = f"max {max(margins):.3f}, median {statistics.median(margins):.3f}" if margins else "n/a"
            exact += f"; {count} flipped, fp32 logit margins {gaps}"
        if row.unsteady:
            exact += f"; {row.unsteady} answers changed between runs"
        if row.failures:
            exact += f"; {len(row.failures)} failed ({row.failures[0]})"
        if row.failures or (row.fp32 and (count or row.unsteady)):
            failed.append(row.name)
        mem = f"{row.memory:.2f}" if row.memory else "-"
        label = f"today ({row.attention})" if row.name == "today" else row.name
        warm = max(0.0, row.first - row.seconds)
        pad = "-" if row.padding is None else f"{100 * row.padding:.1f}%"
        table_line(label, f"{n / row.seconds:.2f}", f"{row.first:.1f}s", f"{warm:.1f}s", mem, pad, exact)
        if row.compile_note:
            print(f"{'':<34} compile: {row.compile_note}")

    by_name = {r.name: r for r in rows}
    auto = default_attention(args.device) if args.model == "t5" else "sdpa"
    default_row = by_name.get(auto)
    if default_row and "today" in by_name:
        ratio = by_name["today"].seconds / default_row.seconds
        kind = device_type(args.device)
        print(f"ratio default path ({auto}, the auto choice on {kind}) / today: {ratio:.2f}x")
    if default_row:
        for row in rows:
            if row.name.startswith("ct2"):
                ratio = default_row.seconds / row.seconds
                print(f"ratio {row.name} / default path ({auto}): {ratio:.2f}x")
    best = min(rows, key=lambda r: r.seconds)
    for name, rate, _, _ in original:
        print(f"ratio best path ({best.name}) / {name}: {n / best.seconds / rate:.1f}x")
    if failed:
        sys.exit(f"FAIL: failed prompts, or fp32 grades unlike the eager reference: {', '.join(failed)}")


if __name__ == "__main__":
    main()
