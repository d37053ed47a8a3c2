"""The original's GRADED table on real data: the released DL 2020 Sun qrels against the NIST
judgments give the Sun rows of RUBRIC (ICTIR'24) Table 5: label 1 on 1272 passages judged 2-3 and
3492 judged 0-1, label 0 on 394 and 6228."""

from __future__ import annotations


def test_sun_graded_rows_match_rubric_table_5(cli, shared):
    sun = shared("rubric-workbench", "rubric-evaluation", "phase3-qrels", "dl20", "Sun.qrel")
    nist = shared("anserini-tools", "qrels.dl20-passage.txt")
    r = cli("verify", "agreement", "--labels", sun, "--judgments", nist, "-j", "2", "--one-vs-rest")
    assert r.returncode == 0, r.stderr
    block = r.stdout.split("GRADED")[1].split("\n\n")[0].splitlines()
    header = block[1].split("\t")
    rows = {line.split("\t")[0]: dict(zip(header, line.split("\t"), strict=True)) for line in block[2:]}
    assert set(rows) == {"1", "0"}

    def judged(row, levels):
        return sum(int(row[f"judgment={j}"]) for j in levels)

    assert (judged(rows["1"], "23"), judged(rows["1"], "01")) == (1272, 3492)
    assert (judged(rows["0"], "23"), judged(rows["0"], "01")) == (394, 6228)
    assert rows["1"]["kappa_vs"] == "2" and rows["0"]["kappa_vs"] == "0"
