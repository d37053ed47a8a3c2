"""`rubric grade`: an LLM grades every (passage, test item) pair, or (passage, query) for direct prompts.

``rubric grade PASSAGES --bank BANK --prompt NAME ...`` is short for ``rubric grade exam ...``: a
first argument that is not a subcommand goes to the default command ``exam``. Nothing heavy is
imported here at module level (``rubric --help`` stays fast); torch loads inside the commands.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from rubric.cli import llm_options as lo
from rubric.cli.common import info, updates_in_place
from rubric.cli.rag_nuggets import assign_command


class DefaultCommandGroup(TyperGroup):
    """A group whose first argument, when it names no subcommand, belongs to ``exam``."""

    default_command = "exam"

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = [self.default_command, *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=DefaultCommandGroup,
    help=(
        "Grade passages with an LLM: exam questions / nuggets of a test bank (default command 'exam', "
        "so `rubric grade PASSAGES --bank ...` works), direct relevance prompts, and merge shards."
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _opt(default: Any, *names: str, help: str, **kw: Any) -> Any:  # noqa: A002 - typer's name
    return typer.Option(default, *names, help=help, **kw)


# Options every grading command shares (Typer reads them from each function's signature).
PROMPT_FILE = _opt(None, "--prompt-file", help="Your own prompt file (TOML); repeatable. Default: none.")
BACKEND = _opt(
    "hf-seq2seq",
    "--backend",
    help="Backend: hf-seq2seq, hf-causal, hf-qa, openai (any OpenAI-compatible server; see README). "
    "Default: hf-seq2seq.",
)
MODEL = _opt(
    "google/flan-t5-large",
    "--model",
    "-m",
    help="Hub name, local folder or packaged short name. Default: google/flan-t5-large.",
)
OUTPUT = _opt(..., "--output", "-o", help="Graded passages file to write (.jsonl.gz); required.")
DEVICE = _opt("auto", "--device", help="cpu, cuda, cuda:N or auto (cuda when available). Default: auto.")
DTYPE = _opt(
    "auto", "--dtype", help="float32, bfloat16, float16 or auto (bf16 on GPU, fp32 on CPU). Default: auto."
)
BATCH = _opt(
    0,
    "--batch-size",
    min=0,
    help="Prompts per batch (length-sorted); 0 = auto: 8 on CPU, 64 on GPU. Default: 0.",
)
BUDGET = _opt(
    0, "--token-budget", min=0, help="Cap a batch at this many padded input tokens; 0 = off. Default: 0."
)
MAX_IN = _opt(
    512, "--max-input-tokens", min=16, help="Contexts are cut (by tokens) so prompts fit. Default: 512."
)
MAX_NEW = _opt(32, "--max-new-tokens", min=1, help="Longest generated answer in tokens. Default: 32.")
BEAMS = _opt(
    1, "--num-beams", min=1, help="1 = greedy (default); 5 = the original tool's beam search (slower)."
)
FAST = _opt(
    True,
    "--fast/--no-fast",
    help="Exact fast rating for 0-5 and yes/no prompts (falls back to generation). Default: --fast.",
)
CACHE = _opt(
    None, "--cache", help="Response cache (sqlite). Default: $RUBRIC_CACHE or ~/.cache/rubric-workbench/."
)
NO_CACHE = _opt(False, "--no-cache", help="Do not read or write the response cache. Default: off.")
SHARD = _opt(None, "--shard", help="Grade only shard i of n (by query), e.g. 2/8. Default: all queries.")
CHECKPOINT = _opt(
    4096,
    "--checkpoint-pairs",
    min=1,
    help="Save finished queries to OUT.partial after about this many pairs (resume granularity; "
    "also the span of cross-query batching). Default: 4096.",
)
DEVICES = _opt(
    None,
    "--devices",
    help="One worker process per listed device, e.g. cuda:0,cuda:1 (cpu,cpu works too); each grades a "
    "share of the queries and the output equals a one-process run. Default: one process on --device.",
)
WORKERS = _opt(
    0,
    "--workers",
    min=0,
    help="N worker processes on --device: cuda takes GPUs cuda:0..N-1, cpu starts N CPU processes; "
    "with --ray, N shards. 0 = one process. Default: 0.",
)
RAY = _opt(
    False,
    "--ray",
    help="Grade --workers N shards as Ray tasks, one GPU each (--device cpu: one CPU each); needs the "
    "'ray' extra. Default: off.",
)
RAY_ADDRESS = _opt(
    None,
    "--ray-address",
    help="Ray cluster to use (auto, HOST:6379, ray://HOST:10001). Default: a private local instance.",
)


def _prepare(
    passages: Path,
    prompt_names: list[str],
    prompt_files: list[Path] | None,
    backend_name: str,
    shard: str | None,
    inputs: list[Path],
    items: dict[str, list] | None,
    query_texts: dict[str, str] | None,
) -> tuple[list, list]:
    """Prompts and the queries to grade, every input checked before a model loads."""
    from rubric.data.jsonl import read_passages
    from rubric.errors import UserError
    from rubric.grading.grader import check_prompts
    from rubric.grading.prompts import get_prompt
    from rubric.grading.shards import parse_shard, shard_of
    from rubric.llm.registry import backend_class

    prompts = [get_prompt(name, list(prompt_files or [])) for name in prompt_names]
    # an unknown backend, or prompts it cannot ask: errors before any file is read
    pairs_only = hasattr(backend_class(backend_name), "grade_pairs")
    check_prompts(
        prompts, items is None, items or {}, list(prompt_files or []), backend_name if pairs_only else None
    )
    part = parse_shard(shard)
    queries = list(read_passages(passages))
    if part is not None:
        queries = [q for q in queries if shard_of(q.queryId, part[1]) == part[0]]
    if items is None:  # direct prompts need every query's text; say so before any model loads
        missing = [q.queryId for q in queries if q.queryId not in (query_texts or {})]
        if missing:
            raise UserError(
                f"--queries {inputs[1]}: no text for {len(missing)} queries of {passages} "
                f"(first: {missing[0]})"
            )
    return prompts, queries


def grade_shard(
    *,
    shard: str | None,
    device: str | None,
    output: Path,
    passages: Path,
    prompt_names: list[str],
    prompt_files: list[Path] | None,
    backend_name: str,
    model: str,
    backend_options: dict[str, Any],
    fast: bool,
    cache_path: Path | None,
    no_cache: bool,
    checkpoint_pairs: int,
    inputs: list[Path],
    items: dict[str, list] | None = None,
    query_texts: dict[str, str] | None = None,
    progress: bool = False,
    threads: int = 0,
) -> Any:
    """Grade one shard (or everything) into ``output`` with resume; returns the GradeStats.

    Module-level so that ``--devices`` workers (spawned processes) can run it.
    """
    from rubric.grading.grader import Grader, grade_file
    from rubric.llm.cache import ResponseCache, default_cache_path
    from rubric.llm.registry import make_backend

    prompts, queries = _prepare(
        passages, prompt_names, prompt_files, backend_name, shard, inputs, items, query_texts
    )
    if device is not None:
        backend_options = backend_options | {"device": device}
    if threads and device == "cpu":
        import torch

        torch.set_num_threads(threads)
    backend = make_backend(backend_name, model, **backend_options)
    cache = None if no_cache else ResponseCache(cache_path or default_cache_path())
    grader = Grader(
        backend,
        prompts,
        items=items,
        query_texts=query_texts,
        cache=cache,
        fast=fast,
        prompt_files=list(prompt_files or []),
    )

    def bar(total: int) -> Any:
        from tqdm import tqdm

        return tqdm(total=total, unit="pair", desc="grading", file=sys.stderr, mininterval=1.0, leave=False)

    return grade_file(
        grader,
        queries,
        output,
        inputs,
        progress_factory=bar if progress else None,
        chunk_pairs=checkpoint_pairs,
    )


def _run(
    passages: Path,
    prompt_names: list[str],
    prompt_files: list[Path] | None,
    backend_name: str,
    model: str,
    output: Path,
    backend_options: dict[str, Any],
    fast: bool,
    cache_path: Path | None,
    no_cache: bool,
    shard: str | None,
    checkpoint_pairs: int,
    inputs: list[Path],
    items: dict[str, list] | None = None,
    query_texts: dict[str, str] | None = None,
    devices: str | None = None,
    workers: int = 0,
    ray: bool = False,
    ray_address: str | None = None,
) -> None:
    """Everything both grading commands share: load, grade with resume (in workers), summarise."""
    from rubric.errors import UserError
    from rubric.grading.workers import parse_devices, run_ray, run_workers

    job = dict(
        passages=passages,
        prompt_names=prompt_names,
        prompt_files=prompt_files,
        backend_name=backend_name,
        model=model,
        backend_options=backend_options,
        fast=fast,
        cache_path=cache_path,
        no_cache=no_cache,
        checkpoint_pairs=checkpoint_pairs,
        inputs=inputs,
        items=items,
        query_texts=query_texts,
    )
    if ray_address is not None and not ray:
        raise UserError("--ray-address: only with --ray")
    if ray:
        if shard is not None or devices is not None or not workers:
            raise UserError("--ray: give --workers N (the number of shards), and no --shard or --devices")
        if backend_name == "openai":
            raise UserError("--ray: only for the local hf-* backends (openai: --concurrency)")
        _prepare(passages, prompt_names, prompt_files, backend_name, None, inputs, items, query_texts)
        gpus = backend_options.get("device", "auto") != "cpu"
        info(f"grading {workers} shards as Ray tasks, one {'GPU' if gpus else 'CPU'} each")
        stats = run_ray(grade_shard, workers, gpus, output, passages, info, ray_address, **job)
    elif devices is not None or workers:
        if shard is not None:
            raise UserError("--shard with --devices/--workers: the workers split the queries themselves")
        if backend_name == "openai":
            raise UserError(
                "--devices/--workers: for the local hf-* backends (use --concurrency with openai)"
            )
        _prepare(passages, prompt_names, prompt_files, backend_name, None, inputs, items, query_texts)
        names = parse_devices(devices, workers, backend_options.get("device", "auto"))
        info(f"grading with {len(names)} workers on {', '.join(names)}")
        stats = run_workers(grade_shard, names, output, passages, info, **job)
    else:
        stats = grade_shard(shard=shard, device=None, output=output, progress=True, **job)
    info(stats.summary())
    info(f"wrote {output}: {stats.queries} queries")
    if stats.failures:
        for err in stats.errors[:5]:
            info(f"failure: {err}")
        info("rerun the same command to grade the failed pairs again")
        raise typer.Exit(1)


@app.command("exam")
@updates_in_place("passages")
def exam_command(
    passages: Path = typer.Argument(..., help="Passages file (.jsonl or .jsonl.gz) from `rubric convert`."),
    bank: Path = _opt(..., "--bank", "-b", help="Test bank (questions or nuggets, JSONL); required."),
    prompt: list[str] = _opt(
        ...,
        "--prompt",
        "-p",
        help="Question, nugget or verify prompt name (see `rubric prompts list`); repeatable.",
    ),
    prompt_file: list[Path] = PROMPT_FILE,
    backend: str = BACKEND,
    model: str = MODEL,
    output: Path = OUTPUT,
    device: str = DEVICE,
    dtype: str = DTYPE,
    batch_size: int = BATCH,
    token_budget: int = BUDGET,
    max_input_tokens: int = MAX_IN,
    max_new_tokens: int = MAX_NEW,
    num_beams: int = BEAMS,
    fast: bool = FAST,
    cache: Path | None = CACHE,
    no_cache: bool = NO_CACHE,
    shard: str | None = SHARD,
    checkpoint_pairs: int = CHECKPOINT,
    devices: str | None = DEVICES,
    workers: int = WORKERS,
    ray: bool = RAY,
    ray_address: str | None = RAY_ADDRESS,
    base_url: str | None = lo.BASE_URL,
    api_key_file: Path | None = lo.API_KEY_FILE,
    concurrency: int = lo.CONCURRENCY,
    rpm: float | None = lo.RPM,
    max_retries: int = lo.MAX_RETRIES,
    retry_base: float = lo.RETRY_BASE,
    timeout: float = lo.TIMEOUT,
) -> None:
    """Grade every (passage, bank item) pair; grades go into each passage's exam_grades.

    A grade record with the same prompt class and LLM is replaced, others are kept, so grading
    again with another prompt adds to the file. A killed run resumes when rerun. A verify prompt
    (QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2) extracts an answer, then asks the LLM
    whether it matches each gold answer of the question.

    Example: rubric grade passages.jsonl.gz --bank questions.jsonl.gz
    --prompt QuestionSelfRatedUnanswerablePromptWithChoices -o graded.jsonl.gz
    """
    from rubric.data.jsonl import read_bank
    from rubric.grading.grader import items_by_query

    banks = list(read_bank(bank))
    query_texts = {b.query_id: b.query_text for b in banks if b.query_text}
    _run(
        passages,
        prompt,
        prompt_file,
        backend,
        model,
        output,
        _options(device, dtype, batch_size, token_budget, max_input_tokens, max_new_tokens, num_beams)
        | _api_options(base_url, api_key_file, concurrency, rpm, max_retries, retry_base, timeout),
        fast,
        cache,
        no_cache,
        shard,
        checkpoint_pairs,
        [passages, bank],
        items=items_by_query(banks),
        query_texts=query_texts,
        devices=devices,
        workers=workers,
        ray=ray,
        ray_address=ray_address,
    )


@app.command("direct")
@updates_in_place("passages")
def direct_command(
    passages: Path = typer.Argument(..., help="Passages file (.jsonl or .jsonl.gz) from `rubric convert`."),
    queries: Path = _opt(..., "--queries", "-q", help="Query texts: JSON, TSV or JSONL; required."),
    prompt: list[str] = _opt(
        ..., "--prompt", "-p", help="Direct prompt: Sun, Sun_few, FagB, FagB_few, HELM, Thomas; repeatable."
    ),
    prompt_file: list[Path] = PROMPT_FILE,
    backend: str = BACKEND,
    model: str = MODEL,
    output: Path = OUTPUT,
    device: str = DEVICE,
    dtype: str = DTYPE,
    batch_size: int = BATCH,
    token_budget: int = BUDGET,
    max_input_tokens: int = MAX_IN,
    max_new_tokens: int = MAX_NEW,
    num_beams: int = BEAMS,
    fast: bool = FAST,
    cache: Path | None = CACHE,
    no_cache: bool = NO_CACHE,
    shard: str | None = SHARD,
    checkpoint_pairs: int = CHECKPOINT,
    devices: str | None = DEVICES,
    workers: int = WORKERS,
    ray: bool = RAY,
    ray_address: str | None = RAY_ADDRESS,
    base_url: str | None = lo.BASE_URL,
    api_key_file: Path | None = lo.API_KEY_FILE,
    concurrency: int = lo.CONCURRENCY,
    rpm: float | None = lo.RPM,
    max_retries: int = lo.MAX_RETRIES,
    retry_base: float = lo.RETRY_BASE,
    timeout: float = lo.TIMEOUT,
) -> None:
    """Grade every (passage, query) pair with direct relevance prompts; grades go into `grades`.

    Example: rubric grade direct passages.jsonl.gz --queries queries.tsv --prompt Sun -o graded.jsonl.gz
    """
    from rubric.data.queries import read_queries

    _run(
        passages,
        prompt,
        prompt_file,
        backend,
        model,
        output,
        _options(device, dtype, batch_size, token_budget, max_input_tokens, max_new_tokens, num_beams)
        | _api_options(base_url, api_key_file, concurrency, rpm, max_retries, retry_base, timeout),
        fast,
        cache,
        no_cache,
        shard,
        checkpoint_pairs,
        [passages, queries],
        query_texts=read_queries(queries),
        devices=devices,
        workers=workers,
        ray=ray,
        ray_address=ray_address,
    )


@app.command("merge")
def merge_command(
    parts: list[Path] = typer.Argument(..., help="Graded parts written with --shard i/n."),
    output: Path = OUTPUT,
    order: Path | None = _opt(
        None,
        "--order",
        help="Passages file whose query order the merged file keeps (then it equals an unsharded run). "
        "Default: the parts' order.",
    ),
) -> None:
    """Join the parts of a sharded grading run into one file; a query in two parts is an error.

    Example: rubric grade merge part-*.jsonl.gz --order passages.jsonl.gz -o graded.jsonl.gz
    """
    from rubric.grading.shards import merge_parts

    n = merge_parts(parts, output, order)
    info(f"wrote {output}: {n} queries from {len(parts)} parts")


def _options(
    device: str, dtype: str, batch_size: int, token_budget: int, max_in: int, max_new: int, beams: int
) -> dict[str, Any]:
    return {
        "device": device,
        "dtype": dtype,
        "batch_size": batch_size,
        "token_budget": token_budget,
        "max_input_tokens": max_in,
        "max_new_tokens": max_new,
        "num_beams": beams,
    }


def _api_options(
    base_url: str | None,
    api_key_file: Path | None,
    concurrency: int,
    rpm: float | None,
    max_retries: int,
    retry_base: float,
    timeout: float,
) -> dict[str, Any]:
    """Options of the openai backend (the grader keeps its own cache, so the backend gets none).

    Passed to every backend: by the registry's contract the local ones ignore what they do not know.
    """
    return {
        "base_url": base_url,
        "api_key_file": api_key_file,
        "concurrency": concurrency,
        "rpm": rpm,
        "max_retries": max_retries,
        "retry_base": retry_base,
        "timeout": timeout,
    }


# `rubric grade assign` (listwise AutoNuggetizer assignment) lives with the RAG nugget commands.
app.command("assign")(assign_command)
