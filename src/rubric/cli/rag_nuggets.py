"""Command functions for RAG nugget evaluation: `rubric grade assign` and `rubric evaluate nuggets`.

They live here (not in cli/grade.py or cli/evaluate.py) so the grade and evaluate groups only
register them: ``app.command("assign")(assign_command)``, ``app.command("nuggets")(nuggets_command)``.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from rubric.cli import llm_options as lo
from rubric.cli.common import info
from rubric.cli.query_options import QUERIES, QUERY, note_absent, selection
from rubric.errors import UserError


def assign_command(
    answers: list[Path] = typer.Argument(
        ...,
        help="TREC RAG 2024/2025 answer files, or passages files (a run's passages for a query "
        "form its answer).",
    ),
    bank: Path = typer.Option(..., "--bank", "-b", help="Nugget bank (e.g. from `rubric bank nuggetize`)."),
    queries: Path = typer.Option(
        None,
        "--queries",
        "-q",
        help="Query texts. [default: the answers' topics, else the bank's query_text]",
    ),
    prompt: str = typer.Option(
        "AutoNuggetizerAssign", "--prompt", help="Assignment prompt name or TOML file."
    ),
    prompt_file: list[Path] = typer.Option(None, "--prompt-file", help="Extra TOML prompt file(s)."),
    batch: int = typer.Option(10, "--batch", help="Nuggets per LLM call (the paper uses at most 10)."),
    output: Path = typer.Option(..., "--output", "-o", help="ASSIGNED file to write (.jsonl or .jsonl.gz)."),
    parse_retries: int = lo.PARSE_RETRIES,
    model: str = lo.MODEL,
    base_url: str = lo.BASE_URL,
    api_key_file: Path = lo.API_KEY_FILE,
    concurrency: int = lo.CONCURRENCY,
    rpm: float = lo.RPM,
    max_retries: int = lo.MAX_RETRIES,
    retry_base: float = lo.RETRY_BASE,
    timeout: float = lo.TIMEOUT,
    temperature: float = lo.TEMPERATURE,
    max_tokens: int = lo.MAX_TOKENS,
    cache: Path = lo.CACHE,
    no_cache: bool = lo.NO_CACHE,
) -> None:
    """Listwise nugget assignment: support / partial_support / not_support per nugget and answer.

    Writes one record per (run, query) with every nugget's id, text, importance and assignment.
    Batches that fail after all retries are listed (exit code 1) and left unassigned.

    Example: rubric grade assign run1.jsonl run2.jsonl --bank nuggets.jsonl.gz -m gpt-4o -o assigned.jsonl.gz
    """
    from rubric.data.jsonl import read_bank, write_json_lines
    from rubric.data.queries import read_queries
    from rubric.grading.assign import assign, read_system_answers
    from rubric.grading.prompts import get_prompt

    lo.at_least("--batch", batch, 1)
    lo.check_options(
        concurrency, rpm, max_retries, retry_base, timeout, temperature, max_tokens, parse_retries
    )
    system_answers = [a for path in answers for a in read_system_answers(path)]
    seen: set[tuple[str, str]] = set()
    for a in system_answers:
        if (a.run_id, a.query_id) in seen:
            raise UserError(
                f"run {a.run_id} answers query {a.query_id} twice in {', '.join(map(str, answers))}"
            )
        seen.add((a.run_id, a.query_id))
    banks = list(read_bank(bank))
    with_nuggets = {b.query_id for b in banks if b.items}
    if not any(a.query_id in with_nuggets for a in system_answers):
        raise UserError(f"--bank {bank}: none of the answered queries has nuggets in the bank")
    chosen = get_prompt(prompt, prompt_file)
    backend, responses = lo.openai_backend(
        model, base_url, api_key_file, concurrency, rpm, max_retries, retry_base, timeout, temperature,
        max_tokens, cache, no_cache,
    )  # fmt: skip
    texts = read_queries(queries) if queries else None
    records, failures = assign(
        system_answers, banks, chosen, backend, batch, parse_retries, texts, cache=responses
    )
    write_json_lines(output, records)
    skipped = len(system_answers) - len(records)
    runs, nq = len({r["run_id"] for r in records}), len({r["query_id"] for r in records})
    info(f"wrote {len(records)} assignments ({runs} runs, {nq} queries) to {output}")
    if skipped:
        info(f"skipped {skipped} answers of queries without nuggets in {bank}")
    lo.report_llm(backend)
    lo.report_failures(failures, "assignment batches")


def nuggets_command(
    assigned: Path = typer.Argument(..., help="ASSIGNED file from `rubric grade assign`."),
    output: Path = typer.Option(
        None, "--output", "-o", help="Also write the per-(run, query) scores here (TSV)."
    ),
    fmt: str = typer.Option("tsv", "--format", help="Leaderboard format on stdout: tsv or json."),
    query: list[str] = QUERY,
    queries: Path | None = QUERIES,
) -> None:
    """Nugget scores per run: V_strict, V_partial, A_strict, A_partial (mean over queries, stderr).

    Strict counts support as 1; partial also counts partial_support as 0.5. A run without an
    answer to a query scores 0 there; queries without vital nuggets are left out of V_*.

    Example: rubric evaluate nuggets assigned.jsonl.gz -o per-query.tsv
    """
    from rubric.data.files import open_output
    from rubric.evaluate.nuggets import MEASURES, aggregate, read_assigned

    if fmt not in ("tsv", "json"):
        raise UserError(f"--format: expected tsv or json, got {fmt!r}")
    chosen = selection(query, queries)
    scored = read_assigned(assigned)
    note_absent(chosen.check_present([s.query_id for s in scored], str(assigned)), str(assigned), "selected")
    rows, runs = aggregate(list(chosen.select(scored, lambda s: s.query_id)))

    def num(v: float | None) -> str:
        return "" if v is None else f"{v:.4f}"

    if output is not None:
        with open_output(output) as f:
            f.write("\t".join(["run", "query", *MEASURES, "nuggets", "vital", "answered"]) + "\n")
            for r in rows:
                values = [num(r.scores[m]) for m in MEASURES]
                f.write(
                    "\t".join(
                        [r.run_id, r.query_id, *values, str(r.nuggets), str(r.vital), str(int(not r.missing))]
                    )
                )
                f.write("\n")
    if fmt == "json":
        for r in runs:
            entries = [
                {
                    "run": r.run_id,
                    "measure": m,
                    "value": r.means[m],
                    "stderr": r.stderrs[m],
                    "n_queries": r.counts[m],
                }
                for m in MEASURES
            ]
            typer.echo(json.dumps(entries))
    else:
        typer.echo("\t".join(["run", "measure", "value", "stderr", "n_queries"]))
        for r in runs:
            for m in MEASURES:
                typer.echo("\t".join([r.run_id, m, num(r.means[m]), num(r.stderrs[m]), str(r.counts[m])]))
    for r in runs:
        if r.missing_queries:
            info(f"run {r.run_id}: no answer for {len(r.missing_queries)} queries (scored 0)")
