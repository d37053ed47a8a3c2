"""`rubric bank`: create, import, inspect and edit test banks (Phase 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, OutputPath, info, phase_app, updates_in_place

app = phase_app(
    "Phase 1: test banks of exam questions or nuggets (generate, nuggetize, import, show, edit, diff, split)."
)


Topics = Annotated[
    Path, typer.Option("--topics", help="Query texts (topics): JSON {qid: text}, TSV or JSONL.")
]
TestCollection = Annotated[str, typer.Option("--test-collection", help="Recorded in each bank.")]


@app.command("generate")
@opt.option_groups
def generate(
    queries: Topics,
    kind: Annotated[
        choices.BankKind, typer.Option("--kind", help="What to generate: questions or nuggets.")
    ] = "questions",
    style: Annotated[
        choices.BankStyle,
        typer.Option(
            "--style", help="dl: break the query into items; car: query title + subtopics from --facets."
        ),
    ] = "dl",
    facets: Annotated[
        Path,
        typer.Option(
            "--facets", help="CAR subtopics: TSV qid<TAB>facet_id<TAB>text or JSON {qid: {facet_id: text}}."
        ),
    ] = None,
    per_query: Annotated[
        int, typer.Option("--items-per-query", help="Items to ask for per query (the DL prompts' count).")
    ] = 10,
    prompt: Annotated[
        str,
        typer.Option(
            "--prompt", help="Prompt name or TOML file. [default: Generate{Questions,Nuggets}{DL,CAR}]"
        ),
    ] = None,
    prompt_file: opt.PromptFiles = None,
    test_collection: TestCollection = "",
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Bank file to write (.jsonl or .jsonl.gz).")
    ] = ...,
    llm: opt.ChatOptions = ...,
) -> None:
    """Generate questions or nuggets per query with an LLM (RUBRIC / EXAM++ / Workbench prompts).

    Item ids are qid[/facet]/md5(text). Exit code 1 when some queries got no bank after all
    retries (they are listed; re-run to retry them, answered prompts come from the cache).

    Example: rubric bank generate -q queries.json --kind nuggets -m gpt-4o -o nuggets.jsonl.gz
    """
    from rubric.bank.generate import generate_bank_file

    outcome = generate_bank_file(  # the options in the order of the command's
        queries,
        output,
        llm,
        kind=kind,
        style=style,
        facets=facets,
        per_query=per_query,
        prompt=prompt,
        prompt_files=prompt_file,
        test_collection=test_collection,
    )
    opt.finish(outcome)


@app.command("nuggetize")
@opt.option_groups
def nuggetize(
    passages: Annotated[
        Path, typer.Option("--passages", help="Passages file (with judgments, or use --qrels).")
    ],
    topics: Topics = ...,
    qrels: Annotated[
        Path,
        typer.Option(
            "--qrels", help="Judgments to use instead of the passages' own (e.g. UMBRELA LLM qrels)."
        ),
    ] = None,
    min_judgment: Annotated[
        int, typer.Option("--min-judgment", help="Use passages judged at least this relevant.")
    ] = 1,
    window: Annotated[int, typer.Option("--window", help="Passages per nuggetization turn.")] = 10,
    max_nuggets: Annotated[
        int, typer.Option("--max-nuggets", help="Most nuggets the running list may hold.")
    ] = 30,
    keep: Annotated[
        int, typer.Option("--keep", help="Nuggets kept per query after sorting vital first.")
    ] = 20,
    create_prompt: Annotated[
        str, typer.Option("--create-prompt", help="Nugget creation prompt.")
    ] = "AutoNuggetizerCreate",
    importance_prompt: Annotated[
        str, typer.Option("--importance-prompt", help="Vital/okay labelling prompt.")
    ] = "AutoNuggetizerImportance",
    prompt_file: opt.PromptFiles = None,
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Nugget bank to write (.jsonl or .jsonl.gz).")
    ] = ...,
    subset: opt.QueryOptions = ...,
    llm: opt.ChatOptions = ...,
) -> None:
    """AutoNuggetizer: nuggets from relevant passages, labelled vital/okay (TREC 2024 RAG).

    Iterates over windows of relevant passages updating a nugget list (at most --max-nuggets),
    labels importance 10 nuggets per call, sorts vital first and keeps --keep. Any text backend
    asks (an OpenAI-compatible server, or a local model with --backend hf-causal / ct2-causal,
    whose windows are cut by tokens to fit --max-input-tokens). Unreadable answers are re-asked
    (--parse-retries); calls that still fail are listed (exit code 1) and counted in each bank's
    info; a rerun asks only them.

    Example: rubric bank nuggetize --passages pool.jsonl.gz --topics queries.json --model gpt-4o
    -o nuggets.jsonl.gz; offline: --backend hf-causal --model smollm2-135m
    """
    from rubric.bank.nuggetize import nuggetize_file

    outcome = nuggetize_file(
        passages,
        topics,
        output,
        llm,
        qrels=qrels,
        min_judgment=min_judgment,
        window=window,
        max_nuggets=max_nuggets,
        keep=keep,
        create_prompt=create_prompt,
        importance_prompt=importance_prompt,
        prompt_files=prompt_file,
        selection=subset.selection,
    )
    opt.finish(outcome)


@app.command("import")
def import_(
    source: Annotated[Path, typer.Argument(help="File to import (see --format).")],
    fmt: Annotated[
        choices.ImportFormat,
        typer.Option(
            "--format",
            help="list: TSV qid<TAB>text[<TAB>gold1|gold2 or importance], JSON {qid: [...]} or a JSON list "
            "of records (a genq file is recognised); tqa: TQA lessons JSON (questions with answer keys); "
            "genq: the original workbench's {query: {facet: {title, facet, questions}}} question sets.",
        ),
    ] = "list",
    kind: Annotated[
        choices.BankKind, typer.Option("--kind", help="questions or nuggets (tqa is always questions).")
    ] = "questions",
    queries: Annotated[
        Path, typer.Option("--topics", help="Query texts to record in the banks. [default: none]")
    ] = None,
    tqa_prefix: Annotated[
        str, typer.Option("--tqa-prefix", help="Prefix of query ids made from TQA lesson ids.")
    ] = "tqa2:",
    test_collection: TestCollection = "",
    output: Annotated[OutputPath, typer.Option("--output", "-o", help="Bank file to write.")] = ...,
) -> None:
    """Import a human-made bank: TQA questions with answer keys, genq question sets, or plain
    question/nugget lists.

    Example: rubric bank import my-nuggets.tsv --kind nuggets -q queries.json -o nuggets.jsonl.gz
    """
    from rubric.bank.importers import import_bank

    info(
        import_bank(
            source,
            output,
            fmt=fmt,
            kind=kind,
            queries=queries,
            tqa_prefix=tqa_prefix,
            test_collection=test_collection,
        )
    )


@app.command("show")
def show(
    bank: Annotated[Path, typer.Argument(help="Bank file.")],
    query: Annotated[
        str, typer.Option("--query", help="Show only this query (or qid/facet). [default: all]")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the bank records as JSON lines instead.")
    ] = False,
) -> None:
    """Print a bank: one header per query, one line per item (id, importance, text, answer key).

    Example: rubric bank show dl19-questions.jsonl.gz --query 1115776
    """
    from rubric.bank.edit import show_bank

    for line in show_bank(bank, query, as_json=as_json):
        typer.echo(line)


@app.command("edit")
@updates_in_place("bank")
def edit(
    bank: Annotated[Path, typer.Argument(help="Bank file to edit.")],
    add: Annotated[
        list[str], typer.Option("--add", help="QID[/FACET]=TEXT: add an item (repeatable).")
    ] = None,
    remove: Annotated[
        list[str], typer.Option("--remove", help="ITEM_ID: remove an item (repeatable).")
    ] = None,
    rewrite: Annotated[
        list[str],
        typer.Option(
            "--rewrite", help="ITEM_ID=TEXT: new text; the id follows it, info.previous_id keeps the old."
        ),
    ] = None,
    kind: Annotated[
        choices.BankKind | None,
        typer.Option("--kind", help="questions or nuggets, for --add to an empty bank."),
    ] = None,
    queries: Annotated[
        Path, typer.Option("--topics", help="Query texts for queries new to the bank.")
    ] = None,
    output: Annotated[
        OptionalOutputPath, typer.Option("--output", "-o", help="Where to write. [default: replace BANK]")
    ] = None,
) -> None:
    """Add, remove or rewrite items; ids follow the text (qid[/facet]/md5).

    Removals apply first, then rewrites, then additions. The file is replaced atomically.

    Example: rubric bank edit nuggets.jsonl.gz --remove 940547/79127769531faf8ed9b9c2b8c8209002
    """
    from rubric.bank.edit import edit_bank_file

    target = output or bank
    report = edit_bank_file(
        bank, target, add=add or [], remove=remove or [], rewrite=rewrite or [], kind=kind, queries=queries
    )
    for line in report.lines(target):
        info(line)


@app.command("diff")
def diff(
    a: Annotated[Path, typer.Argument(help="The old bank.")],
    b: Annotated[Path, typer.Argument(help="The new bank.")] = ...,
) -> None:
    """Show what changed from bank A to bank B: - removed, + added, ~ rewritten, * importance.

    Example: rubric bank diff nuggets-v1.jsonl.gz nuggets-v2.jsonl.gz
    """
    from rubric.bank.edit import diff_banks
    from rubric.data.jsonl import read_bank

    d = diff_banks(read_bank(a), read_bank(b))
    for line in d.lines():
        typer.echo(line)
    info(d.summary())


@app.command("split")
def split(
    bank: Annotated[Path, typer.Argument(help="Bank file to split.")],
    secret: Annotated[
        float, typer.Option("--secret", help="Fraction of each query's items kept secret, e.g. 0.3.")
    ] = ...,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the split: the same seed gives the same banks.")
    ] = ...,
    public_out: Annotated[
        OutputPath, typer.Option("--public-out", help="Where to write the public bank.")
    ] = ...,
    secret_out: Annotated[
        OutputPath, typer.Option("--secret-out", help="Where to write the secret bank.")
    ] = ...,
) -> None:
    """Split a bank into a public and a secret part, by item, stratified per query.

    Each query (or facet) of n items keeps round(n * (1 - SECRET)) items public, at least one on
    each side when n >= 2. The items of each side are chosen by sha256(seed, item id), so the
    split is the same on every run and machine; both parts keep the items' order and every field,
    so public + secret = BANK. Publish the public bank; evaluate with the secret one and publish
    only leaderboards and qrels from it.

    Example: rubric bank split questions.jsonl.gz --secret 0.3 --seed 2024
    --public-out questions-public.jsonl.gz --secret-out questions-secret.jsonl.gz
    """
    from rubric.bank.split import split_bank_file

    # --public-out / --secret-out naming the bank or each other: refused by the output rule
    result = split_bank_file(bank, secret, seed, public_out, secret_out)  # checks --secret first
    info(result.summary(public_out, secret_out))
