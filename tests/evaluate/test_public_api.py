"""``rubric.qrels``: the labels of a graded file as an object that the leaderboard takes."""

from __future__ import annotations

import pytest

import rubric
from rubric.data.trec import read_qrels
from rubric.grading.api import Graded

QSR = "QuestionSelfRatedUnanswerablePromptWithChoices"


def test_qrels_result_feeds_the_leaderboard_and_writes_trec_qrels(graded, tmp_path, cli):
    queries = list(rubric.read_passages(graded))
    result = rubric.qrels(Graded(queries, None), prompt_class=QSR)  # type: ignore[arg-type]
    assert result.to_dict()["q1"]["p1"] == 5 and result.to_dict()["q1"]["p2"] == 4  # the best grade
    written = tmp_path / "q.txt"
    assert result.write(written) == sum(len(d) for d in result.to_dict().values())
    command = tmp_path / "cli.txt"
    assert cli("evaluate", "qrels", graded, "--prompt-class", QSR, "-o", command).returncode == 0
    assert written.read_text() == command.read_text()
    assert read_qrels(written) == result.to_dict()
    runs = {"alpha": {"q1": {"p1": 2.0, "p2": 1.0}}, "beta": {"q1": {"p2": 2.0, "p1": 1.0}}}
    from_result = rubric.leaderboard(result, runs, "P@1", level=4)
    assert from_result.values() == rubric.leaderboard(written, runs, "P@1", level=4).values()
    assert from_result.values() == {"alpha": 1.0, "beta": 1.0}
    with pytest.raises(rubric.UserError):
        rubric.qrels(queries, prompt_class="NoSuchPrompt")
    with pytest.raises(rubric.UserError, match="min_grade: used only with label='count'"):
        rubric.qrels(queries, prompt_class=QSR, min_grade=4)  # label max: it would change nothing
    counted = rubric.qrels(Graded(queries, None), prompt_class=QSR, label="count", min_grade=4)
    assert counted.to_dict() != result.to_dict()
