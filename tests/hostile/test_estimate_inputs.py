"""`rubric evaluate estimate` on bad inputs: one `rubric: error:` line, exit 2, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.cli import assert_user_error, run_cli

TINY = Path(__file__).resolve().parents[2] / "examples" / "tiny"


def _qrels(path: Path, keep) -> Path:  # noqa: ANN001 - a predicate on the query id
    lines = [line for line in (TINY / "qrels.txt").read_text().splitlines() if keep(line.split()[0])]
    path.write_text("\n".join(lines) + "\n")
    return path


def _topics() -> list[str]:
    return sorted({line.split()[0] for line in (TINY / "qrels.txt").read_text().splitlines()})


def _run(tmp_path, *extra, llm=None, human=None):
    topics = _topics()
    llm = llm or _qrels(tmp_path / "llm.qrels", lambda q: True)
    human = human or _qrels(tmp_path / "human.qrels", lambda q: q in topics[:3])
    out = tmp_path / "out.tsv"
    r = run_cli(
        "evaluate", "estimate", "--run", TINY / "runs", "--qrels", llm, "--human", human, "-m", "nDCG@10",
        "-o", out, *extra,
    )  # fmt: skip
    return r, out


@pytest.mark.parametrize("value", ["0", "1", "1.5", "-0.2"])
def test_confidence_outside_0_1(tmp_path, value):
    r, out = _run(tmp_path, "--confidence", value)
    assert_user_error(r, "confidence")
    assert not out.exists()


def test_fewer_than_two_judged_topics(tmp_path):
    one = _qrels(tmp_path / "one.qrels", lambda q: q == _topics()[0])
    r, out = _run(tmp_path, human=one)
    assert_user_error(r, "1 judged topic", "at least 2")
    assert not out.exists()


def test_human_judgments_of_a_topic_without_llm_labels(tmp_path):
    topics = _topics()
    llm = _qrels(tmp_path / "llm.qrels", lambda q: q != topics[0])
    r, out = _run(tmp_path, llm=llm)
    assert_user_error(r, "human.qrels", "without LLM labels", topics[0])
    assert not out.exists()


def test_a_run_missing_a_topic_scores_zero_there(tmp_path):
    """The stated rule (trec_eval -c), said on stderr; not an error."""
    runs = tmp_path / "runs"
    runs.mkdir()
    first = _topics()[0]
    for path in (TINY / "runs").iterdir():
        lines = path.read_text().splitlines()
        if path.stem == "bm25":
            lines = [line for line in lines if line.split()[0] != first]
        (runs / path.name).write_text("\n".join(lines) + "\n")
    out = tmp_path / "out.tsv"
    llm = _qrels(tmp_path / "llm.qrels", lambda q: True)
    human = _qrels(tmp_path / "human.qrels", lambda q: q in _topics()[:3])
    r = run_cli(
        "evaluate", "estimate", "--run", runs, "--qrels", llm, "--human", human, "-m", "nDCG@10", "-o", out
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "bm25 (1)" in r.stderr and "counted as 0" in r.stderr
    assert out.exists()


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--mode", "bayes"], "mode"),
        (["-f", "csv"], "--format"),
        (["-m", "alpha_nDCG@10"], "alpha_nDCG"),
        (["--plot", "forest.gif"], "--plot"),
        (["--simultaneous"], "--simultaneous"),  # without --pairs there is nothing to make simultaneous
    ],
)
def test_bad_options_fail_before_reading(tmp_path, extra, fragment):
    r, out = _run(tmp_path, *extra)
    assert_user_error(r, fragment)
    assert not out.exists()


def test_neither_or_both_llm_label_sources(tmp_path):
    human = _qrels(tmp_path / "human.qrels", lambda q: True)
    r = run_cli("evaluate", "estimate", "--run", TINY / "runs", "--human", human, "-m", "P@5")
    assert_user_error(r, "--qrels / --graded")


# --- verify sample ---------------------------------------------------------------------------


@pytest.fixture
def graded(tmp_path):
    from helpers import graded_fixture

    return graded_fixture.write_graded(tmp_path / "graded.jsonl.gz"), graded_fixture.RATING


@pytest.mark.parametrize(
    "extra, fragment",
    [
        (["--size", "5"], "--size"),  # the fixture has 2 topics
        (["--size", "1"], "--size"),
        (["--size", "2", "--strata", "1"], "--strata"),
        (["--size", "2", "--strata", "3"], "--strata"),
        (["--size", "2", "--label", "best"], "--label"),
    ],
)
def test_sample_bad_options_write_nothing(tmp_path, graded, extra, fragment):
    path, rating = graded
    out = tmp_path / "judge.txt"
    r = run_cli("verify", "sample", path, "--prompt-class", rating, "-o", out, *extra)
    assert r.returncode == 2, r.stderr
    assert fragment in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_sample_is_seeded_and_readable_by_queries(tmp_path, graded):
    path, rating = graded
    outs = []
    for name in ("a.txt", "b.txt"):
        r = run_cli("verify", "sample", path, "--prompt-class", rating, "--size", "2", "-o", tmp_path / name)
        assert r.returncode == 0, r.stderr
        outs.append((tmp_path / name).read_text())
    assert outs[0] == outs[1]
    from rubric.data.query_selection import read_query_ids

    assert read_query_ids(tmp_path / "a.txt") == ["q1", "q2"]
    # the header tells where the file goes, and that `evaluate estimate` must not get it as
    # --queries (that restricts the LLM topics too: "2 of 2 judged", zero-width intervals)
    header = " ".join(line for line in outs[0].splitlines() if line.startswith("#"))
    assert "verify html --queries FILE" in header
    assert "give `evaluate estimate` every topic (no --queries" in header
