"""Command functions for RAG nugget evaluation: `rubric grade assign` and `rubric evaluate nuggets`.

They live here (not in cli/grade.py or cli/evaluate.py) so the grade and evaluate groups only
register them: ``app.command("assign")(assign_command)``, ``app.command("nuggets")(nuggets_command)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, OutputPath, emit, info

LeaderboardFormat = Annotated[
    choices.ReportFormat, typer.Option("--format", help="Leaderboard format on stdout: tsv, json or latex.")
]


@opt.option_groups
def assign_command(
    answers: Annotated[
        list[Path],
        typer.Argument(
            help="TREC RAG 2024/2025 answer files, or passages files (a run's passages for a query "
            "form its answer)."
        ),
    ],
    bank: Annotated[
        Path, typer.Option("--bank", "-b", help="Nugget bank (e.g. from `rubric bank nuggetize`).")
    ] = ...,
    topics: Annotated[
        Path,
        typer.Option(
            "--topics", help="Query texts. [default: the answers' topics, else the bank's query_text]"
        ),
    ] = None,
    prompt: Annotated[
        str, typer.Option("--prompt", help="Assignment prompt name or TOML file.")
    ] = "AutoNuggetizerAssign",
    prompt_file: opt.PromptFiles = None,
    batch: Annotated[
        int, typer.Option("--batch", help="Nuggets per LLM call (the paper uses at most 10).")
    ] = 10,
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="ASSIGNED file to write (.jsonl or .jsonl.gz).")
    ] = ...,
    subset: opt.QueryOptions = ...,
    llm: opt.ChatOptions = ...,
) -> None:
    """Listwise nugget assignment: support / partial_support / not_support per nugget and answer.

    Writes one record per (run, query) with every nugget's id, text, importance and assignment.
    Any text backend asks (an OpenAI-compatible server, or a local model with --backend hf-causal
    / ct2-causal, the answer cut by tokens to fit --max-input-tokens). Batches that fail after all
    retries and re-asks are listed (exit code 1) and left unassigned. --backend embedding writes
    a baseline instead (no LLM: each nugget against the answer's most similar sentence or passage,
    support from cosine 0.45, partial_support from 0.25), its records marked method
    embedding-baseline.

    Example: rubric grade assign run1.jsonl run2.jsonl --bank nuggets.jsonl.gz --model gpt-4o
    -o assigned.jsonl.gz; offline: --backend hf-causal --model smollm2-135m
    """
    from rubric.grading.assign import assign_file

    outcome = assign_file(
        answers,
        bank,
        output,
        llm,
        queries=topics,
        prompt=prompt,
        prompt_files=prompt_file,
        batch=batch,
        selection=subset.selection,
    )
    opt.finish(outcome)


@opt.option_groups
def nuggets_command(
    assigned: Annotated[Path, typer.Argument(help="ASSIGNED file from `rubric grade assign`.")],
    output: Annotated[
        OptionalOutputPath,
        typer.Option("--output", "-o", help="Also write the per-(run, query) scores here (TSV)."),
    ] = None,
    fmt: LeaderboardFormat = "tsv",
    subset: opt.QueryOptions = ...,
) -> None:
    """Nugget scores per run: V_strict, V_partial, A_strict, A_partial (mean over queries, stderr).

    Strict counts support as 1; partial also counts partial_support as 0.5. A run without an
    answer to a query scores 0 there; queries without vital nuggets are left out of V_*.

    Example: rubric evaluate nuggets assigned.jsonl.gz -o per-query.tsv
    """
    from rubric.evaluate.nuggets import nuggets_output

    done = nuggets_output(assigned, fmt, output, subset.selection)
    emit(done.text, None)  # -o holds the per-query scores; the leaderboard goes to stdout
    for note in done.notes:
        info(note)


@opt.option_groups
def support_command(
    answers: Annotated[
        list[Path],
        typer.Argument(
            help="TREC RAG answer files (ragnarok JSONL: topic_id, answer: [{text, citations: [index]}], "
            "references: [segment id])."
        ),
    ],
    segments: Annotated[
        list[Path],
        typer.Option(
            "--segments",
            help="Texts of the cited segments (repeatable): MS MARCO v2.1 segment JSONL ({docid, title, "
            "segment}, .gz too), or any collection format `convert runs --collection` reads. Only the "
            "cited ids are kept.",
        ),
    ] = ...,
    output: Annotated[
        OutputPath,
        typer.Option(
            "--output", "-o", help="SUPPORT file to write: every sentence's citations with their support."
        ),
    ] = ...,
    prompt: Annotated[
        str, typer.Option("--prompt", help="Support prompt name or TOML file.")
    ] = "TREC24Support",
    prompt_file: opt.PromptFiles = None,
    fmt: LeaderboardFormat = "tsv",
    llm: opt.ChatOptions = ...,
) -> None:
    """Citation support: each answer sentence against each segment it cites, judged by an LLM.

    The TREC 2024 RAG track's support evaluation (Thakur et al. 2025): the paper's prompt asks for
    Full, Partial or No Support per (sentence, cited segment) pair; per run, weighted precision
    (mean support over the citations: 1, 0.5, 0) and weighted recall (mean over sentences of their
    best-supported citation, an uncited sentence 0), averaged over topics. Pairs that fail after
    all retries are listed (exit code 1) and their answers left out of the scores.

    Example: rubric evaluate support run.jsonl --segments segments.jsonl.gz -m gpt-4o -o support.jsonl
    """
    from rubric.data.table import check_format
    from rubric.evaluate.report import FORMATS
    from rubric.evaluate.support import support_scores
    from rubric.grading.support import support_file

    check_format(fmt, FORMATS)
    outcome, records = support_file(answers, segments, output, llm, prompt=prompt, prompt_files=prompt_file)
    report = support_scores(records)
    emit(report.render(fmt), None)
    for note in report.notes:
        info(note)
    opt.finish(outcome)
