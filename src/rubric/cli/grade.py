"""`rubric grade`: an LLM grades every (passage, test item) pair, or (passage, query) for direct prompts.

``rubric grade PASSAGES --bank BANK --prompt NAME ...`` is short for ``rubric grade exam ...``: a
first argument that is not a subcommand goes to the default command ``exam``. Nothing heavy is
imported here at module level (``rubric --help`` stays fast); torch loads inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import DefaultCommandGroup, OutputPath, info, phase_app, updates_in_place
from rubric.cli.rag_nuggets import assign_command

app = phase_app(
    "Grade passages with an LLM: exam questions / nuggets of a test bank (default command "
    f"'{DefaultCommandGroup.default_command}', so "
    "`rubric grade PASSAGES --bank ...` works), direct relevance prompts, and merge shards.",
    cls=DefaultCommandGroup,
)


Passages = Annotated[Path, typer.Argument(help="Passages file (.jsonl or .jsonl.gz) from `rubric convert`.")]


@app.command("exam")
@updates_in_place("passages")
@opt.option_groups
def exam_command(
    passages: Passages,
    bank: Annotated[
        Path, typer.Option("--bank", "-b", help="Test bank (questions or nuggets, JSONL); required.")
    ] = ...,
    prompt: Annotated[
        list[str],
        typer.Option(
            "--prompt",
            "-p",
            help="Question, nugget or verify prompt name (see `rubric prompts list`); repeatable.",
        ),
    ] = ...,
    options: opt.GradeOptions = ...,
    queries: opt.QueriesFile = None,
) -> None:
    """Grade every (passage, bank item) pair; grades go into each passage's exam_grades.

    A grade record with the same prompt class and LLM is replaced, others are kept, so grading
    again with another prompt adds to the file. A killed run resumes when rerun. A verify prompt
    (QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2) extracts an answer, then asks the LLM
    whether it matches each gold answer of the question.

    Example: rubric grade passages.jsonl.gz --bank questions.jsonl.gz
    --prompt QuestionSelfRatedUnanswerablePromptWithChoices -o graded.jsonl.gz
    """
    opt.finish(options.grade(passages, prompt, bank=bank, subset=queries))


@app.command("direct")
@updates_in_place("passages")
@opt.option_groups
def direct_command(
    passages: Passages,
    queries: Annotated[
        Path, typer.Option("--topics", help="Query texts (topics): JSON, TSV or JSONL; required.")
    ] = ...,
    prompt: Annotated[
        list[str],
        typer.Option(
            "--prompt",
            "-p",
            help="Direct prompt: Sun, Sun_few, FagB, FagB_few, HELM, Thomas, UMBRELA, LLMJudge "
            "(`rubric prompts list --kind direct`); repeatable.",
        ),
    ] = ...,
    options: opt.GradeOptions = ...,
) -> None:
    """Grade every (passage, query) pair with direct relevance prompts; grades go into `grades`.

    Example: rubric grade direct passages.jsonl.gz --topics queries.tsv --prompt Sun -o graded.jsonl.gz
    """
    opt.finish(options.grade(passages, prompt, queries=queries))


@app.command("import")
@updates_in_place("graded")
def import_command(
    graded: Annotated[Path, typer.Argument(help="Graded (or pooled) passages file (.jsonl or .jsonl.gz).")],
    qrels: opt.QrelsFile = ...,
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Graded passages file to write.")
    ] = ...,
    as_: Annotated[
        choices.GradesAs,
        typer.Option(
            "--as",
            help="grades: a direct grade per judged passage (llm 'imported'); judgments: the passage's "
            "judgments replaced by the label; both.",
        ),
    ] = "grades",
    prompt_class: Annotated[
        str, typer.Option("--prompt-class", help="The imported grades' prompt_class (select them with it).")
    ] = "QrelImport",
    append_judgments: Annotated[
        bool,
        typer.Option(
            "--append-judgments", help="--as judgments/both: add the label to the passage's judgments."
        ),
    ] = False,
    topics: Annotated[
        Path | None,
        typer.Option("--topics", help="Query texts, recorded as the judgments' titleQuery. [default: none]"),
    ] = None,
) -> None:
    """Import a qrels file's labels into a graded passages file, as grades or as judgments.

    As the original's exam_import_judgments: other judges' labels (NIST, UMBRELA, learned) then
    go through every report like a prompt's grades.

    Example: rubric grade import graded.jsonl.gz --qrels umbrela.qrels --prompt-class UMBRELA-qrels -o g.jsonl
    """
    from rubric.grading.judgments import import_judgments_file

    for line in import_judgments_file(
        graded,
        qrels,
        output,
        prompt_class=prompt_class,
        as_=as_,
        append_judgments=append_judgments,
        topics=topics,
    ):
        info(line)


@app.command("merge")
def merge_command(
    parts: Annotated[list[Path], typer.Argument(help="Graded parts written with --shard i/n.")],
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Graded passages file to write (.jsonl.gz).")
    ] = ...,
    order: Annotated[
        Path | None,
        typer.Option(
            "--order",
            help="Passages file whose query order the merged file keeps (then it equals an unsharded run). "
            "Default: the parts' order.",
        ),
    ] = None,
) -> None:
    """Join the parts of a sharded grading run into one file; a query in two parts is an error.

    Memory holds one query: the parts are copied line by line (with --order, read side by side,
    or gathered in a temporary file on disk when a part holds its queries in another order).

    Example: rubric grade merge part-*.jsonl.gz --order passages.jsonl.gz -o graded.jsonl.gz
    """
    from rubric.grading.shards import merge_parts

    n = merge_parts(parts, output, order)
    info(f"wrote {output}: {n} queries from {len(parts)} parts")


# `rubric grade assign` (listwise AutoNuggetizer assignment) lives with the RAG nugget commands.
app.command("assign")(assign_command)
