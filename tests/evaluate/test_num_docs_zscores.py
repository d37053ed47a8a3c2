"""trec_eval's -N (documents in the collection, for utility) and -Z (values as z-scores against a
reference file) in `evaluate leaderboard` (--num-docs, --zscores). trec_eval 9.0.8's own outputs
(out.test.aqZ) are compared in tests/validation/test_evaluate_trec_eval.py; here the rules, on
runs whose values are worked out by hand."""

from __future__ import annotations

import math

import pytest

from rubric.evaluate.zscores import MISSING, read_zscores, zscore

QRELS = "q1 0 a 1\nq1 0 b 0\nq1 0 c 1\nq2 0 a 1\nq2 0 d 0\n"
# q1 retrieves a (rel), b (non-rel), x (unjudged); q2 retrieves d (non-rel)
RUN = "q1 Q0 a 1 3 r\nq1 Q0 b 2 2 r\nq1 Q0 x 3 1 r\nq2 Q0 d 1 1 r\n"


@pytest.fixture
def files(tmp_path):
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


def lines(result) -> dict[tuple[str, str], str]:
    assert result.returncode == 0, result.stderr
    return {(n.strip(), q): v for n, q, v in (line.split("\t") for line in result.stdout.splitlines())}


def test_num_docs_is_the_collection_size_in_utilitys_fourth_term(cli, files):
    """utility = p1*a + p2*b + p3*c + p4*d with d = N + a - retrieved - relevant (trec_eval)."""
    qrels, run = files
    args = ("evaluate", "leaderboard", "--qrels", qrels, "--run", run, "-f", "trec_eval", "-q")
    plain = lines(cli(*args, "-m", "utility.1,-1,-2,0.5"))
    big = lines(cli(*args, "-m", "utility.1,-1,-2,0.5", "--num-docs", "1000"))
    # q1: a=1 b=2 (b and the unjudged x) c=1, d = N + 1 - 3 - 2; q2: a=0 b=1 c=1, d = N + 0 - 1 - 1
    for n, got in ((0, plain), (1000, big)):
        q1 = 1 - 2 - 2 + 0.5 * (n + 1 - 3 - 2)
        q2 = 0 - 1 - 2 + 0.5 * (n - 1 - 1)
        assert got[("utility_1,-1,-2,0.5", "q1")] == f"{q1:.4f}"
        assert got[("utility_1,-1,-2,0.5", "q2")] == f"{q2:.4f}"
        assert got[("utility_1,-1,-2,0.5", "all")] == f"{(q1 + q2) / 2:.4f}"
    # no fourth coefficient: the size changes nothing
    assert lines(cli(*args, "-m", "utility.2,-1,0,0", "--num-docs", "99")) == lines(
        cli(*args, "-m", "utility.2,-1,0,0")
    )


def test_a_query_that_complete_adds_scores_zero_utility_as_in_trec_eval(cli, files, tmp_path):
    """trec_eval -c never evaluates a query the run lacks: it adds 0, not an empty ranking's
    utility (which would count the relevant documents left out)."""
    qrels, _ = files
    only_q1 = tmp_path / "q1.txt"
    only_q1.write_text("".join(line + "\n" for line in RUN.splitlines() if line.startswith("q1")))
    got = lines(cli("evaluate", "leaderboard", "--qrels", qrels, "--run", only_q1, "-c", "-f", "trec_eval",
                    "-m", "utility.1,-1,-2,0.5", "--num-docs", "10"))  # fmt: skip
    q1 = 1 - 2 - 2 + 0.5 * (10 + 1 - 3 - 2)
    assert got[("utility_1,-1,-2,0.5", "all")] == f"{q1 / 2:.4f}"


def test_zscore_rules_of_trec_eval():
    assert zscore(0.5, (0.25, 0.5)) == 0.5
    assert zscore(0.5, None) == MISSING == -1000000.0
    assert zscore(10.0, (10.0, 0.0)) == 0.0 and zscore(11.0, (10.0, 0.0)) == MISSING
    assert math.isnan(zscore(0.3, (math.nan, math.nan)))


def test_zscores_replace_values_and_print_as_trec_eval(cli, files, tmp_path):
    qrels, run = files
    z = tmp_path / "z.txt"
    # P_5 of q1 is 1/5, of q2 0; map of q1 (1/1)/2 = 0.5, of q2 0; q2 has no map line
    z.write_text("q1 P_5 0.1 0.05\nq2 P_5 0.0 0.0\nq1  map\t0.25   0.5\n\nq1 num_ret 2 0.5\nq2 num_ret 1 0\n")
    measures = ["-m", "P.5", "-m", "map", "-m", "num_ret", "-m", "num_q", "-m", "gm_map"]
    got = lines(cli("evaluate", "leaderboard", "--qrels", qrels, "--run", run, "-f", "trec_eval", "-q",
                    *measures, "--zscores", z))  # fmt: skip
    assert got[("ZP_5", "q1")] == "2.0000" and got[("ZP_5", "q2")] == "0.0000"
    assert got[("ZP_5", "all")] == "1.0000"
    assert got[("Zmap", "q1")] == "0.5000" and got[("Zmap", "q2")] == "-1000000.0000"
    assert got[("Zmap", "all")] == f"{(0.5 - 1000000) / 2:.4f}"
    assert got[("Znum_ret", "q1")] == "2.0000" and got[("Znum_ret", "all")] == "2.0000"  # summed, as floats
    assert got[("Znum_q", "all")] == "2.0000"
    assert got[("Zgm_map", "all")] == "0.0000"  # no gm_map lines: exp of the mean of -1000000
    assert ("runid", "all") not in got
    tsv = cli("evaluate", "leaderboard", "--qrels", qrels, "--run", run, "-m", "P.5", "--zscores", z)
    assert tsv.returncode == 0 and "\tP.5\t1.0000\t" in tsv.stdout


def test_read_zscores_names_file_and_line(tmp_path):
    from rubric.errors import UserError

    z = tmp_path / "z.txt"
    z.write_text("q1 map 0.1 nan\n")
    assert math.isnan(read_zscores(z)[("q1", "map")][1])  # as trec_eval reads it (warned)
    for text, message in [
        ("q1 map 0.1\n", r"z.txt:1: a z-score line is 'qid measure mean std_dev', found 3 fields"),
        ("q1 map 0.1 0.2\nq1 map x 0.2\n", r"z.txt:2: mean and std_dev must be numbers, found x 0.2"),
        ("q1 map 0.1 0.2\n\nq1 map 0.3 0.2\n", r"z.txt:3: query q1 measure map again.*line 1\)"),
        ("\n\n", r"z.txt: holds no z-score lines"),
    ]:  # fmt: skip
        z.write_text(text)
        with pytest.raises(UserError, match=message):
            read_zscores(z)
    z.write_text("q1 map 0.1 0.2\nq1 map 0.1 0.2\n")  # an exact repeat is harmless
    assert read_zscores(z) == {("q1", "map"): (0.1, 0.2)}
