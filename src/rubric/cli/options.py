"""The options several commands share, each defined once as a ``typing.Annotated`` type.

A command declares ``output: Annotated[OutputPath, typer.Option("--output", ...)]`` (the output
guard finds what a command writes by this type), ``query: QueryIds = None`` and so on; every
option is ``name: Annotated[type, typer.Option(...)] = default``, as Typer documents it. Sets of
options that travel together are dataclasses of such types: a command takes ``llm: ChatOptions`` and
:func:`option_groups` gives Typer the dataclass's fields as options and the command the object,
so the thirteen options of the OpenAI-compatible backend are written here only. The option
dataclasses subclass the library's settings (:mod:`rubric.llm.settings`,
:mod:`rubric.grading.settings`), which check the values and build the backend and its response
cache, so a dataclass here only declares options.

Nothing heavy is imported here (``rubric --help`` stays fast): the ``openai`` client loads when
a backend is built.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from rubric.cli import choices
from rubric.cli.common import WRITES, info
from rubric.grading.settings import GradeSettings
from rubric.llm.registry import backends_help
from rubric.llm.settings import ApiSettings, ChatSettings, LocalSettings

if typing.TYPE_CHECKING:
    from rubric.outcome import Outcome

# --- query subsets ------------------------------------------------------------------------------
# No short names: ``-q`` already means other things in some commands (``--per-query``).

QueryIds = Annotated[
    list[str] | None,
    typer.Option(
        "--query", help="Only this query id (repeatable; with --queries, the union). [default: every query]"
    ),
]
QueriesFile = Annotated[
    Path | None,
    typer.Option(
        "--queries",
        help="Only the queries of this file: queries JSON {qid: text}, JSON lines, TREC topics TSV, "
        "or one id per line.",
    ),
]


def selection(query: list[str] | None, queries: Path | None):
    """The :class:`~rubric.data.query_selection.QuerySelection` of ``--query`` and ``--queries``."""
    from rubric.data.query_selection import QuerySelection

    return QuerySelection.from_options(query, queries)


ReportPath = Annotated[
    Path | None,
    WRITES,
    typer.Option("--output", "-o", help="Write the report here (atomically) instead of stdout."),
]

# --- the response cache -------------------------------------------------------------------------

Cache = Annotated[
    Path | None,
    typer.Option(
        "--cache",
        help="sqlite response cache; re-runs only ask new prompts. "
        "[default: $RUBRIC_CACHE_DIR/responses.sqlite, or ~/.cache/rubric-workbench/responses.sqlite]",
    ),
]
NoCache = Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")]
PromptFiles = Annotated[
    list[Path] | None, typer.Option("--prompt-file", help="Your own prompt file (TOML); repeatable.")
]

# --- the OpenAI-compatible backend --------------------------------------------------------------


@dataclasses.dataclass
class ApiOptions(ApiSettings):
    """How to reach an OpenAI-compatible server (also passed to the grading backends, which
    ignore what they do not know); the library's settings with their options."""

    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1 for vLLM. "
            "[default: $OPENAI_BASE_URL, else https://api.openai.com/v1]",
        ),
    ] = None
    api_key_file: Annotated[
        Path | None,
        typer.Option(
            "--api-key-file",
            help="File whose first line is the API key. [default: $OPENAI_API_KEY; none for local "
            "servers] The key is never written to any output, cache or log.",
        ),
    ] = None
    concurrency: Annotated[
        int, typer.Option("--concurrency", help="Requests in flight at once (at least 1).")
    ] = 8
    rpm: Annotated[
        float | None, typer.Option("--rpm", help="At most this many requests per minute. [default: no limit]")
    ] = None
    max_retries: Annotated[
        int,
        typer.Option(
            "--max-retries",
            help="Retries of a request after 429, 5xx, timeouts, connection errors or unreadable replies.",
        ),
    ] = 6
    retry_base: Annotated[
        float,
        typer.Option(
            "--retry-base",
            help="First backoff delay in seconds; doubles per retry, with jitter, capped at 60 s "
            "(a server's Retry-After wins).",
        ),
    ] = 1.0
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds to wait for one answer before retrying (> 0).")
    ] = 120.0


def backend_option(default: str) -> Any:
    """``--backend NAME``: every command that asks a model takes it, with the registry's list."""
    return typer.Option("--backend", help=f"Backend: {backends_help()}. Default: {default}.")


@dataclasses.dataclass
class ChatOptions(ChatSettings):
    """Every option of a command that asks a model for lists (bank generation, nuggetizing,
    assignment): the library's :class:`~rubric.llm.settings.ChatSettings`, which checks them and
    builds the backend and its cache; backend, server and local-model options as `rubric grade`'s."""

    model: Annotated[
        str,
        typer.Option(
            "--model",
            help="Model: its name on the server (openai: gpt-4o, a vLLM model), or for local backends a "
            "hub name, local folder or packaged short name (smollm2-135m).",
        ),
    ]
    api: ApiOptions
    backend: Annotated[str, backend_option("openai")] = "openai"
    local: LocalOptions = dataclasses.field(default_factory=lambda: LocalOptions())
    temperature: Annotated[
        float,
        typer.Option(
            "--temperature",
            help="Sampling temperature of the openai backend, 0 to 2 (0 = greedy, reproducible); local "
            "backends decode greedily.",
        ),
    ] = 0.0
    cache: Cache = None
    no_cache: NoCache = False
    parse_retries: Annotated[
        int,
        typer.Option(
            "--parse-retries", help="Re-asks (with a reminder of the format) when an answer cannot be parsed."
        ),
    ] = 2


def finish(outcome: Outcome) -> None:
    """Print a run's summary and failures on stderr; failures end the command with exit code 1
    (the output holds everything else)."""
    for line in outcome.lines():
        info(line)
    if outcome.failures:
        raise typer.Exit(1)


# --- the grading commands -----------------------------------------------------------------------


def _opt(*names: str, help: str) -> Any:  # noqa: A002 - typer's name
    return typer.Option(*names, help=help)


@dataclasses.dataclass
class LocalOptions(LocalSettings):
    """How a local model runs (the openai backend refuses those it cannot honour)."""

    device: Annotated[
        str, _opt("--device", help="cpu, cuda, cuda:N or auto (cuda when available). Default: auto.")
    ] = "auto"
    dtype: Annotated[
        choices.Dtype,
        _opt("--dtype", help="float32, bfloat16, float16 or auto (bf16 on GPU, fp32 on CPU). Default: auto."),
    ] = "auto"
    batch_size: Annotated[
        int,
        _opt(
            "--batch-size",
            help="Prompts per batch (length-sorted); 0 = auto: 8 on CPU, 64 on GPU. Default: 0.",
        ),
    ] = 0
    token_budget: Annotated[
        int, _opt("--token-budget", help="Cap a batch at this many padded input tokens; 0 = off. Default: 0.")
    ] = 0
    max_input_tokens: Annotated[
        int,
        _opt(
            "--max-input-tokens",
            help="Contexts are cut (by tokens) so prompts fit (>= 16); the original tool's prompt "
            "classes are cut by its rule (512 - question - special tokens - 5 context tokens). "
            "--backend openai counts the tokens of --api-tokenizer, fails a prompt still over it "
            "without sending it, and takes 0: whole passages, uncut. Default: 512.",
        ),
    ] = 512
    api_tokenizer: Annotated[
        str,
        _opt(
            "--api-tokenizer",
            help="--backend openai: the tokenizer that counts --max-input-tokens (a folder with "
            "tokenizer.json, the file, or a hub name in the local cache); loaded only for prompts "
            "longer in bytes than the limit. Default: $RUBRIC_API_TOKENIZER where set, else "
            "openai-community/gpt2 (the original's).",
        ),
    ] = "openai-community/gpt2"
    max_new_tokens: Annotated[
        int | None,
        _opt(
            "--max-new-tokens",
            help="Longest generated answer in tokens (>= 1). Default: 32 in rubric grade; in bank generate, "
            "bank nuggetize, grade assign and evaluate support 512 for local models and the server's limit "
            "for openai.",
        ),
    ] = None
    num_beams: Annotated[
        int, _opt("--num-beams", help="1 = greedy (default); 5 = the original tool's beam search (slower).")
    ] = 1
    attention: Annotated[
        choices.Attention,
        _opt(
            "--attention",
            help="Attention of local models: eager (transformers' own), sdpa, flex (T5: the relative "
            "position bias inside a fused kernel; flex packs prompts without padding) or auto: the "
            "fastest path whose grades equal eager's on the device (T5: sdpa, measured fastest on CPU "
            "and on an H200; flex takes less GPU memory; causal models: transformers' default). "
            "Default: auto.",
        ),
    ] = "auto"
    compile_encoder: Annotated[
        bool,
        _opt(
            "--compile/--no-compile",
            help="torch.compile the T5 encoder (sdpa or flex); the first batches of each shape compile "
            "(the warm-up, reported in the summary). Default: --no-compile.",
        ),
    ] = False
    compute_type: Annotated[
        choices.ComputeType,
        _opt(
            "--compute-type",
            help="Arithmetic of the ct2 backends: float32, int8, int8_float16, float16 or auto (float32 "
            "on CPU, float16 on CUDA); the model is converted once per compute type. Default: auto.",
        ),
    ] = "auto"
    threads: Annotated[
        int,
        _opt(
            "--threads",
            help="CPU threads of one ct2 model; 0 = $OMP_NUM_THREADS, else 1. Default: 0.",
        ),
    ] = 0


@dataclasses.dataclass
class GradeOptions(GradeSettings):
    """Every option the two grading commands (``exam`` and ``direct``) share: the library's
    :class:`~rubric.grading.settings.GradeSettings`, which grades with them."""

    output: Annotated[
        Path, WRITES, _opt("--output", "-o", help="Graded passages file to write (.jsonl.gz); required.")
    ]
    prompt_file: Annotated[
        list[Path] | None,
        _opt("--prompt-file", help="Your own prompt file (TOML); repeatable. Default: none."),
    ] = None
    backend: Annotated[str, backend_option("hf-seq2seq")] = "hf-seq2seq"
    model: Annotated[
        str | None,
        _opt(
            "--model",
            help="Hub name, local folder or packaged short name (smollm2-135m, minilm-l6). Default: "
            "google/flan-t5-large for hf-seq2seq, minilm-l6 for embedding; the other backends need one.",
        ),
    ] = None
    local: LocalOptions = dataclasses.field(default_factory=LocalOptions)
    fast: Annotated[
        bool,
        _opt(
            "--fast/--no-fast",
            help="Exact fast rating for 0-5 and yes/no prompts (falls back to generation). Default: --fast.",
        ),
    ] = True
    cache: Cache = None
    no_cache: NoCache = False
    shard: Annotated[
        str | None,
        _opt("--shard", help="Grade only shard i of n (by query), e.g. 2/8. Default: all queries."),
    ] = None
    checkpoint_pairs: Annotated[
        int,
        _opt(
            "--checkpoint-pairs",
            help="Save finished queries to OUT.partial after about this many pairs (resume granularity; "
            "also the span of cross-query batching). Default: 4096.",
        ),
    ] = 4096
    devices: Annotated[
        str | None,
        _opt(
            "--devices",
            help="One worker process per listed device, e.g. cuda:0,cuda:1 (cpu,cpu works too); each "
            "grades a share of the queries and the output equals a one-process run. Default: one "
            "process on --device.",
        ),
    ] = None
    workers: Annotated[
        int,
        _opt(
            "--workers",
            help="N worker processes on --device: cuda takes GPUs cuda:0..N-1, cpu starts N CPU "
            "processes; with --ray, N shards. 0 = one process. Default: 0.",
        ),
    ] = 0
    ray: Annotated[
        bool,
        _opt(
            "--ray",
            help="Grade --workers N shards as Ray tasks, one GPU each (--device cpu: one CPU each); needs "
            "the 'ray' extra. Default: off.",
        ),
    ] = False
    ray_address: Annotated[
        str | None,
        _opt(
            "--ray-address",
            help="Ray cluster to use (auto, HOST:6379, ray://HOST:10001). Default: a private local instance.",
        ),
    ] = None
    query: QueryIds = None
    api: ApiOptions = dataclasses.field(default_factory=ApiOptions)


# --- option groups as command parameters --------------------------------------------------------


def _is_group(hint: Any) -> bool:
    return dataclasses.is_dataclass(hint) and isinstance(hint, type)


def _flatten(group: type) -> list[tuple[inspect.Parameter, list[str]]]:
    """The group's fields as keyword parameters (nested groups flattened), with the path of
    attribute names that leads to each."""
    hints = typing.get_type_hints(group, include_extras=True)
    out: list[tuple[inspect.Parameter, list[str]]] = []
    for f in dataclasses.fields(group):
        hint = hints[f.name]
        if _is_group(hint):
            out.extend((p, [f.name, *path]) for p, path in _flatten(hint))
            continue
        default = f.default if f.default is not dataclasses.MISSING else inspect.Parameter.empty
        parameter = inspect.Parameter(
            f.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=hint
        )
        out.append((parameter, [f.name]))
    return out


def _build(group: type, values: dict[str, Any]) -> Any:
    hints = typing.get_type_hints(group, include_extras=True)
    return group(**{f.name: _build(hints[f.name], values) if _is_group(hints[f.name]) else values[f.name]
                    for f in dataclasses.fields(group)})  # fmt: skip


def option_groups(command: Callable[..., Any]) -> Callable[..., Any]:
    """Let a command take option groups: a parameter typed by one of the dataclasses above is
    shown to Typer as the dataclass's options and reaches the command as one object."""
    hints = typing.get_type_hints(command, include_extras=True)
    parameters: list[inspect.Parameter] = []
    groups: dict[str, type] = {}
    for p in inspect.signature(command).parameters.values():
        hint = hints.get(p.name, p.annotation)
        if _is_group(hint):
            groups[p.name] = hint
            parameters.extend(q for q, _ in _flatten(hint))
        else:
            parameters.append(p.replace(annotation=hint, kind=inspect.Parameter.KEYWORD_ONLY))
    names = [p.name for p in parameters]
    if len(set(names)) != len(names):
        raise TypeError(f"{command.__name__}: two options share a name")

    @functools.wraps(command)
    def grouped(**values: Any) -> Any:
        for name, group in groups.items():
            taken = {p.name for p, _ in _flatten(group)}
            values[name] = _build(group, {k: values.pop(k) for k in taken})
        return command(**values)

    grouped.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    grouped.__annotations__ = {p.name: p.annotation for p in parameters}
    del grouped.__wrapped__  # Typer and the output guard read the options, not the groups
    return grouped


# --- which grades of a graded file -------------------------------------------------------------

PromptClass = Annotated[
    str | None,
    typer.Option(
        "--prompt",
        "--prompt-class",
        "--rating-prompt",
        "-p",
        help="Grades of this prompt class; needed only when the file holds several kinds.",
    ),
]
Llm = Annotated[
    str | None,
    typer.Option("--llm", help="Grades of this LLM; needed only when the file holds several kinds."),
]
PromptType = Annotated[
    str | None,
    typer.Option(
        "--prompt-type",
        help="Grades of this type: question, nugget or direct (default: any, if unambiguous).",
    ),
]


@dataclasses.dataclass
class QueryOptions:
    """``--query`` and ``--queries``: the queries a command reads."""

    query: QueryIds = None
    queries: QueriesFile = None

    def selection(self) -> Any:
        """The :class:`~rubric.data.query_selection.QuerySelection` of the two options."""
        return selection(self.query, self.queries)


@dataclasses.dataclass
class KindOptions:
    """Which grades of a graded file: prompt class, LLM, prompt type."""

    prompt_class: PromptClass = None
    llm: Llm = None
    prompt_type: PromptType = None

    def grade_filter(self) -> Any:
        from rubric.data.grade_filter import GradeFilter

        return GradeFilter(self.prompt_class, self.llm, self.prompt_type)


GRADED_HELP = "Graded passages file (.jsonl.gz) from `rubric grade` or the original workbench."


@dataclasses.dataclass
class GradedOptions:
    """The graded file a report reads, which of its grades and which queries."""

    graded: Annotated[Path, typer.Argument(help=GRADED_HELP)]
    kind: KindOptions = dataclasses.field(default_factory=KindOptions)
    subset: QueryOptions = dataclasses.field(default_factory=QueryOptions)

    def selection(self) -> Any:
        """The :class:`~rubric.verify.report.GradedSelection` the options name."""
        from rubric.verify.report import GradedSelection

        return GradedSelection(self.graded, self.kind.grade_filter(), self.subset.selection())


@dataclasses.dataclass
class RowTables:
    """How a report of row tables is written: ``--format`` (checked at once) and ``-o``."""

    fmt: Annotated[choices.TableFormat, typer.Option("--format", "-f", help="tsv, csv or md (Markdown).")] = (
        "tsv"
    )
    output: ReportPath = None

    def __post_init__(self) -> None:
        from rubric.data.table import check_format

        check_format(self.fmt, ("tsv", "csv", "md"))


# --- figures ------------------------------------------------------------------------------------

Dpi = Annotated[
    int, typer.Option("--dpi", min=30, max=1200, help="Resolution of a PNG figure, in dots per inch.")
]
ByRow = Annotated[
    bool,
    typer.Option(
        "--by-row",
        help="Heatmap: colour each cell by its share of the row (row-normalised), not by its count.",
    ),
]

# --- runs, qrels and reports --------------------------------------------------------------------

RUN_HELP = (
    "Run file (TREC format, plain or .gz), directory of runs, or NAME=FILE to name a run whatever "
    "its tag and file name (repeatable)."
)
Runs = Annotated[list[Path], typer.Option("--run", "-r", metavar="RUN", help=RUN_HELP)]
QrelsFile = Annotated[
    Path,
    typer.Option(
        "--qrels",
        help="Qrels file (TREC format, plain or .gz), or irds:ID: an ir_datasets dataset's qrels "
        "(the irds extra).",
    ),
]
Level = Annotated[
    int, typer.Option("--level", "-l", min=1, help="trec_eval -l: grades >= this are relevant.")
]
NameFrom = Annotated[
    choices.NameFrom, typer.Option("--name-from", help="Run name: 'tag' (column 6) or 'file'.")
]
Label = Annotated[
    str,
    typer.Option(
        "--label", help="Passage label from item grades: max, count (items >= --min-grade) or nth:M."
    ),
]
CountFrom = Annotated[
    int, typer.Option("--min-grade", min=0, max=5, help="Item grade that counts for --label count.")
]
