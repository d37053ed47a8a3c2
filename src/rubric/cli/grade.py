"""`rubric grade`: an LLM grades every (passage, test item) pair, or (passage, query) for direct prompts.

``rubric grade PASSAGES --bank BANK --prompt NAME ...`` is short for ``rubric grade exam ...``: a
first argument that is not a subcommand goes to the default command ``exam``. Nothing heavy is
imported here at module level (``rubric --help`` stays fast); torch loads inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from rubric.cli import llm_options as lo
from rubric.cli.common import info, updates_in_place
from rubric.cli.query_options import QUERIES, QUERY, selection
from rubric.cli.rag_nuggets import assign_command
from rubric.llm.registry import backends_help

if TYPE_CHECKING:
    from rubric.data.query_selection import QuerySelection


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
BACKEND = _opt("hf-seq2seq", "--backend", help=f"Backend: {backends_help()}. Default: hf-seq2seq.")
MODEL = _opt(
    None,
    "--model",
    "-m",
    help="Hub name, local folder or packaged short name (smollm2-135m, minilm-l6). Default: "
    "google/flan-t5-large for hf-seq2seq, minilm-l6 for embedding; the other backends need one.",
)
OUTPUT = _opt(..., "--output", "-o", help="Graded passages file to write (.jsonl.gz); required.")
DEVICE = _opt("auto", "--device", help="cpu, cuda, cuda:N or auto (cuda when available). Default: auto.")
DTYPE = _opt(
    "auto", "--dtype", help="float32, bfloat16, float16 or auto (bf16 on GPU, fp32 on CPU). Default: auto."
)
BATCH = _opt(
    0,
    "--batch-size",
    help="Prompts per batch (length-sorted); 0 = auto: 8 on CPU, 64 on GPU. Default: 0.",
)
BUDGET = _opt(0, "--token-budget", help="Cap a batch at this many padded input tokens; 0 = off. Default: 0.")
MAX_IN = _opt(
    512, "--max-input-tokens", help="Contexts are cut (by tokens) so prompts fit (>= 16). Default: 512."
)
MAX_NEW = _opt(32, "--max-new-tokens", help="Longest generated answer in tokens (>= 1). Default: 32.")
BEAMS = _opt(1, "--num-beams", help="1 = greedy (default); 5 = the original tool's beam search (slower).")
ATTENTION = _opt(
    "auto",
    "--attention",
    help="Attention of local models: eager (transformers' own), sdpa, flex (T5: the relative position "
    "bias inside a fused kernel; flex packs prompts without padding) or auto: the fastest path whose "
    "grades equal eager's on the device (T5: sdpa on CPU, flex on CUDA with Triton, falling back to "
    "sdpa; causal models: transformers' default). Default: auto.",
)
COMPILE = _opt(
    False,
    "--compile/--no-compile",
    help="torch.compile the T5 encoder (sdpa or flex); the first batches of each shape compile "
    "(the warm-up, reported in the summary). Default: --no-compile.",
)
FAST = _opt(
    True,
    "--fast/--no-fast",
    help="Exact fast rating for 0-5 and yes/no prompts (falls back to generation). Default: --fast.",
)
CACHE = _opt(
    None,
    "--cache",
    help="Response cache (sqlite). Default: $RUBRIC_CACHE_DIR/responses.sqlite (~/.cache/rubric-workbench).",
)
NO_CACHE = _opt(False, "--no-cache", help="Do not read or write the response cache. Default: off.")
SHARD = _opt(None, "--shard", help="Grade only shard i of n (by query), e.g. 2/8. Default: all queries.")
CHECKPOINT = _opt(
    4096,
    "--checkpoint-pairs",
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


def _grade(
    job_fields: dict[str, Any],
    output: Path,
    *,
    local: dict[str, Any],
    api: dict[str, Any],
    shard: str | None,
    devices: str | None,
    workers: int,
    ray: bool,
    ray_address: str | None,
) -> None:
    """Everything both grading commands share: check the options, grade, summarise, exit 1 on failures."""
    from rubric.grading.job import GradeJob
    from rubric.grading.launch import grade_job

    for option, value, minimum in LOCAL_MINIMA:
        lo.at_least(option, local[value], minimum)
    lo.at_least("--workers", workers, 0)
    lo.at_least("--checkpoint-pairs", job_fields["checkpoint_pairs"], 1)
    lo.check_options(api["concurrency"], api["rpm"], api["max_retries"], api["retry_base"], api["timeout"])
    job = GradeJob(**job_fields, backend_options=local | api)
    stats = grade_job(
        job,
        output,
        shard=shard,
        devices=devices,
        workers=workers,
        ray=ray,
        ray_address=ray_address,
        report=info,
    )
    info(stats.summary())
    info(f"wrote {output}: {stats.queries} queries")
    if stats.failures:
        lo.report_failures([str(f) for f in stats.failed], "pairs")


# (option, key of the local-model options, smallest allowed value), checked before any work
LOCAL_MINIMA = (
    ("--batch-size", "batch_size", 0),
    ("--token-budget", "token_budget", 0),
    ("--max-input-tokens", "max_input_tokens", 16),
    ("--max-new-tokens", "max_new_tokens", 1),
    ("--num-beams", "num_beams", 1),
)


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
    model: str | None = MODEL,
    output: Path = OUTPUT,
    device: str = DEVICE,
    dtype: str = DTYPE,
    batch_size: int = BATCH,
    token_budget: int = BUDGET,
    max_input_tokens: int = MAX_IN,
    max_new_tokens: int = MAX_NEW,
    num_beams: int = BEAMS,
    attention: str = ATTENTION,
    compile_encoder: bool = COMPILE,
    fast: bool = FAST,
    cache: Path | None = CACHE,
    no_cache: bool = NO_CACHE,
    shard: str | None = SHARD,
    checkpoint_pairs: int = CHECKPOINT,
    devices: str | None = DEVICES,
    workers: int = WORKERS,
    ray: bool = RAY,
    ray_address: str | None = RAY_ADDRESS,
    query: list[str] = QUERY,
    queries: Path | None = QUERIES,
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
    _grade(
        _job(
            passages,
            prompt,
            prompt_file,
            backend,
            model,
            fast,
            cache,
            no_cache,
            checkpoint_pairs,
            bank=bank,
            selected=selection(query, queries),
        ),
        output,
        local=_options(
            device,
            dtype,
            batch_size,
            token_budget,
            max_input_tokens,
            max_new_tokens,
            num_beams,
            attention,
            compile_encoder,
        ),
        api=_api_options(base_url, api_key_file, concurrency, rpm, max_retries, retry_base, timeout),
        shard=shard,
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
    model: str | None = MODEL,
    output: Path = OUTPUT,
    device: str = DEVICE,
    dtype: str = DTYPE,
    batch_size: int = BATCH,
    token_budget: int = BUDGET,
    max_input_tokens: int = MAX_IN,
    max_new_tokens: int = MAX_NEW,
    num_beams: int = BEAMS,
    attention: str = ATTENTION,
    compile_encoder: bool = COMPILE,
    fast: bool = FAST,
    cache: Path | None = CACHE,
    no_cache: bool = NO_CACHE,
    shard: str | None = SHARD,
    checkpoint_pairs: int = CHECKPOINT,
    devices: str | None = DEVICES,
    workers: int = WORKERS,
    ray: bool = RAY,
    ray_address: str | None = RAY_ADDRESS,
    query: list[str] = QUERY,
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
    _grade(
        _job(
            passages,
            prompt,
            prompt_file,
            backend,
            model,
            fast,
            cache,
            no_cache,
            checkpoint_pairs,
            queries=queries,
            selected=selection(query, None),
        ),
        output,
        local=_options(
            device,
            dtype,
            batch_size,
            token_budget,
            max_input_tokens,
            max_new_tokens,
            num_beams,
            attention,
            compile_encoder,
        ),
        api=_api_options(base_url, api_key_file, concurrency, rpm, max_retries, retry_base, timeout),
        shard=shard,
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


def _job(
    passages: Path,
    prompts: list[str],
    prompt_files: list[Path] | None,
    backend: str,
    model: str | None,
    fast: bool,
    cache: Path | None,
    no_cache: bool,
    checkpoint_pairs: int,
    bank: Path | None = None,
    queries: Path | None = None,
    selected: QuerySelection | None = None,
) -> dict[str, Any]:
    """The fields of a :class:`~rubric.grading.job.GradeJob` (built once the ranges are checked)."""
    return dict(
        passages=passages,
        prompts=tuple(prompts),
        bank=bank,
        queries=queries,
        prompt_files=tuple(prompt_files or ()),
        backend=backend,
        model=model,
        fast=fast,
        cache=cache,
        use_cache=not no_cache,
        checkpoint_pairs=checkpoint_pairs,
        query_ids=None if selected is None else selected.ids,
    )


def _options(
    device: str,
    dtype: str,
    batch_size: int,
    token_budget: int,
    max_in: int,
    max_new: int,
    beams: int,
    attention: str,
    compile_encoder: bool,
) -> dict[str, Any]:
    """Options of the local backends; the attention settings only when chosen, so a backend
    without them (openai) refuses them only when they are asked for."""
    return {
        "attention": None if attention == "auto" else attention,
        "compile": compile_encoder or None,
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
    """Options of the openai backend, passed to every backend: by the registry's contract the local
    ones ignore what they do not know."""
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
