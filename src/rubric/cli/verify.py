"""`rubric verify`: reports that let a human oversee the grader and refine the test bank."""

from __future__ import annotations

from pathlib import Path

import typer

from rubric.cli.common import info, phase_app

app = phase_app(
    "Check the grader and the bank: grades with answers, grids, uncovered relevant passages, "
    "spurious items, agreement with human judgments, the impact of a bank edit, an HTML review page."
)

GRADED_HELP = "Graded passages file (.jsonl.gz) from `rubric grade` or the original workbench."


def _prompt_opt(*names: str, extra: str = ""):
    return typer.Option(
        None,
        *names,
        help="Prompt class of the grades to use (default: the only one in the file). " + extra,
    )


LLM_OPT = typer.Option(None, "--llm", help="LLM of the grades (default: the only one with that prompt).")
TYPE_OPT = typer.Option(
    None, "--prompt-type", help="question, nugget or direct (default: any, if that is unambiguous)."
)
BANK_OPT = typer.Option(
    None, "--bank", "-b", help="Test bank(s) to show item texts next to ids (repeatable; default: none)."
)
OUT_OPT = typer.Option(None, "--output", "-o", help="Write the report here (atomically) instead of stdout.")
ANSWER_OPT = typer.Option(
    "auto",
    "--answer-prompt",
    help="Prompt class whose extracted answers are shown: 'auto' (the answer-extraction prompt of the "
    "same LLM and items, if exactly one), 'rating' (the rating prompt's own answers) or a prompt class.",
)


def _matrix(
    graded: Path,
    prompt_class: str | None,
    llm: str | None,
    prompt_type: str | None,
    answer: str = "auto",
    items: bool = False,
):
    """The selected grades; ``items``: the report needs item grades, so direct prompts are refused."""
    from rubric.data.select import GradeFilter
    from rubric.errors import UserError
    from rubric.verify.matrix import load_matrix

    m = load_matrix(graded, GradeFilter(prompt_class, llm, prompt_type), answer_prompt=answer)
    if items and m.direct:
        raise UserError(f"{graded}: {m.kind.prompt_class} is a direct prompt; it grades no items")
    if m.ungraded:
        info(f"{graded}: {m.ungraded} passages have no {m.kind.prompt_class} grades and are left out")
    return m


def _texts(banks: list[Path] | None) -> dict[str, str]:
    from rubric.verify.items import load_item_texts

    return load_item_texts(banks or [])


ROW_FORMATS = ("tsv", "csv", "md")


def _check_format(fmt: str, allowed: tuple[str, ...] = ROW_FORMATS) -> None:
    """Checked before any file is read, so a typo fails at once."""
    from rubric.verify.table import check_format

    check_format(fmt, allowed)


def _emit(tables, fmt: str, output: Path | None) -> None:
    from rubric.verify.table import emit, render_tables

    emit(render_tables(tables, fmt), output)


@app.command("grading")
def grading_command(
    graded: Path = typer.Argument(..., help=GRADED_HELP),
    prompt_class: str | None = _prompt_opt("--rating-prompt", "--prompt-class", "-p"),
    answer_prompt: str = ANSWER_OPT,
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    bank: list[Path] = BANK_OPT,
    width: int = typer.Option(
        120, "--width", min=0, help="Cut answers and passage texts to this many characters (0: all)."
    ),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, csv or md (Markdown)."),
    output: Path | None = OUT_OPT,
) -> None:
    """Per item, every passage's grade with the extracted answer, highest grade first.

    Example: rubric verify grading graded.jsonl.gz --rating-prompt NuggetSelfRatedPrompt
    --answer-prompt NuggetExtractionPrompt --format md -o grading.md
    """
    from rubric.verify.grading import grading_table

    _check_format(fmt)

    m = _matrix(graded, prompt_class, llm, prompt_type, answer_prompt)
    table = grading_table(m, _texts(bank), width)
    _emit([table], fmt, output)
    n_items = sum(len(q.items) for q in m.queries)
    info(f"{len(table.rows)} grades of {n_items} items in {len(m.queries)} queries")


@app.command("grid")
def grid_command(
    graded: Path = typer.Argument(..., help=GRADED_HELP),
    prompt_class: str | None = _prompt_opt("--prompt-class", "--rating-prompt", "-p"),
    answer_prompt: str = ANSWER_OPT,
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    bank: list[Path] = BANK_OPT,
    answers: bool = typer.Option(
        True, "--answers/--no-answers", help="Cells 'grade: answer' (default) or just the grade."
    ),
    width: int = typer.Option(60, "--width", min=0, help="Cut answers to this many characters (0: all)."),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, csv or md; one table per query."),
    output: Path | None = OUT_OPT,
) -> None:
    """Per query, a passages x items grid of grades and answers (columns: short item ids).

    Tables are separated by a blank line; each lists its items' full ids (and texts with --bank)
    under it.

    Example: rubric verify grid graded.jsonl.gz --prompt-class QuestionSelfRatedUnanswerablePromptWithChoices
    --format csv -o grid.csv
    """
    from rubric.verify.grid import grid_tables

    _check_format(fmt)

    m = _matrix(graded, prompt_class, llm, prompt_type, answer_prompt)
    _emit(grid_tables(m, _texts(bank), answers=answers, width=width), fmt, output)


@app.command("uncovered")
def uncovered_command(
    graded: Path = typer.Argument(..., help=GRADED_HELP),
    min_judgment: int = typer.Option(
        1, "--min-judgment", "-j", min=1, help="Judged relevant from this level."
    ),
    min_grade: int = typer.Option(
        4, "--min-grade", "-t", min=0, max=5, help="An item covers a passage from this grade."
    ),
    prompt_class: str | None = _prompt_opt("--prompt-class", "-p"),
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    width: int = typer.Option(
        200, "--width", min=0, help="Cut passage texts to this many characters (0: all)."
    ),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, csv or md."),
    output: Path | None = OUT_OPT,
) -> None:
    """Passages judged relevant whose best grade is below the threshold: what the bank misses.

    Example: rubric verify uncovered graded.jsonl.gz --min-judgment 2 --min-grade 4
    """
    from rubric.verify.uncovered import uncovered_table

    _check_format(fmt)

    m = _matrix(graded, prompt_class, llm, prompt_type, "rating")
    table = uncovered_table(m, min_judgment, min_grade, width)
    _emit([table], fmt, output)
    info(table.notes[0])


@app.command("spurious")
def spurious_command(
    graded: Path = typer.Argument(..., help=GRADED_HELP),
    max_judgment: int = typer.Option(
        0, "--max-judgment", "-j", min=0, help="Judged non-relevant up to this level."
    ),
    min_grade: int = typer.Option(
        4, "--min-grade", "-t", min=0, max=5, help="A grade from this level counts as high."
    ),
    prompt_class: str | None = _prompt_opt("--prompt-class", "-p"),
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    bank: list[Path] = BANK_OPT,
    top: int = typer.Option(0, "--top", "-n", min=0, help="Show only the first N items (0: all)."),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, csv or md."),
    output: Path | None = OUT_OPT,
) -> None:
    """Items ranked by how many passages judged non-relevant they grade high (counts per item).

    Example: rubric verify spurious graded.jsonl.gz --max-judgment 0 --min-grade 4 --top 20
    """
    from rubric.verify.spurious import spurious_table

    _check_format(fmt)

    m = _matrix(graded, prompt_class, llm, prompt_type, "rating", items=True)
    _emit([spurious_table(m, max_judgment, min_grade, _texts(bank), top)], fmt, output)


@app.command("agreement")
def agreement_command(
    graded: Path | None = typer.Argument(None, help=GRADED_HELP + " Optional with --labels and --judgments."),
    min_relevant: int = typer.Option(
        1, "--min-relevant-judgment", "-j", min=1, help="Judgments from this level count as relevant (DL: 2)."
    ),
    prompt_class: list[str] = typer.Option(
        None,
        "--prompt-class",
        "--prompt",
        "-p",
        help="Prompt class(es) to compare (repeatable: one set of tables each; default: the only one).",
    ),
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    label: str = typer.Option(
        "max", "--label", help="Passage label from item grades: max, count (items >= --min-grade) or nth:M."
    ),
    min_grade: int = typer.Option(
        1, "--min-grade", min=0, max=5, help="Item grade that counts for --label count."
    ),
    grade_map: str | None = typer.Option(
        None,
        "--map",
        help="Map labels to judgment levels first: 'G=L,...' gives L from label G up (highest G wins, "
        "below all: 0), e.g. '5=3,4=1'. Default: compare labels as they are.",
    ),
    labels: Path | None = typer.Option(
        None, "--labels", help="Compare these LLM qrels (qid 0 docid label) instead of grades in GRADED."
    ),
    judgments_file: Path | None = typer.Option(
        None, "--judgments", help="Human qrels to compare against (default: the judgments in GRADED)."
    ),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, md or latex (booktabs)."),
    output: Path | None = OUT_OPT,
) -> None:
    """Grade x judgment counts, binarised tables for every grade threshold, Cohen's kappa.

    For each threshold T: grade >= T vs judgment >= J as a 2x2 table with kappa, accuracy,
    precision, recall and F1. Works for self-rated, answer-verification and direct prompts, and
    for imported LLM qrels (--labels). Only passages with both a label and a judgment count.

    Example: rubric verify agreement graded.jsonl.gz --min-relevant-judgment 2
    --prompt-class QuestionSelfRatedUnanswerablePromptWithChoices --format latex
    """
    from rubric.data.trec import read_qrels
    from rubric.errors import UserError
    from rubric.evaluate.labels import LabelRule
    from rubric.verify.agreement import Agreement, GradeMap
    from rubric.verify.matrix import judgments, passage_labels

    _check_format(fmt, ("tsv", "md", "latex"))
    rule = LabelRule.parse(label, min_grade)
    mapping = GradeMap.parse(grade_map) if grade_map else None
    human: dict[tuple[str, str], int] | None = None
    if judgments_file is not None:
        human = {(q, d): r for q, docs in read_qrels(judgments_file).items() for d, r in docs.items()}
    sides: list[tuple[str, dict[tuple[str, str], int]]] = []
    if labels is not None:
        if prompt_class:
            raise UserError("--prompt-class: not used with --labels (the qrels are the labels)")
        llm_labels = {(q, d): r for q, docs in read_qrels(labels).items() for d, r in docs.items()}
        sides.append((labels.name, llm_labels))
        if human is None:
            if graded is None:
                raise UserError("--labels: give GRADED (for its judgments) or --judgments QRELS")
            from rubric.data.jsonl import read_passages

            human = {
                (q.queryId, p.paragraph_id): j
                for q in read_passages(graded)
                for p in q.paragraphs
                if (j := p.judgment(q.queryId)) is not None
            }
    else:
        if graded is None:
            raise UserError("GRADED: missing; give a graded passages file (or --labels and --judgments)")
        from rubric.data.jsonl import read_passages
        from rubric.data.select import GradeFilter
        from rubric.verify.matrix import build_matrix

        queries = list(read_passages(graded))
        for pc in prompt_class or [None]:
            selection = GradeFilter(pc, llm, prompt_type)
            m = build_matrix(queries, selection, answer_prompt=None, source=str(graded))
            sides.append((m.kind.prompt_class, passage_labels(m, rule)))
            if human is None:
                human = judgments(m)
    assert human is not None
    tables = []
    for name, side in sides:
        pairs = [(mapping(lab) if mapping else lab, human[key]) for key, lab in side.items() if key in human]
        if not pairs:
            raise UserError(f"{name}: no passage has both a label and a judgment")
        ag = Agreement.from_pairs(pairs, min_relevant, name)
        tables.extend(ag.tables())
        best = max(ag.thresholds(), key=lambda t: (ag.binary(t).kappa, -t))
        info(
            f"{name}: {ag.n} passages; best binarised kappa {ag.binary(best).kappa:.4f} at grade >= {best} "
            f"vs judgment >= {min_relevant}; multiclass kappa {ag.multiclass_kappa():.4f}"
        )
    _emit(tables, fmt, output)


@app.command("impact")
def impact_command(
    graded: Path = typer.Argument(..., help=GRADED_HELP),
    bank_before: Path = typer.Option(..., "--bank-before", "-a", help="The bank before the edit."),
    bank_after: Path = typer.Option(..., "--bank-after", "-b", help="The bank after the edit."),
    prompt_class: str | None = _prompt_opt("--prompt-class", "-p"),
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    label: str = typer.Option(
        "max", "--label", help="Passage label from item grades: max, count (items >= --min-grade) or nth:M."
    ),
    min_grade: int = typer.Option(
        1, "--min-grade", min=0, max=5, help="Item grade that counts for --label count."
    ),
    needs_grading: Path | None = typer.Option(
        None, "--needs-grading", help="Also write the new bank's items that still need grading as a bank."
    ),
    fmt: str = typer.Option("tsv", "--format", "-f", help="tsv, csv or md."),
    output: Path | None = OUT_OPT,
) -> None:
    """Which passages change label (and by how much) when the bank is edited, without regrading.

    Items are matched by id (query/md5 of the text): an edited item is removed + added. Items of
    the new bank without grades are listed as needing grading and do not count yet.

    Example: rubric verify impact graded.jsonl.gz --bank-before bank.jsonl.gz
    --bank-after bank-edited.jsonl.gz --needs-grading todo-bank.jsonl.gz
    """
    from rubric.data.jsonl import read_bank, write_bank
    from rubric.evaluate.labels import LabelRule
    from rubric.verify.impact import bank_impact, needs_grading_banks

    _check_format(fmt)
    rule = LabelRule.parse(label, min_grade)
    before, after = list(read_bank(bank_before)), list(read_bank(bank_after))
    m = _matrix(graded, prompt_class, llm, prompt_type, "rating", items=True)
    result = bank_impact(m, before, after, rule)
    _emit([result.items_table(), result.changes_table()], fmt, output)
    if needs_grading is not None:
        n = write_bank(needs_grading, needs_grading_banks(after, result))
        info(f"wrote {needs_grading}: {n} banks with items to grade")
    info(result.changes_table().notes[0] + "; " + result.items_table().notes[0])


@app.command("html")
def html_command(
    graded: Path = typer.Argument(..., help=GRADED_HELP),
    output: Path = typer.Option(..., "--output", "-o", help="HTML file to write."),
    prompt_class: str | None = _prompt_opt("--prompt-class", "--rating-prompt", "-p"),
    answer_prompt: str = ANSWER_OPT,
    llm: str | None = LLM_OPT,
    prompt_type: str | None = TYPE_OPT,
    bank: list[Path] = BANK_OPT,
    min_grade: int = typer.Option(
        4, "--min-grade", "-t", min=0, max=5, help="Initial grade threshold of the filters."
    ),
    min_judgment: int = typer.Option(
        1, "--min-judgment", "-j", min=1, help="Initial 'judged relevant' level of the filters."
    ),
    spurious_min: int = typer.Option(
        5,
        "--spurious-min",
        min=1,
        help="Initial spurious-item rule: graded >= --min-grade on this many passages judged non-relevant.",
    ),
    title: str = typer.Option("rubric verify", "--title", help="Page title."),
) -> None:
    """One self-contained HTML review page: per query a colour-scaled passages x items grid.

    Hover a cell for the extracted answer, click a passage for its text; filters show only
    uncovered relevant passages or spurious items. No server, no network: open it from disk.

    Example: rubric verify html graded.jsonl.gz --bank bank.jsonl.gz -o review.html
    """
    from rubric.data.files import write_output
    from rubric.verify.html import render_page

    m = _matrix(graded, prompt_class, llm, prompt_type, answer_prompt)
    page = render_page(
        m,
        _texts(bank),
        min_grade=min_grade,
        min_judgment=min_judgment,
        spurious_min=spurious_min,
        title=title,
    )
    write_output(output, page)
    n = sum(len(q.passages) for q in m.queries)
    info(f"wrote {output}: {len(m.queries)} queries, {n} passages, {len(page) // 1024} KiB")
