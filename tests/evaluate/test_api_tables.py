"""The notebook side of the API: grades as a flat table (``Graded.rows``, ``read_graded``,
``to_dataframe``), a report as a short table, and one vocabulary of inputs across the verbs (paths
or the objects the other verbs return, measures as names or ir_measures objects, a one-line
error naming the parameter for anything else)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import math

import ir_measures
import numpy as np
import pytest

import rubric
from helpers import ROOT
from rubric.data.grade_table import GradeRow
from rubric.evaluate.estimate import EstimateReport, TopicValues, estimate_from_values
from rubric.evaluate.report import REPR_RUNS, Report, Score
from rubric.grading.api import Graded
from rubric.grading.engine import GradeStats

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"
RUNS = {"alpha": {"q1": {"p1": 3.0, "p2": 2.0}, "q2": {"p4": 1.0}}, "beta": {"q1": {"p3": 2.0, "p1": 1.0}}}


def _graded(path) -> Graded:
    return Graded(list(rubric.read_passages(path)), GradeStats())


def test_rows_are_one_typed_row_per_grade_from_a_file_and_from_loaded_queries(graded):
    rows = list(rubric.read_graded(graded))
    assert rows == list(_graded(graded).rows())
    # q1: p1 has 3 question grades, 1 nugget grade and 1 direct grade, p2 and p3 3 each; q2: p4 1
    assert len(rows) == 12
    ranks = {"alpha": 1, "beta": 2}
    assert rows[0] == GradeRow("q1", "p1", "q1/a", QSR, "t5", "question", 5, "x", None, ranks)
    assert rows[3] == GradeRow(
        "q1", "p1", "q1/n", "NuggetSelfRatedPrompt", "t5", "nugget", 3, "x", None, ranks
    )
    direct = rows[4]
    assert (direct.item, direct.prompt_class, direct.prompt_type, direct.grade, direct.answer) == (
        None, "Sun", "direct", 2, "2",
    )  # fmt: skip
    assert [r.ranks for r in rows if r.passage == "p3"] == [{"beta": 1}] * 3
    assert [r.passage for r in rubric.read_graded(graded, queries=["q2"])] == ["p4"]


def test_rows_carry_the_judgment_of_their_query(tmp_path, builders):
    lines = builders.graded_lines()
    lines[0][1][1]["paragraph_data"]["judgments"] = [
        {"paragraphId": "p2", "query": "q1", "relevance": 2, "titleQuery": "t"},
        {"paragraphId": "p2", "query": "q9", "relevance": 0, "titleQuery": "t"},
    ]
    path = tmp_path / "judged.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert {r.passage: r.judgment for r in rubric.read_graded(path) if r.query == "q1"} == {
        "p1": None,
        "p2": 2,
        "p3": None,
    }


def test_to_dataframe_has_one_column_per_field_and_typed_columns(graded):
    frame = _graded(graded).to_dataframe()
    assert list(frame.columns) == [f.name for f in dataclasses.fields(GradeRow)]
    assert list(frame.columns)[:3] == ["query", "passage", "item"] and "judgment" in frame.columns
    assert frame.shape == (12, 10)
    assert str(frame["grade"].dtype) == "int64" and str(frame["judgment"].dtype) == "Int64"
    assert frame[frame.prompt_class == QSR].groupby("query")["grade"].max().to_dict() == {"q1": 5, "q2": 3}


def test_read_graded_names_the_file_and_line_of_a_bad_line(tmp_path, builders):
    path = tmp_path / "bad.jsonl.gz"
    with gzip.open(path, "wt") as f:
        f.write(json.dumps(builders.graded_lines()[0]) + "\n" + "{not json\n")
    with pytest.raises(rubric.UserError, match=rf"^{path}:2: "):
        list(rubric.read_graded(path))


def test_the_grade_verbs_take_a_graded_object_as_they_take_its_file(graded):
    loaded = _graded(graded)
    assert repr(loaded) == "<Graded: 2 queries, 5 passages>"
    by_path = rubric.cover(graded, selection=rubric.GradeFilter(QSR))
    by_object = rubric.cover(loaded, selection=rubric.GradeFilter(QSR))
    assert by_object.to_tsv() == by_path.to_tsv()
    assert rubric.qrels(loaded, QSR).to_dict() == rubric.qrels(graded, QSR).to_dict()
    assert rubric.qrels(loaded.queries, QSR).to_dict() == rubric.qrels(graded, QSR).to_dict()


def test_measures_are_names_or_ir_measures_objects(graded):
    qrels = rubric.qrels(graded, QSR)
    named = rubric.leaderboard(qrels, RUNS, ["nDCG@10", "P(rel=4)@2"], level=4)
    objects = rubric.leaderboard(qrels, RUNS, [ir_measures.nDCG @ 10, ir_measures.P(rel=4) @ 2], level=4)
    assert objects.to_tsv() == named.to_tsv()
    single = rubric.leaderboard(qrels, RUNS, ir_measures.nDCG @ 10, level=4)
    assert single.values() == named.values("nDCG@10")


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda g: rubric.leaderboard(g, RUNS, [3]), "measures: expected measure names or ir_measures"),
        (lambda g: rubric.leaderboard(42, RUNS, "P@1"), "qrels: expected a qrels file"),
        (lambda g: rubric.leaderboard(g, 42, "P@1"), "runs: expected run files or folders"),
        (lambda g: rubric.cover(42), "passages: expected a graded passages file, rubric.grade's result"),
        (lambda g: rubric.qrels({"q1": 1}), "graded: expected a graded passages file"),
        (lambda g: rubric.correlate(3.5, {"a": 1}), "ours: expected a Report"),
        (lambda g: rubric.correlate({"a": 1.0}, 3), "official: expected a Report"),
        (lambda g: rubric.pool("t.json", 42, "c.tsv"), "runs: expected a path or a list of paths"),
    ],
)
def test_anything_else_is_a_one_line_error_naming_the_parameter(graded, call, message):
    qrels = rubric.qrels(graded, QSR).to_dict()
    with pytest.raises(rubric.UserError) as caught:
        call(qrels)
    assert str(caught.value).startswith(message) and "\n" not in str(caught.value)
    assert str(caught.value).endswith(("got int", "got float", "got dict"))


def test_pool_takes_topics_and_the_old_keyword_warns_naming_the_removal(tmp_path):
    tiny = ROOT / "examples" / "tiny"
    topics, runs, collection = tiny / "queries.json", [tiny / "runs"], tiny / "collection.tsv"
    new = rubric.pool(topics=topics, runs=runs, collection=collection)
    removal = r"^queries= is deprecated and will be removed in rubric-workbench 0\.3\.0; use topics=$"
    with pytest.warns(DeprecationWarning, match=removal):
        old = rubric.pool(queries=topics, runs=runs, collection=collection)
    assert [q.model_dump() for q in old] == [q.model_dump() for q in new]
    with pytest.raises(rubric.UserError, match="^queries, topics: give topics only"):
        rubric.pool(topics, runs, collection, queries=topics)


def _report(runs: int) -> Report:
    return Report(
        [
            Score(f"run-{i:02d}", m, i / 100 + j, {"q1": i / 100})
            for i in range(runs)
            for j, m in enumerate(("nDCG@10", "P@5"))
        ]
    )


def test_a_report_of_37_runs_prints_as_a_short_table():
    report = _report(37)
    lines = repr(report).splitlines()
    assert lines[0] == "<Report 'leaderboard': 37 runs x 2 measures>"
    assert lines[1].split() == ["run", "nDCG@10", "P@5"]
    assert lines[2].split() == ["run-36", "0.3600", "1.3600"]  # best first
    assert len(lines) == 2 + REPR_RUNS + 1 and lines[-1] == f"... {37 - REPR_RUNS} more runs"
    assert max(len(line) for line in lines) < 60
    html = report._repr_html_()
    assert html.count("<tr>") == 38 and "<th>nDCG@10</th>" in html and "more runs" not in html
    assert "&lt;b&gt;" in Report([Score("<b>", "P@5", 1.0)])._repr_html_()  # run names escaped


def _estimates(runs: int, topics: int, measures: tuple[str, ...]) -> EstimateReport:
    """PPI++ estimates of ``runs`` runs over ``topics`` topics, a quarter of them judged."""
    rng = np.random.default_rng(0)
    human = np.clip(rng.random((runs, 1)) * 0.5 + rng.random((runs, topics)) * 0.5, 0, 1)
    llm = np.clip(human + rng.normal(0, 0.1, human.shape), 0, 1)
    names, ids, judged = (
        [f"run-{i:02d}" for i in range(runs)],
        [f"q{i}" for i in range(topics)],
        slice(0, None, 4),
    )
    return estimate_from_values(
        TopicValues(names, ids, {m: llm for m in measures}),
        TopicValues(names, ids[judged], {m: human[:, judged] for m in measures}),
        pairs=True,
    )


def test_estimates_of_37_runs_print_as_a_short_table():
    """A notebook shows the PPI++ estimate and interval of the best runs, one line each, not a
    dataclass dump of every row and pair."""
    report = _estimates(37, 43, ("nDCG@10", "P@10"))
    lines = repr(report).splitlines()
    assert (
        lines[0]
        == "<EstimateReport: 37 runs x 2 measures, PPI++ from 11 of 43 topics judged, 0.95 intervals>"
    )
    assert lines[1].split() == ["run", "nDCG@10", "interval", "P@10", "interval"]
    best = report.rows[0]  # rows are best first by the first measure's PPI++ estimate
    assert best.ppipp[0] == max(r.ppipp[0] for r in report.rows if r.measure == "nDCG@10")
    value, low, high = best.ppipp
    assert lines[2].split()[:4] == [best.run, f"{value:.4f}", f"[{low:.4f},", f"{high:.4f}]"]
    assert len(lines) == 2 + REPR_RUNS + 2 and lines[-2] == f"... {37 - REPR_RUNS} more runs"
    resolved = sum(p.ppipp[1] > 0 or p.ppipp[2] < 0 for p in report.pairs or [])
    assert 0 < resolved and lines[-1] == f"{resolved} of {2 * 37 * 36 // 2} pairs resolved by PPI++"
    assert max(len(line) for line in lines) <= 100
    html = report._repr_html_()
    assert html.count("<tr>") == 38 and "<th>P@10</th>" in html and "more runs" not in html
    one = _estimates(3, 8, ("P@10",))
    assert repr(one).splitlines()[0].startswith("<EstimateReport: 3 runs x 1 measure, PPI++ from 2 of 8")


def test_comparisons_print_as_a_short_table():
    tiny = ROOT / "examples" / "tiny"
    comparisons = rubric.compare(tiny / "qrels.txt", [tiny / "runs"], ["nDCG@10", "P@5"])
    lines = repr(comparisons).splitlines()
    significant = sum(r.p_adjusted < 0.05 for r in comparisons.rows)
    assert lines[0] == f"<Comparisons: 6 pairs, {significant} significant at alpha 0.05>"
    assert lines[1].split() == ["run_a", "run_b", "measure", "diff", "p_adjusted", "significant"]
    first = comparisons.rows[0]
    assert lines[2].split() == [
        first.run_a, first.run_b, first.measure, f"{first.mean_b - first.mean_a:.4f}",
        f"{first.p_adjusted:.4f}", "yes" if first.p_adjusted < 0.05 else "no",
    ]  # fmt: skip
    assert len(lines) == 2 + 6
    many = dataclasses.replace(comparisons, rows=comparisons.rows * 3)
    assert repr(many).splitlines()[-1] == f"... {18 - REPR_RUNS} more pairs"
    html = comparisons._repr_html_()
    assert html.count("<tr>") == 7 and "<caption>Comparisons: 6 pairs" in html


def test_report_to_dataframe_is_the_long_table_and_its_per_query_values():
    report = _report(3)
    frame = report.to_dataframe()
    assert list(frame.columns) == ["run", "measure", "value", "stderr", "n_queries"]
    assert frame.shape == (6, 5) and frame.iloc[0].run == "run-02" and math.isnan(frame.iloc[0].stderr)
    per_query = report.to_dataframe(per_query=True)
    assert per_query.pivot(index="run", columns="measure", values="value").loc["run-01", "P@5"] == 0.01


def test_meta_evaluate_takes_the_reports_of_leaderboards(graded):
    """`rubric.meta_evaluate` compares leaderboards given as the Reports `rubric.leaderboard`
    returns, as it compares their files."""
    tiny = ROOT / "examples" / "tiny"
    human = rubric.leaderboard(tiny / "qrels.txt", [tiny / "runs"], ["nDCG@10", "P@5"], level=2)
    shuffled = rubric.leaderboard(tiny / "qrels.txt", [tiny / "runs"], ["nDCG@10", "P@5"], level=1)
    report = rubric.meta_evaluate([("level 1", shuffled)], human, resamples=0)
    rows = {r.measure: r for r in report.rows}
    assert set(rows) == {"nDCG@10", "P@5"}
    assert rows["nDCG@10"].runs == 3 and rows["nDCG@10"].tau_run == 1.0  # nDCG ignores the level
    assert rows["nDCG@10"].topics == 5 and rows["nDCG@10"].tau_topic_avg == 1.0  # per-query values kept
    with pytest.raises(
        rubric.UserError, match="^reference: expected a Report, a ScoreTable or a score file, got int$"
    ):
        rubric.meta_evaluate([("x", human)], 3)
