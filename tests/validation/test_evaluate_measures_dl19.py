"""Measures trec_eval lacks, on the 37 TREC DL 2019 passage runs against the NIST qrels.

* ``RR(rel=2)@10`` is MS MARCO's MRR@10, recomputed here from the files by the rule of the
  official msmarco_eval.py: per query of the qrels, 1 / rank of the first passage with a qrel
  >= 2 among the first 10, else 0; the mean over the qrels' queries. Passages are ranked as
  trec_eval and NIST rank them (score as a 32-bit float descending, ties by docid descending).
* ``Judged@10``, ``ERR@10`` and ``RR(rel=2)@10`` against ir_measures' own computation (its
  Python judgment rate, gdeval.pl, MS MARCO's script), given the run's scores as doubles. They
  agree on every (run, query) except where tied scores meet at the cutoff: ir_measures breaks
  those ties by docid ascending. Given the trec_eval ranking, ir_measures agrees there too.
"""

from __future__ import annotations

import gzip
import shutil
from functools import cache

import numpy as np
import pytest

from rubric.data.trec import expand_paths, read_qrels
from rubric.evaluate.leaderboards import evaluate_runs

QRELS = ("anserini-tools", "qrels.dl19-passage.txt")
RUNS = ("naghmefarzi-llmjudge", "dl19-runs")


def raw_runs(paths, queries):
    """{file: {qid: {docid: score as a double}}} for the judged queries, read without our reader."""
    out = {}
    for path in paths:
        run: dict[str, dict[str, float]] = {}
        with gzip.open(path, "rt") as f:
            for line in f:
                qid, _, docid, _, score, _ = line.split()[:6]
                if qid in queries:
                    run.setdefault(qid, {})[docid] = float(score)
        out[path.name.removeprefix("input.").removesuffix(".gz")] = run
    return out


def trec_eval_order(docs: dict[str, float]) -> list[str]:
    """Score as float32 descending, docid descending: as trec_eval 9.x and NIST."""
    f32 = dict(zip(docs, np.array(list(docs.values()), dtype=np.float32).tolist(), strict=True))
    return sorted(docs, key=lambda d: (f32[d], d), reverse=True)


def msmarco_mrr10(qrels, run, min_rel=2) -> float:
    total = 0.0
    for qid, judged in qrels.items():  # every query of the qrels counts, as in msmarco_eval.py
        for rank, docid in enumerate(trec_eval_order(run.get(qid, {}))[:10], start=1):
            if judged.get(docid, 0) >= min_rel:
                total += 1 / rank
                break
    return total / len(qrels)


@pytest.fixture
def dl19(shared):
    return _evaluated(shared(*QRELS), shared(*RUNS))


@cache  # both tests use the same evaluation
def _evaluated(qrels_path, runs_dir):
    qrels = read_qrels(qrels_path)
    paths = expand_paths([runs_dir])
    measures = ["RR(rel=2)@10", "Judged@10", "ERR@10"]
    ours = evaluate_runs(qrels, paths, measures, complete=True, name_from="file")
    return qrels, raw_runs(paths, qrels), {r.run: {m.name: col for m, col in r.values.items()} for r in ours}


def test_rr_rel2_at_10_is_ms_marco_mrr10(dl19):
    qrels, runs, ours = dl19
    assert len(runs) == 37
    for name, run in runs.items():
        column = ours[name]["RR(rel=2)@10"]
        assert len(column) == 43
        assert sum(column.values()) / len(column) == pytest.approx(msmarco_mrr10(qrels, run), abs=1e-12), name


def test_judged_err_and_rr_equal_ir_measures(dl19):
    ir_measures = pytest.importorskip("ir_measures")
    if shutil.which("perl") is None:
        pytest.skip("ir_measures computes ERR with gdeval.pl, which needs perl")
    from ir_measures import ERR, RR, Judged

    qrels, runs, ours = dl19
    measures = {"Judged@10": Judged @ 10, "ERR@10": ERR @ 10, "RR(rel=2)@10": RR(rel=2) @ 10}
    tolerance = {"ERR@10": 5e-6 + 1e-12}  # gdeval.pl prints 5 decimals

    def theirs(run):
        found = ir_measures.iter_calc(measures.values(), qrels, run)
        return {(str(m.measure), m.query_id): m.value for m in found}

    checked, differ = 0, []
    for name, run in runs.items():
        values = theirs(run)
        for label in measures:
            for qid, ours_value in ours[name][label].items():
                checked += 1
                if abs(ours_value - values[(label, qid)]) > tolerance.get(label, 1e-12):
                    differ.append((name, label, qid))
    assert checked == 37 * 43 * 3
    # Only tied scores at the cutoff differ (ir_measures ranks them by docid ascending) ...
    assert sorted(differ) == [
        ("UNH_exDL_bm25", "Judged@10", "87181"),  # ranks 10-13 tie at 69.98413
        ("bm25base_ax_p", "RR(rel=2)@10", "1114646"),  # ranks 1-2 tie; 5417954 (grade 3) is first
        ("bm25tuned_ax_p", "RR(rel=2)@10", "1114646"),
    ]
    # ... and given trec_eval's ranking, ir_measures agrees there as well.
    for name, label, qid in differ:
        order = trec_eval_order(runs[name][qid])
        ranked_run = {qid: {d: float(len(order) - i) for i, d in enumerate(order)}}
        assert theirs(ranked_run)[(label, qid)] == pytest.approx(ours[name][label][qid], abs=1e-12)
