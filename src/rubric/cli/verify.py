"""`rubric verify`: reports that let a human oversee the grader and refine the test bank."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from rubric.cli import choices
from rubric.cli import options as opt
from rubric.cli.common import OptionalOutputPath, OutputPath, info, phase_app
from rubric.data.table import emit_tables

app = phase_app(
    "Check the grader and the bank: grades with answers, grids, uncovered relevant passages, "
    "spurious items, agreement with human judgments, the impact of a bank edit, an HTML review page "
    "where humans correct grades and items, and `apply` to feed their reviews back."
)

DL_JUDGMENT_HINT = (
    "1 (trec_eval's default level) counts every judgment above 0; TREC DL passage judgments are "
    "0-3 and the track counts 2 and up as relevant (1 means 'related'), so use 2 there."
)


def min_relevant_judgment(help_text: str, *old: str) -> Any:
    """``--min-relevant-judgment`` / ``-j`` (after a command's ``old`` spellings), whose help ends
    with the TREC DL hint: one declaration for every command that reads a relevance level."""
    return typer.Option("--min-relevant-judgment", *old, "-j", min=1, help=f"{help_text} {DL_JUDGMENT_HINT}")


ItemBanks = Annotated[
    list[Path],
    typer.Option(
        "--bank", "-b", help="Test bank(s) to show item texts next to ids (repeatable; default: none)."
    ),
]
AnswerPrompt = Annotated[
    str,
    typer.Option(
        "--answer-prompt",
        help="Prompt class whose extracted answers are shown: 'auto' (the answer-extraction prompt of the "
        "same LLM and items, if exactly one), 'rating' (the rating prompt's own answers) or a prompt class.",
    ),
]


def _texts(banks: list[Path] | None) -> dict[str, str]:
    from rubric.verify.items import load_item_texts

    return load_item_texts(banks or [])


@app.command("grading")
@opt.option_groups
def grading_command(
    graded: opt.GradedOptions = ...,
    answer_prompt: AnswerPrompt = "auto",
    bank: ItemBanks = None,
    width: Annotated[
        int,
        typer.Option(
            "--width", min=0, help="Cut answers and passage texts to this many characters (0: all)."
        ),
    ] = 120,
    table: opt.RowTables = ...,
) -> None:
    """Per item, every passage's grade with the extracted answer, highest grade first.

    Example: rubric verify grading graded.jsonl.gz --rating-prompt NuggetSelfRatedPrompt
    --answer-prompt NuggetExtractionPrompt --format md -o grading.md
    """
    from rubric.verify.graded_answers import grading_report

    texts = _texts(bank)
    grading_report(graded.selection(), texts, width, fmt=table.fmt, output=table.output, answer=answer_prompt)


@app.command("grid")
@opt.option_groups
def grid_command(
    graded: opt.GradedOptions = ...,
    answer_prompt: AnswerPrompt = "auto",
    bank: ItemBanks = None,
    answers: Annotated[
        bool,
        typer.Option(
            "--with-answers/--grades-only", help="Cells 'grade: answer' (default) or just the grade."
        ),
    ] = True,
    width: Annotated[
        int, typer.Option("--width", min=0, help="Cut answers to this many characters (0: all).")
    ] = 60,
    table: opt.RowTables = ...,
) -> None:
    """Per query, a passages x items grid of grades and answers (columns: short item ids).

    Tables (one per query) are separated by a blank line; each lists its items' full ids (and
    texts with --bank) under it.

    Example: rubric verify grid graded.jsonl.gz --prompt-class QuestionSelfRatedUnanswerablePromptWithChoices
    --format csv -o grid.csv
    """
    from rubric.verify.grid import grid_report

    texts = _texts(bank)
    grid_report(
        graded.selection(),
        texts,
        answers=answers,
        width=width,
        fmt=table.fmt,
        output=table.output,
        answer=answer_prompt,
    )


@app.command("uncovered")
@opt.option_groups
def uncovered_command(
    graded: opt.GradedOptions = ...,
    min_judgment: Annotated[
        int, min_relevant_judgment("Judged relevant from this level.", "--min-judgment")
    ] = 1,
    min_grade: Annotated[
        int, typer.Option("--min-grade", "-t", min=0, max=5, help="An item covers a passage from this grade.")
    ] = 4,
    width: Annotated[
        int, typer.Option("--width", min=0, help="Cut passage texts to this many characters (0: all).")
    ] = 200,
    table: opt.RowTables = ...,
) -> None:
    """Passages judged relevant whose best grade is below the threshold: what the bank misses.

    Example: rubric verify uncovered graded.jsonl.gz --min-judgment 2 --min-grade 4
    """
    from rubric.verify.uncovered import uncovered_report

    uncovered_report(
        graded.selection(),
        min_judgment,
        min_grade,
        width=width,
        fmt=table.fmt,
        output=table.output,
    )


@app.command("spurious")
@opt.option_groups
def spurious_command(
    graded: opt.GradedOptions = ...,
    max_judgment: Annotated[
        int, typer.Option("--max-judgment", min=0, help="Judged non-relevant up to this level.")
    ] = 0,
    min_grade: Annotated[
        int, typer.Option("--min-grade", "-t", min=0, max=5, help="A grade from this level counts as high.")
    ] = 4,
    bank: ItemBanks = None,
    top: Annotated[int, typer.Option("--top", "-n", min=0, help="Show only the first N items (0: all).")] = 0,
    table: opt.RowTables = ...,
) -> None:
    """Items ranked by how many passages judged non-relevant they grade high (counts per item).

    Example: rubric verify spurious graded.jsonl.gz --max-judgment 0 --min-grade 4 --top 20
    """
    from rubric.verify.spurious import spurious_report

    texts = _texts(bank)
    spurious_report(
        graded.selection(),
        max_judgment,
        min_grade,
        item_texts=texts,
        top=top,
        fmt=table.fmt,
        output=table.output,
    )


@app.command("agreement")
@opt.option_groups
def agreement_command(
    graded: Annotated[
        Path | None, typer.Argument(help=opt.GRADED_HELP + " Optional with --labels and --judgments.")
    ] = None,
    min_relevant: Annotated[int, min_relevant_judgment("Judgments from this level count as relevant.")] = 1,
    prompt_class: Annotated[
        list[str],
        typer.Option(
            "--prompt",
            "--prompt-class",
            "-p",
            help="Prompt class(es) to compare (repeatable: one set of tables each; default: the only one).",
        ),
    ] = None,
    llm: opt.Llm = None,
    prompt_type: opt.PromptType = None,
    label: opt.Label = "max",
    min_grade: opt.CountFrom = 1,
    grade_map: Annotated[
        str | None,
        typer.Option(
            "--map",
            help="Map labels to judgment levels first: 'G=L,...' gives L from label G up (highest G wins, "
            "below all: 0), e.g. '5=3,4=1'. Default: compare labels as they are.",
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels", help="Compare these LLM qrels (qid 0 docid label) instead of grades in GRADED."
        ),
    ] = None,
    judgments_file: Annotated[
        Path | None,
        typer.Option(
            "--judgments", help="Human qrels to compare against (default: the judgments in GRADED)."
        ),
    ] = None,
    one_vs_rest: Annotated[
        bool,
        typer.Option(
            "--one-vs-rest",
            help="Also the original workbench's GRADED and MERGE tables: counts per label set and a "
            "one-vs-rest Cohen's kappa per row (RUBRIC Table 5).",
        ),
    ] = False,
    plot: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--plot",
            help="Draw the grade x judgment counts as a heatmap (.png, .svg or .pdf; one panel per "
            "prompt class, every grade and judgment level on each, kappa in the title). Needs "
            "matplotlib: pip install 'rubric-workbench[plot]'.",
        ),
    ] = None,
    by_row: opt.ByRow = False,
    dpi: opt.Dpi = 100,
    reviews: Annotated[
        bool,
        typer.Option(
            "--reviews",
            help="Compare cell by cell the selected LLM grades with the HumanReview grades of `rubric verify "
            "apply`: kappa of the LLM against each reviewer and between reviewers, on the cells both graded.",
        ),
    ] = False,
    fmt: Annotated[
        choices.AgreementFormat, typer.Option("--format", "-f", help="tsv, md or latex (booktabs).")
    ] = "tsv",
    output: opt.ReportPath = None,
    subset: opt.QueryOptions = ...,
) -> None:
    """Grade x judgment counts, binarised tables for every grade threshold, Cohen's kappa.

    For each threshold T: grade >= T vs judgment >= J as a 2x2 table with kappa, accuracy,
    precision, recall and F1. Labels on the judgments' scale (0-3 labels, or --map onto it) also
    get a one-scale table: exact agreement, Cohen's kappa, linearly and quadratically weighted
    kappa, Krippendorff's alpha (ordinal, interval). Works for self-rated, answer-verification and
    direct prompts, and for imported LLM qrels (--labels). Only passages with both a label and a
    judgment count.

    With --reviews: the LLM's item grades against the reviewers' (see `rubric verify apply`).

    Example: rubric verify agreement graded.jsonl.gz --min-relevant-judgment 2
    --prompt-class QuestionSelfRatedUnanswerablePromptWithChoices --format latex
    """
    from rubric.verify.agreement_report import AgreementRequest, agreement_report

    request = AgreementRequest(
        graded=graded,
        labels=labels,
        judgments=judgments_file,
        prompt_classes=prompt_class or [],
        llm=llm,
        prompt_type=prompt_type,
        label=label,
        min_grade=min_grade,
        grade_map=grade_map,
        min_relevant=min_relevant,
        one_vs_rest=one_vs_rest,
        reviews=reviews,
        fmt=fmt,
        plot=plot,
        query=subset.query,
        queries=subset.queries,
    )
    report = agreement_report(request)
    emit_tables(report.tables, fmt, output)
    if plot is not None:
        report.draw(plot, by_row=by_row, dpi=dpi)
        info(f"wrote {plot}")


@app.command("impact")
@opt.option_groups
def impact_command(
    graded: opt.GradedOptions = ...,
    bank_before: Annotated[Path, typer.Option("--bank-before", help="The bank before the edit.")] = ...,
    bank_after: Annotated[Path, typer.Option("--bank-after", help="The bank after the edit.")] = ...,
    label: opt.Label = "max",
    min_grade: opt.CountFrom = 1,
    needs_grading: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--needs-grading", help="Also write the new bank's items that still need grading as a bank."
        ),
    ] = None,
    table: opt.RowTables = ...,
) -> None:
    """Which passages change label (and by how much) when the bank is edited, without regrading.

    Items are matched by id (query/md5 of the text): an edited item is removed + added. Items of
    the new bank without grades are listed as needing grading and do not count yet.

    Example: rubric verify impact graded.jsonl.gz --bank-before bank.jsonl.gz
    --bank-after bank-edited.jsonl.gz --needs-grading todo-bank.jsonl.gz
    """
    from rubric.data.labels import LabelRule
    from rubric.verify.impact import impact_report

    rule = LabelRule.parse(label, min_grade)
    impact_report(
        graded.selection(),
        bank_before,
        bank_after,
        rule=rule,
        fmt=table.fmt,
        output=table.output,
        needs_grading=needs_grading,
    )


@app.command("html")
@opt.option_groups
def html_command(
    graded: opt.GradedOptions = ...,
    output: Annotated[OutputPath, typer.Option("--output", "-o", help="HTML file to write.")] = ...,
    answer_prompt: AnswerPrompt = "auto",
    bank: ItemBanks = None,
    min_grade: Annotated[
        int, typer.Option("--min-grade", "-t", min=0, max=5, help="Initial grade threshold of the filters.")
    ] = 4,
    min_judgment: Annotated[
        int,
        min_relevant_judgment(
            "Initial 'judged relevant' level of the page's filters (changeable in the page).",
            "--min-judgment",
        ),
    ] = 1,
    spurious_min: Annotated[
        int,
        typer.Option(
            "--spurious-min",
            min=1,
            help="Initial spurious-item rule: graded >= --min-grade on this many passages judged "
            "non-relevant.",
        ),
    ] = 5,
    title: Annotated[str, typer.Option("--title", help="Page title.")] = "rubric verify",
) -> None:
    """One self-contained HTML review page: per query a colour-scaled passages x items grid.

    Hover a cell for the extracted answer, click a passage for its text; filters show only
    uncovered relevant passages or spurious items. No server, no network: open it from disk.
    The page holds the whole selected file (its size grows with it: select queries with --query
    or --queries for a huge file); each query is a separate block that the browser parses only
    when the query is shown, so a page of thousands of queries opens on one (the command itself
    reads and writes one query at a time).
    Reviewers correct or confirm grades, remove, rewrite or add items and write notes (kept in
    the browser per file), then "Export review" saves a JSON file for `rubric verify apply`.

    Example: rubric verify html graded.jsonl.gz --bank bank.jsonl.gz -o review.html
    """
    from rubric.verify.html import review_page

    texts = _texts(bank)
    review_page(
        graded.selection(),
        output,
        texts,
        answer_prompt,
        min_grade=min_grade,
        min_judgment=min_judgment,
        spurious_min=spurious_min,
        title=title,
    )


@app.command("sample")
@opt.option_groups
def sample_command(
    graded: opt.GradedOptions = ...,
    output: Annotated[
        OutputPath,
        typer.Option(
            "--output", "-o", help="Query list to write: the drawn topic ids, one a line (for --queries)."
        ),
    ] = ...,
    size: Annotated[
        int, typer.Option("--size", min=2, help="How many topics to draw for human judgments.")
    ] = ...,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the draw (the same seed draws the same topics).")
    ] = 42,
    strata: Annotated[
        int,
        typer.Option(
            "--strata",
            min=0,
            help="Draw proportionally from this many groups of topics cut by the LLM's mean label "
            "(0: no strata). The estimate still treats the sample as uniform; see docs/evaluation.md.",
        ),
    ] = 0,
    label: opt.Label = "max",
    min_grade: opt.CountFrom = 1,
    level: opt.Level = 1,
    passages_out: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--passages-out",
            help="Also write every graded passage ordered by how likely its LLM label is wrong (grade kinds "
            "disagreeing, labels at the -l threshold), to correct first. Not a random sample: not for "
            "`evaluate estimate`.",
        ),
    ] = None,
    html_out: Annotated[
        OptionalOutputPath,
        typer.Option(
            "--html", help="Also write the review page (as `verify html`) of just the drawn topics."
        ),
    ] = None,
    bank: ItemBanks = None,
) -> None:
    """Draw the topics humans judge for `evaluate estimate`: uniform at random, seeded.

    The topics are those the selected grades label; the list goes to -o, one id per line, the
    format --queries reads. Judge every pooled passage of a drawn topic (the review page of
    --html shows them), apply the reviews with `verify apply`, then run `evaluate estimate`.

    Example: rubric verify sample graded.jsonl.gz --prompt-class NuggetSelfRatedPrompt
    --size 3 --seed 7 -o judge.txt --html review.html
    """
    from rubric.verify.sample import sample_files

    notes = sample_files(
        graded.graded,
        graded.kind.grade_filter(),
        output,
        size=size,
        seed=seed,
        strata=strata,
        label=label,
        min_grade=min_grade,
        level=level,
        passages=passages_out,
        html=html_out,
        item_texts=_texts(bank) if html_out is not None else None,
        queries=graded.subset.selection,
    )
    for note in notes:
        info(note)


@app.command("apply")
def apply_command(
    files: Annotated[
        list[Path],
        typer.Argument(
            metavar="REVIEW.json... GRADED",
            help="REVIEW.json [REVIEW2.json ...] GRADED: review files exported by the review page, "
            "then the graded passages file they review.",
        ),
    ],
    output: Annotated[
        OutputPath, typer.Option("--output", "-o", help="Graded file to write, with the HumanReview grades.")
    ] = ...,
    bank: Annotated[
        Path | None, typer.Option("--bank", help="Bank to apply the reviewers' item edits to.")
    ] = None,
    bank_out: Annotated[
        OptionalOutputPath, typer.Option("--bank-out", help="Where to write the edited bank.")
    ] = None,
    summary: Annotated[
        OptionalOutputPath,
        typer.Option("--summary", help="Also write a JSON summary: reviewers, counts, conflicts, notes."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Apply reviews made from another file (sha256 mismatch) anyway.")
    ] = False,
) -> None:
    """Feed reviews back: human grades become HumanReview grade records, item edits edit the bank.

    Each reviewer's grades of a passage become one exam_grades record (prompt class HumanReview,
    llm human:NAME, self-ratings 0-5; a confirmation records the LLM's grade), replacing that
    reviewer's earlier ones; the LLM's grades stay. Every later command reads them: e.g.
    `rubric evaluate qrels OUT --prefer HumanReview`, `rubric verify agreement OUT --reviews`.
    Removals, rewrites and additions go to --bank-out as `rubric bank edit` applies them.
    Reviewers who grade one cell differently are listed (both grades are kept); conflicting
    edits of one item are an error. A review of another file (its sha256) is an error unless --force.

    Example: rubric verify apply alice.json bob.json graded.jsonl.gz -o reviewed.jsonl.gz
    --bank questions.jsonl.gz --bank-out questions-v2.jsonl.gz
    """
    from rubric.verify.apply import apply_review_files

    apply_review_files(files, output, bank=bank, bank_out=bank_out, summary=summary, force=force, report=info)
