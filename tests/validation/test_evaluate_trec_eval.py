"""trec_eval 9.0.8's own test suite: every number it prints for a measure pytrec_eval has.

Each case is a command of the ``quicktest`` target of trec_eval's Makefile (usnistgov/trec_eval; the
expected ``out.test*`` files of tag v9.0.8, e.g. ``out.test.aq`` = ``-m all_trec -q qrels.test
results.test``); ``rubric evaluate leaderboard --format trec_eval`` must print the same line, to
all printed digits, per query and ``all``, ``relstring`` lines included, and no line more.
``-M``, ``-N`` and ``-Z`` are ``--max-docs``, ``--num-docs`` and ``--zscores``.
"""

from __future__ import annotations

import pytest

MEAS_PARAMS = [
    "iprec_at_recall..10,.20,.25,.75,.50",
    "P.5,7,3",
    "recall.20,2000",
    "Rprec_mult.5.0,0.2,0.35",
    "utility.2,-1,0,0",
    "11pt_avg..25,.5,.75",
    "ndcg.1=3,2=9,4=4.5",
    "ndcg_cut.10,20,23.4",
    "success.2,5,20",
]

CASES = {
    "out.test": ("qrels.test", "results.test", ["-m", "official"]),
    "out.test.aq": ("qrels.test", "results.test", ["-m", "all_trec", "-q"]),
    "out.test.aqc": ("qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c"]),
    "out.test.aqcM": ("qrels.test", "results.trunc", ["-m", "all_trec", "-q", "-c", "--max-docs", "100"]),
    # -Z: every value a z-score against trec_eval's own zscores_file of that version
    "out.test.aqZ": ("qrels.test", "results.test", ["-q", "-m", "all_trec", "--zscores", "@zscores_file"]),
    "out.test.aql": (
        "qrels.rel_level",
        "results.test",
        ["-m", "all_trec", "-m", "relstring.20", "-q", "-l", "2"],
    ),
    "out.test.meas_params": (
        "qrels.test",
        "results.test",
        [a for m in MEAS_PARAMS for a in ("-m", m)] + ["-q"],
    ),
}


def parse(text: str) -> dict[tuple[str, str], str]:
    out = {}
    for line in text.splitlines():
        name, query, value = line.split("\t")
        out[(name.strip(), query)] = value
    return out


@pytest.mark.parametrize("expected_name", sorted(CASES))
def test_trec_eval_suite(expected_name, cli, shared):
    qrels, results, args = CASES[expected_name]
    args = [str(shared("trec_eval", "v9.0.8", a[1:])) if a.startswith("@") else a for a in args]
    expected = parse(shared("trec_eval", "v9.0.8", expected_name).read_text())
    result = cli(
        "evaluate",
        "leaderboard",
        "--qrels",
        shared("trec_eval", qrels),
        "--run",
        shared("trec_eval", results),
        "-f",
        "trec_eval",
        *args,
    )
    assert result.returncode == 0, result.stderr
    ours = parse(result.stdout)
    assert len(expected) >= 30
    wrong = {k: (v, ours.get(k)) for k, v in expected.items() if ours.get(k) != v}
    assert not wrong, f"{len(wrong)} of {len(expected)} differ: {sorted(wrong.items())[:10]}"
    extra = set(ours) - set(expected)
    assert not extra, sorted(extra)[:10]
    if "-q" in args and "-m" in args and "all_trec" in args:  # line for line, in trec_eval's order
        assert result.stdout == shared("trec_eval", "v9.0.8", expected_name).read_text()


# trec_eval 9.0.8 (built from tag v9.0.8) on the DL19 passage qrels and run ICT-BERT2:
# `trec_eval -m num_rel -l 2 [-c] qrels.dl19-passage.txt ICT-BERT2`. Under -c its `all` line
# recounts the qrels lines with relevance > 0 (4102), whatever -l says.
NUM_REL = {(): "2501", ("-c",): "4102"}


@pytest.mark.parametrize("flags", sorted(NUM_REL))
def test_num_rel_level_complete(flags, cli, shared):
    result = cli(
        "evaluate",
        "leaderboard",
        "--qrels",
        shared("anserini-tools", "qrels.dl19-passage.txt"),
        "--run",
        shared("naghmefarzi-llmjudge", "dl19-runs", "input.ICT-BERT2.gz"),
        "-f",
        "trec_eval",
        "-m",
        "num_rel",
        "-l",
        "2",
        *flags,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"num_rel               \tall\t{NUM_REL[flags]}\n"
