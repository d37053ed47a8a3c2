"""`rubric bank`: create, import, inspect and edit test banks (Phase 1)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, OutputPath, info, phase_app, updates_in_place
from rubric.errors import UserError

app = phase_app(
    "Phase 1: test banks of exam questions or nuggets (generate, nuggetize, import, show, edit, diff, split)."
)


def _check_kind(kind: str) -> str:
    from rubric.bank.ids import check_kind

    return check_kind(kind)


def _load_banks(path: Path) -> list:
    from rubric.data.jsonl import read_bank

    return list(read_bank(path))


@app.command("generate")
@opt.option_groups
def generate(
    queries: Path = typer.Option(..., "--queries", "-q", help="Queries: JSON {qid: text}, TSV or JSONL."),
    kind: str = typer.Option("questions", "--kind", help="What to generate: questions or nuggets."),
    style: str = typer.Option(
        "dl", "--style", help="dl: break the query into items; car: query title + subtopics from --facets."
    ),
    facets: Path = typer.Option(
        None, "--facets", help="CAR subtopics: TSV qid<TAB>facet_id<TAB>text or JSON {qid: {facet_id: text}}."
    ),
    per_query: int = typer.Option(
        10, "--per-query", help="Items to ask for per query (the DL prompts' count)."
    ),
    prompt: str = typer.Option(
        None, "--prompt", help="Prompt name or TOML file. [default: Generate{Questions,Nuggets}{DL,CAR}]"
    ),
    prompt_file: opt.PromptFiles = None,
    test_collection: str = typer.Option("", "--test-collection", help="Recorded in each bank."),
    output: OutputPath = typer.Option(
        ..., "--output", "-o", help="Bank file to write (.jsonl or .jsonl.gz)."
    ),
    llm: opt.ChatOptions = ...,
) -> None:
    """Generate questions or nuggets per query with an LLM (RUBRIC / EXAM++ / Workbench prompts).

    Item ids are qid[/facet]/md5(text). Exit code 1 when some queries got no bank after all
    retries (they are listed; re-run to retry them, answered prompts come from the cache).

    Example: rubric bank generate -q queries.json --kind nuggets -m gpt-4o -o nuggets.jsonl.gz
    """
    from rubric.bank.generate import GENERATE_PROMPTS, generate_banks, topics
    from rubric.data.jsonl import write_bank
    from rubric.data.queries import read_queries
    from rubric.grading.prompts import get_prompt

    _check_kind(kind)
    opt.at_least("--per-query", per_query, 1)
    llm.check()
    chosen = topics(read_queries(queries), style, facets, queries)
    prompt_ = get_prompt(prompt or GENERATE_PROMPTS[(kind, style)], prompt_file)
    backend, responses = opt.backend_from(llm)
    banks, failures = generate_banks(
        chosen, prompt_, backend, kind, per_query, llm.parse_retries, test_collection, cache=responses
    )
    write_bank(output, banks)
    items = sum(len(b.items) for b in banks)
    info(f"wrote {len(banks)} of {len(chosen)} banks ({items} {kind}) to {output}")
    opt.report_llm(backend)
    opt.report_failures(failures, "queries")


@app.command("nuggetize")
@opt.option_groups
def nuggetize(
    passages: Path = typer.Option(
        ..., "--passages", "-p", help="Passages file (with judgments, or use --qrels)."
    ),
    queries: Path = typer.Option(..., "--queries", "-q", help="Queries: JSON {qid: text}, TSV or JSONL."),
    qrels: Path = typer.Option(
        None, "--qrels", help="Judgments to use instead of the passages' own (e.g. UMBRELA LLM qrels)."
    ),
    min_judgment: int = typer.Option(1, "--min-judgment", help="Use passages judged at least this relevant."),
    window: int = typer.Option(10, "--window", help="Passages per nuggetization turn."),
    max_nuggets: int = typer.Option(30, "--max-nuggets", help="Most nuggets the running list may hold."),
    keep: int = typer.Option(20, "--keep", help="Nuggets kept per query after sorting vital first."),
    create_prompt: str = typer.Option(
        "AutoNuggetizerCreate", "--create-prompt", help="Nugget creation prompt."
    ),
    importance_prompt: str = typer.Option(
        "AutoNuggetizerImportance", "--importance-prompt", help="Vital/okay labelling prompt."
    ),
    prompt_file: opt.PromptFiles = None,
    output: OutputPath = typer.Option(
        ..., "--output", "-o", help="Nugget bank to write (.jsonl or .jsonl.gz)."
    ),
    llm: opt.ChatOptions = ...,
) -> None:
    """AutoNuggetizer: nuggets from relevant passages, labelled vital/okay (TREC 2024 RAG).

    Iterates over windows of relevant passages updating a nugget list (at most --max-nuggets),
    labels importance 10 nuggets per call, sorts vital first and keeps --keep. Failed windows
    are retried, then listed (exit code 1) and counted in each bank's info.

    Example: rubric bank nuggetize -p pool.jsonl.gz -q queries.json -m gpt-4o -o nuggets.jsonl.gz
    """
    from rubric.bank.nuggetize import nuggetize as run
    from rubric.bank.nuggetize import relevant_passages
    from rubric.data.jsonl import write_bank
    from rubric.data.queries import read_queries
    from rubric.grading.prompts import get_prompt

    for name, value in (("--window", window), ("--max-nuggets", max_nuggets), ("--keep", keep)):
        opt.at_least(name, value, 1)
    llm.check()
    texts = read_queries(queries)
    relevant = relevant_passages(passages, texts, qrels, min_judgment, queries)
    backend, responses = opt.backend_from(llm)
    settings = {"min_judgment": min_judgment, "judgments": str(qrels) if qrels else "passages"}
    banks, failures = run(
        texts,
        relevant,
        get_prompt(create_prompt, prompt_file),
        get_prompt(importance_prompt, prompt_file),
        backend,
        window=window,
        max_nuggets=max_nuggets,
        keep=keep,
        retries=llm.parse_retries,
        settings=settings,
        cache=responses,
    )
    write_bank(output, banks)
    vital = sum(getattr(i, "importance", None) == "vital" for b in banks for i in b.items)
    nuggets = sum(len(b.items) for b in banks)
    without = sum(1 for q in texts if q not in relevant)
    info(f"wrote {nuggets} nuggets ({vital} vital) for {len(banks)} queries to {output}")
    if without:
        info(f"{without} queries have no passage judged >= {min_judgment} and got no nuggets")
    opt.report_llm(backend)
    opt.report_failures(failures, "LLM calls")


@app.command("import")
def import_(
    source: Path = typer.Argument(..., help="File to import (see --format)."),
    fmt: str = typer.Option(
        "list",
        "--format",
        help="list: TSV qid<TAB>text[<TAB>gold1|gold2 or importance], JSON {qid: [...]} or a JSON list "
        "of records; tqa: TQA lessons JSON (questions with answer keys).",
    ),
    kind: str = typer.Option("questions", "--kind", help="questions or nuggets (tqa is always questions)."),
    queries: Path = typer.Option(
        None, "--queries", "-q", help="Query texts to record in the banks. [default: none]"
    ),
    tqa_prefix: str = typer.Option(
        "tqa2:", "--tqa-prefix", help="Prefix of query ids made from TQA lesson ids."
    ),
    test_collection: str = typer.Option("", "--test-collection", help="Recorded in each bank."),
    output: OutputPath = typer.Option(..., "--output", "-o", help="Bank file to write."),
) -> None:
    """Import a human-made bank: TQA questions with answer keys, or plain question/nugget lists.

    Example: rubric bank import my-nuggets.tsv --kind nuggets -q queries.json -o nuggets.jsonl.gz
    """
    from rubric.bank.importers import read_plain, read_tqa, to_banks
    from rubric.data.jsonl import write_bank
    from rubric.data.queries import read_queries

    texts = read_queries(queries) if queries else {}
    if fmt == "tqa":
        entries, titles = read_tqa(source, tqa_prefix)
        kind = "questions"
        texts = {**titles, **texts}
    elif fmt == "list":
        entries = read_plain(source, _check_kind(kind))
    else:
        raise UserError(f"--format: expected list or tqa, got {fmt!r}")
    if not any(entries.values()):
        raise UserError(f"{source}: no {kind} found")
    banks = to_banks(entries, kind, texts, test_collection, source=str(source))
    write_bank(output, banks)
    info(f"wrote {len(banks)} banks ({sum(len(b.items) for b in banks)} {kind}) to {output}")


@app.command("show")
def show(
    bank: Path = typer.Argument(..., help="Bank file."),
    query: str = typer.Option(None, "--query", help="Show only this query (or qid/facet). [default: all]"),
    as_json: bool = typer.Option(False, "--json", help="Print the bank records as JSON lines instead."),
) -> None:
    """Print a bank: one header per query, one line per item (id, importance, text, answer key).

    Example: rubric bank show dl19-questions.jsonl.gz --query 1115776
    """
    from rubric.bank.edit import bank_key, show_lines

    banks = _load_banks(bank)
    if query is not None and not any(query in (b.query_id, bank_key(b)) for b in banks):
        raise UserError(f"--query {query}: not in {bank} ({len(banks)} banks)")
    if as_json:
        for b in banks:
            if query is None or query in (b.query_id, bank_key(b)):
                typer.echo(json.dumps(b.to_json(), ensure_ascii=False))
        return
    for line in show_lines(banks, query):
        typer.echo(line)


@app.command("edit")
@updates_in_place("bank")
def edit(
    bank: Path = typer.Argument(..., help="Bank file to edit."),
    add: list[str] = typer.Option(None, "--add", help="QID[/FACET]=TEXT: add an item (repeatable)."),
    remove: list[str] = typer.Option(None, "--remove", help="ITEM_ID: remove an item (repeatable)."),
    rewrite: list[str] = typer.Option(
        None, "--rewrite", help="ITEM_ID=TEXT: new text; the id follows it, info.previous_id keeps the old."
    ),
    kind: str = typer.Option(None, "--kind", help="questions or nuggets, for --add to an empty bank."),
    queries: Path = typer.Option(None, "--queries", "-q", help="Query texts for queries new to the bank."),
    output: OptionalOutputPath = typer.Option(
        None, "--output", "-o", help="Where to write. [default: replace BANK]"
    ),
) -> None:
    """Add, remove or rewrite items; ids follow the text (qid[/facet]/md5).

    Removals apply first, then rewrites, then additions. The file is replaced atomically.

    Example: rubric bank edit nuggets.jsonl.gz --remove 940547/79127769531faf8ed9b9c2b8c8209002
    """
    from rubric.bank.edit import edit_banks
    from rubric.data.jsonl import write_bank
    from rubric.data.queries import read_queries

    if not (add or remove or rewrite):
        raise UserError("nothing to do: give --add, --remove or --rewrite")
    banks, report = edit_banks(
        _load_banks(bank),
        add or [],
        remove or [],
        rewrite or [],
        kind=_check_kind(kind) if kind else None,
        queries=read_queries(queries) if queries else None,
    )
    target = output or bank
    write_bank(target, banks)
    for message in report.messages:
        info(message)
    info(f"{report.added} added, {report.removed} removed, {report.rewritten} rewritten; wrote {target}")


@app.command("diff")
def diff(
    a: Path = typer.Argument(..., help="The old bank."),
    b: Path = typer.Argument(..., help="The new bank."),
) -> None:
    """Show what changed from bank A to bank B: - removed, + added, ~ rewritten, * importance.

    Example: rubric bank diff nuggets-v1.jsonl.gz nuggets-v2.jsonl.gz
    """
    from rubric.bank.edit import diff_banks

    d = diff_banks(_load_banks(a), _load_banks(b))
    for line in d.lines():
        typer.echo(line)
    c = d.counts
    info(
        f"{c['removed']} removed, {c['added']} added, {c['rewritten']} rewritten, "
        f"{c['relabelled']} relabelled; {len(d.only_a)} banks only in A, {len(d.only_b)} only in B"
    )


@app.command("split")
def split(
    bank: Path = typer.Argument(..., help="Bank file to split."),
    secret: float = typer.Option(
        ..., "--secret", help="Fraction of each query's items kept secret, e.g. 0.3."
    ),
    seed: int = typer.Option(..., "--seed", help="Seed of the split: the same seed gives the same banks."),
    public_out: OutputPath = typer.Option(..., "--public-out", help="Where to write the public bank."),
    secret_out: OutputPath = typer.Option(..., "--secret-out", help="Where to write the secret bank."),
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
    from rubric.bank.split import split_banks
    from rubric.data.jsonl import read_bank, write_bank

    # --public-out / --secret-out naming the bank or each other: refused by the output rule
    result = split_banks(read_bank(bank), secret, seed)  # checks --secret before reading
    write_bank(public_out, result.public)
    write_bank(secret_out, result.secret)
    n_public, n_secret = result.counts
    info(
        f"{n_public} public items in {len(result.public)} banks -> {public_out}; "
        f"{n_secret} secret items in {len(result.secret)} banks -> {secret_out}"
    )
