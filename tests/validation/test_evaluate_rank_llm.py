"""Third-party trec_eval numbers: rank_llm's own results and Pyserini's 2CR nDCG@10 (all with -c).

rank_llm/EXPECTED.tsv lists 90 (run, qrels, flags, measure, expected) rows over 30 DL19/DL20 runs
(space-separated, some with run tag ``rank``); every one must come out to the printed digits.
"""

from __future__ import annotations

import csv
from collections import defaultdict

from rubric.evaluate.leaderboards import evaluate_runs


def test_rank_llm_expected_values(shared):
    expected_file = shared("rank_llm", "EXPECTED.tsv")
    data = expected_file.parent.parent
    groups: dict[tuple[str, str], list[tuple[str, str, str]]] = defaultdict(list)
    with open(expected_file) as f:
        for row in csv.DictReader(f, delimiter="\t"):
            flags = row["trec_eval_flags"].split()
            assert flags[0] == "-c" and flags[1] == "-m"
            groups[(row["run_file"], row["qrels"])].append((flags[2], row["measure"], row["expected"]))
    checked, wrong = 0, []
    for (run_file, qrels), wanted in groups.items():
        measures = [m for m, _, _ in wanted]
        (result,) = evaluate_runs(data / qrels, [data / run_file], measures, complete=True)
        by_name = {m.name: result.summary(m) for m in result.values}
        for _, name, value in wanted:
            checked += 1
            if f"{by_name[name]:.4f}" != value:
                wrong.append((run_file, name, value, by_name[name]))
    assert checked == 90
    assert not wrong, wrong[:5]
