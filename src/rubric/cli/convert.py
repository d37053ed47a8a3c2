"""`rubric convert`: bring runs, qrels, collections, RAG answers and topics into the workbench."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, OutputPath, info, phase_app
from rubric.data.table import counted

app = phase_app("Convert runs, qrels, collections, RAG answers and topics into workbench files.")

PassagesOutput = Annotated[
    OutputPath, typer.Option("--output", "-o", help="Passages file to write (.jsonl.gz).")
]


@app.command("runs")
def runs_command(
    runs_args: Annotated[
        list[Path], typer.Argument(metavar="RUN", help=opt.RUN_HELP, show_default=False)
    ] = None,
    queries: Annotated[
        Path,
        typer.Option(
            "--topics",
            metavar="FILE",
            help="Query texts (topics): JSON {qid: text}, TSV, JSONL, or irds:ID (ir_datasets).",
        ),
    ] = ...,
    collection: Annotated[
        list[Path],
        typer.Option(
            "--collection",
            "-C",
            metavar="FILE",
            help="Passage texts (repeatable): TSV docid<TAB>text, JSON lines with an id and a text field "
            "(Pyserini corpora: id, contents), a workbench passages file, RankLLM/Pyserini candidate "
            "JSON (retrieve_results_*.json), or irds:ID (an ir_datasets corpus, looked up by id).",
        ),
    ] = ...,
    runs: Annotated[
        list[Path],
        typer.Option(
            "--run", "-r", metavar="RUN", help="As the arguments: " + opt.RUN_HELP, show_default=False
        ),
    ] = None,
    qrels: Annotated[
        Path | None,
        typer.Option(
            "--qrels",
            help="Judgments (TREC qrels, or irds:ID): every judged passage is pooled with its relevance.",
        ),
    ] = None,
    top_k: Annotated[int, typer.Option("--top-k", "-k", min=0, help="Pool depth per run and query.")] = 20,
    name_from: Annotated[
        choices.NameFrom,
        typer.Option(
            "--name-from", help="Run name: 'tag' (column 6) or 'file' (file name without input./.gz)."
        ),
    ] = "tag",
    allow_missing: Annotated[
        bool,
        typer.Option("--allow-missing", help="Leave out pooled passages without text instead of failing."),
    ] = False,
    output: PassagesOutput = ...,
) -> None:
    """Pool the top-k of every run plus every judged passage into a passages file.

    Queries not in the queries file are ignored. Ranks follow trec_eval (score descending as
    32-bit floats, ties by docid descending), not the run's rank column.

    Example: rubric convert runs --topics topics.tsv --collection collection.tsv
    --qrels qrels.txt --top-k 20 runs/ -o passages.jsonl.gz
    """
    from rubric.convert.pool import pool_file

    run_paths = [*(runs or []), *(runs_args or [])]
    lines = pool_file(
        queries,
        run_paths,
        collection,
        output,
        qrels=qrels,
        top_k=top_k,
        name_from=name_from,
        allow_missing=allow_missing,
    )
    for line in lines:
        info(line)


@app.command("rag")
def rag_command(
    answers: Annotated[
        list[Path],
        typer.Option("--answers", "-a", help="TREC RAG 2024/2025 answer files (JSONL; repeatable)."),
    ],
    extra_answers: Annotated[list[Path], typer.Argument(help="More answer files.")] = None,
    segment: Annotated[
        str, typer.Option("--segment", help="'sentence' (one passage per answer sentence) or 'words:N'.")
    ] = "sentence",
    queries_out: Annotated[
        OptionalOutputPath,
        typer.Option("--queries-out", help="Also write the topics {qid: text} as queries JSON."),
    ] = None,
    output: PassagesOutput = ...,
) -> None:
    """Turn RAG answers into passages: the run id is the ranking method, order is the rank.

    Example: rubric convert rag --answers run1.jsonl --answers run2.jsonl --segment words:400
    -o rag-passages.jsonl.gz --queries-out topics.json
    """
    from rubric.convert.rag import answers_file

    paths = [*answers, *(extra_answers or [])]
    info(answers_file(paths, output, segment=segment, queries_out=queries_out))


@app.command("queries")
def queries_command(
    source: Annotated[Path, typer.Argument(help="Queries: JSON {qid: text}, TREC topics TSV, or JSONL.")],
    output: Annotated[OutputPath, typer.Option("--output", "-o", help="File to write.")] = ...,
    fmt: Annotated[
        choices.QueriesFormat, typer.Option("--format", "-f", help="Output format: json, tsv or jsonl.")
    ] = "json",
) -> None:
    """Convert queries between JSON {qid: text}, TSV (qid<TAB>text) and JSONL {qid, query}.

    Example: rubric convert queries topics.dl19-passage.txt -o dl19-queries.json
    """
    from rubric.data.queries import read_queries, write_queries

    qs = read_queries(source)
    write_queries(output, qs, fmt)
    info(f"wrote {output}: {counted(len(qs), 'query')}")


@app.command("check")
def check_command(
    files: Annotated[list[Path], typer.Argument(help="Passages files or test banks (.jsonl or .jsonl.gz).")],
) -> None:
    """Validate workbench files line by line and summarise what they hold.

    Passages files: queries, passages, judgments, runs and the kinds of grades (the values to
    pass to --prompt-class/--llm/--prompt-type). Banks: queries and items. Exit code 2 with
    file:line at the first bad line.

    Example: rubric convert check graded.jsonl.gz bank.jsonl.gz
    """
    from rubric.data.check import describe

    for path in files:
        for line in describe(path):
            typer.echo(line)
