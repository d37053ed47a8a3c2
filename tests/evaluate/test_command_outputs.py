"""The library bodies of the `rubric evaluate` commands: each checks its options before it reads
any file (a queries reader given as a function is not even called), then returns what the
command writes (text and stderr lines) or writes it itself (qrels, per-query and per-topic TSV)."""

from __future__ import annotations

import json

import pytest

from helpers import TINY
from rubric.data.grade_filter import GradeFilter
from rubric.data.query_selection import QuerySelection
from rubric.errors import UserError, one_of
from rubric.evaluate.assignment_agreement import confusion_output
from rubric.evaluate.correlation import SweepGrid, correlation_output, sweep, sweep_tsv
from rubric.evaluate.coverage import cover, cover_output
from rubric.evaluate.leaderboards import evaluate, leaderboard_output, report_from
from rubric.evaluate.meta import MetaReport, meta_output
from rubric.evaluate.nuggets import nugget_scores, nuggets_output
from rubric.evaluate.qrels import write_qrels_file
from rubric.evaluate.treceval import trec_eval_lines
from rubric.plots import check_plot

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"
RUNS = [TINY / "run.alpha", TINY / "run.beta"]


class Reader:
    """A queries reader that counts its calls (the CLI passes ``QueryOptions.selection``)."""

    def __init__(self, ids: tuple[str, ...] | None = None):
        self.ids, self.calls = ids, 0

    def __call__(self) -> QuerySelection:
        self.calls += 1
        return QuerySelection(self.ids)


def test_one_of_names_the_option_and_every_choice():
    assert one_of("--test", "t", ("t", "bootstrap")) == "t"
    with pytest.raises(UserError, match=r"^--test: expected one of t, bootstrap, got 'z'$"):
        one_of("--test", "z", ("t", "bootstrap"))


@pytest.mark.parametrize(
    "options, message",
    [
        ({"fmt": "xml"}, "fmt: expected one of tsv, csv, json, latex, trec_eval, got 'xml'"),
        ({"name_from": "dir"}, "name_from: expected one of tag, file, got 'dir'"),
        ({"measures": ["nDCG@ten"]}, "measures: nDCG@ten"),
    ],
)
def test_leaderboard_options_fail_before_any_file_is_read(tmp_path, options, message):
    reader = Reader()
    args = {"measures": ["map"], **options}
    with pytest.raises(UserError, match=message):
        leaderboard_output(tmp_path / "missing.qrels", [tmp_path / "missing.run"], queries=reader, **args)
    assert reader.calls == 0


def test_leaderboard_output_in_every_format():
    done = evaluate(TINY / "qrels.txt", RUNS, ["map", "P.5"])
    tsv = leaderboard_output(TINY / "qrels.txt", RUNS, ["map", "P.5"], per_query=True, digits=3)
    assert tsv.text == report_from(done.results).render("tsv", digits=3, per_query=True)
    assert tsv.notes[-1] == "scored 2 runs" and tsv.before == []
    trec = leaderboard_output(TINY / "qrels.txt", RUNS, ["map", "P.5"], fmt="trec_eval")
    assert trec.text == "".join(
        line + "\n" for r in done.results for line in trec_eval_lines(r, per_query=False, runid=False)
    )
    with_runid = leaderboard_output(TINY / "qrels.txt", RUNS[:1], ["official"], fmt="trec_eval")
    assert with_runid.text.startswith("runid                 \tall\talpha\n")


def test_leaderboard_reads_the_queries_once_after_the_checks():
    reader = Reader(("q1", "q9"))
    done = leaderboard_output(TINY / "qrels.txt", RUNS, ["map"], queries=reader)
    assert reader.calls == 1
    assert any("q9" in note for note in done.notes)
    assert {row.split("\t")[4] for row in done.text.splitlines()[1:]} == {"1"}  # n_queries: q1 only


def test_write_qrels_file(graded, tmp_path):
    out = tmp_path / "out.qrels"
    notes = write_qrels_file(
        graded, out, selection=GradeFilter(QSR), label="count", min_grade=4, queries=Reader(("q1", "q7"))
    )
    assert out.read_text().splitlines() == ["q1 0 p1 1", "q1 0 p2 1", "q1 0 p3 0"]
    assert notes[0] == f"1 query is not in {graded} (selected): q7"
    assert notes[1].startswith(f"wrote {out}: 3 lines from 3 graded passages")


@pytest.mark.parametrize(
    "options, message",
    [
        ({"selection": GradeFilter(prompt_type="answer")}, "prompt_type: expected one of question, nugget"),
        ({"label": "best"}, "label: expected 'max', 'count' or 'nth:M'"),
        ({"facet_bank": "bank.jsonl"}, "facet_bank: only used with per_facet"),
        ({"facets": True, "per_item": True}, "per_facet: not used with per_item"),
    ],
)
def test_qrels_options_fail_before_any_file_is_read(tmp_path, options, message):
    reader = Reader()
    with pytest.raises(UserError, match=message):
        write_qrels_file(tmp_path / "missing.jsonl.gz", tmp_path / "out.qrels", queries=reader, **options)
    assert reader.calls == 0 and list(tmp_path.iterdir()) == []


def test_cover_output_checks_format_and_prompt_type_first(graded, tmp_path):
    for options, message in (
        ({"fmt": "md"}, "fmt: expected one of tsv, json, latex, got 'md'"),
        (
            {"selection": GradeFilter(prompt_type="direct")},
            "prompt_type: expected one of question, nugget, got",
        ),
    ):
        with pytest.raises(UserError, match=message):
            cover_output(tmp_path / "missing.jsonl.gz", **options)
    done = cover_output(graded, fmt="json", selection=GradeFilter(QSR), k=2)
    report = cover(graded, k=2, selection=GradeFilter(QSR))
    assert done.text == report.to_json() and done.notes == report.notes


def test_correlation_output_both_modes(tmp_path):
    lb = tmp_path / "lb.tsv"
    lb.write_text("run\tmeasure\tvalue\na\tmap\t0.5\nb\tmap\t0.4\nc\tmap\t0.1\nd\tmap\t0.3\n")
    official = tmp_path / "official.json"
    official.write_text(json.dumps({"a": 1, "b": 2, "c": 3, "e": 4}))
    done = correlation_output(official, leaderboard=lb)
    assert done.text == "runs\tspearman\tkendall\n3\t1.0000\t1.0000\n"
    assert done.before == [
        "left out runs not on the official leaderboard: d",
        f"left out official runs missing from {lb}: e",
    ]
    official.write_text(json.dumps({"alpha": 1, "beta": 2, "gamma": 3}))
    gamma = tmp_path / "run.gamma"
    gamma.write_text("q1 Q0 d4 1 1.0 gamma\nq2 Q0 d7 1 1.0 gamma\n")
    runs = [*RUNS, gamma]
    grid = SweepGrid([TINY / "qrels.txt"], runs, ["P.1", "map"], None, ["q1", "q2"])
    swept = correlation_output(official, digits=-1, sweep_grid=True, grid=grid)
    expected = sweep(
        [TINY / "qrels.txt"],
        runs,
        official,
        measures=["P.1", "map"],
        levels=[1],
        digits=None,
        queries=["q1", "q2"],
    )
    assert swept.text == sweep_tsv(expected.rows) and len(expected.rows) == 2
    assert (swept.before, swept.notes) == (expected.left_out(), expected.notes)


@pytest.mark.parametrize(
    "leaderboard, sweep_grid, grid, message",
    [
        ("lb.tsv", True, SweepGrid(["q"], ["r"], ["map"]), "leaderboard: not used with sweep_grid"),
        (None, True, SweepGrid(["q"], None, ["map"]), "runs: sweep_grid needs it"),
        (None, True, SweepGrid(["q"], ["r"], ["nDCG@ten"]), "measures: nDCG@ten"),
        (None, False, SweepGrid(), "leaderboard: give our leaderboard TSV"),
        ("lb.tsv", False, SweepGrid(levels=[2]), "levels: only used with sweep_grid"),
        ("lb.tsv", False, SweepGrid(queries_file="q.txt"), "queries_file: only used with sweep_grid"),
    ],
)
def test_correlation_options_fail_before_any_file_is_read(tmp_path, leaderboard, sweep_grid, grid, message):
    with pytest.raises(UserError, match=message):
        correlation_output(
            tmp_path / "missing.json", leaderboard=leaderboard, sweep_grid=sweep_grid, grid=grid
        )


def _assigned(path, labels):
    with open(path, "w") as f:
        for (run, query), assignment in labels.items():
            nuggets = [
                {"nugget_id": f"{query}/n{i}", "nugget_text": "n", "importance": "vital", "assignment": a}
                for i, a in enumerate(assignment)
            ]
            f.write(json.dumps({"run_id": run, "query_id": query, "nuggets": nuggets}) + "\n")
    return path


def test_confusion_output_refuses_meta_options_and_notes_what_is_left_out(tmp_path):
    a = _assigned(tmp_path / "a.jsonl", {("r", "q1"): ["support", "not_support"], ("r", "q2"): ["support"]})
    b = _assigned(tmp_path / "b.jsonl", {("r", "q1"): ["support", "partial_support"]})
    for kwargs, message in (
        ({"reference": ["x"]}, "reference: not used with confusion"),
        ({"measures": ["V_strict"]}, "measures: not used with confusion"),
        ({"per_topic": "pt.tsv"}, "per_topic: not used with confusion"),
        ({"label_runs": True}, "label_runs: not used with confusion"),
    ):
        with pytest.raises(UserError, match=message):
            confusion_output([a, b], **kwargs)
    with pytest.raises(UserError, match="give two ASSIGNED files .automatic, manual., got 1"):
        confusion_output([a])
    result = confusion_output([a, b])
    assert result.n == 2
    assert result.notes == [result.summary(), f"left out assignments in one file only: 1 in {a}, 0 in {b}"]


def test_meta_output_and_nuggets_output(tmp_path):
    first = _assigned(tmp_path / "a.jsonl", {(r, q): ["support", "not_support"] for r in "xyz" for q in "12"})
    second = _assigned(
        tmp_path / "b.jsonl",
        {("x", "1"): ["support", "support"], ("y", "1"): ["not_support"] * 2, ("z", "1"): ["support"] * 2,
         ("x", "2"): ["partial_support"] * 2, ("y", "2"): ["support"] * 2, ("z", "2"): ["not_support"] * 2},
    )  # fmt: skip
    with pytest.raises(UserError, match="fmt: expected one of tsv, json, latex, got 'md'"):
        nuggets_output(tmp_path / "missing.jsonl", "md")
    per_query = tmp_path / "a.tsv"
    done = nuggets_output(first, "json", per_query)
    report = nugget_scores(first)
    assert done.text == report.to_json() and done.notes == report.notes
    assert per_query.read_text() == report.per_query_tsv()
    nuggets_output(second, per_query=tmp_path / "b.tsv")
    with pytest.raises(UserError, match="reference: give the reference evaluation"):
        meta_output([str(per_query)], queries=Reader())
    with pytest.raises(UserError, match="fmt: expected one of tsv, json, latex, got 'md'"):
        meta_output(["missing.tsv"], reference=["missing.tsv"], fmt="md")
    result = meta_output(
        [f"auto={per_query}"], reference=[f"manual={tmp_path / 'b.tsv'}"], measures=["A_strict"], resamples=0
    )
    assert isinstance(result, MetaReport)
    assert [(r.condition, r.measure, r.runs) for r in result.rows] == [("auto", "A_strict", 3)]
    assert result.write_per_topic(tmp_path / "pt.tsv") == f"wrote {tmp_path / 'pt.tsv'}"
    assert (tmp_path / "pt.tsv").read_text() == result.per_topic_tsv()


def test_check_plot():
    assert check_plot(None) is None
    with pytest.raises(UserError, match="plot: x.gif: the file name must end in .png, .svg or .pdf"):
        check_plot("x.gif")
