"""Validate the embedding baseline (``--backend embedding``) on the real TREC DL 2019 judged pool.

Why a script and not a test: it grades 9,260 judged passages against the original tool's
question and nugget banks (~90,000 pairs; a few minutes on one CPU thread, seconds on a GPU) and
needs ``../shared/data``. It uses only the library (the EmbeddingGrader as a PairGrader,
pytrec_eval, scipy, scikit-learn), so it runs independently of the CLI phases.

It reports, next to the same numbers computed from the original tool's FLAN-T5-large qrels
(``rubric-workbench/rubric-evaluation/phase3-qrels/dl19``):

1. agreement with the NIST judgments on the judged pool: Cohen's kappa of the binarised labels
   (Rubric-Qrels grade >= T vs judgment >= J), for T = 1..5 and J = 1, 2;
2. leaderboard rank correlation of the 37 official runs (36 of them ranked in
   ``official_dl19_leaderboard.json``) against the official ranking: Spearman and Kendall tau-b,
   measures ``ndcg_cut.10 ndcg_cut.20 map Rprec recip_rank`` with ``-l`` = min rating 1, 3, 4, 5,
   scores rounded to 4 decimals before ranking (the original tool's convention), ties averaged.
   As a check of the procedure it recomputes the published FLAN-T5 correlations and counts
   how many of them it reproduces exactly.

Labels: Rubric-Qrels = max over the query's items of the 0-5 grade (question and nugget
banks); "direct" grades the query text itself against the passage.

Usage (from the repository root):
    OMP_NUM_THREADS=1 python benchmarks/validate_embedding_dl19.py [--data ../shared/data]
        [--device auto] [--batch-size 128] [--out results.tsv]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from rubric.data.collection import load_texts  # noqa: E402
from rubric.data.jsonl import read_bank  # noqa: E402
from rubric.data.queries import read_queries  # noqa: E402
from rubric.data.trec import Qrels, expand_paths, read_qrels, read_run  # noqa: E402
from rubric.llm.embedding import EmbeddingGrader  # noqa: E402

MEASURES = ("ndcg_cut.10", "ndcg_cut.20", "map", "Rprec", "recip_rank")
MIN_RATINGS = (1, 3, 4, 5)
PUBLISHED = "rubric-workbench/rubric-evaluation/results-leaderboard-correlation/"
PUBLISHED += "dl19-autograde-qrels-leaderboard-analysis-graded.correlation.tsv"
FLAN_QRELS = "rubric-workbench/rubric-evaluation/phase3-qrels/dl19"
FLAN_METHODS = {  # our label name -> the original tool's qrels file (FLAN-T5-large)
    "questions": "QuestionSelfRatedUnanswerablePromptWithChoices",
    "nuggets": "NuggetSelfRatedPrompt",
    "direct": "Sun",
}


def embedding_qrels(grader: EmbeddingGrader, data: Path, nist: Qrels) -> dict[str, Qrels]:
    """Grade every judged passage: max grade over the bank's items, and query-vs-passage."""
    queries = read_queries(data / "anserini-tools/topics.dl19-passage.txt")
    wanted = {d for docs in nist.values() for d in docs}
    texts = load_texts([data / "naghmefarzi-llmjudge/dl2019_document.jsonl"], wanted)
    banks = {}
    for kind in ("questions", "nuggets"):
        path = data / f"rubric-workbench/rubric-evaluation/phase1-data/dl19-{kind}.jsonl.gz"
        banks[kind] = {}
        for bank in read_bank(path):
            banks[kind].setdefault(bank.query_id, []).extend(i.item_text for i in bank.items)
    banks["direct"] = {qid: [text] for qid, text in queries.items()}
    grader.embed(sorted(texts.values()))  # every passage once, length-sorted batches
    result: dict[str, Qrels] = {}
    for kind, items in banks.items():
        start, n_pairs = time.perf_counter(), 0
        labels: Qrels = {}
        for qid, docs in nist.items():
            docids = [d for d in docs if d in texts]
            pairs = [(item, texts[d]) for d in docids for item in items.get(qid, [])]
            n_pairs += len(pairs)
            grades = [int(r.text) for r in grader.grade_pairs(pairs)]
            per = len(items.get(qid, []))
            labels[qid] = {d: max(grades[i * per : (i + 1) * per], default=0) for i, d in enumerate(docids)}
        took = time.perf_counter() - start
        print(f"graded {kind}: {n_pairs} pairs in {took:.1f} s (passages embedded before)", file=sys.stderr)
        result[kind] = labels
    return result


def kappas(nist: Qrels, labels: Qrels) -> dict[tuple[int, int], float]:
    """Cohen's kappa of (judgment >= J) vs (grade >= T) over the NIST-judged pairs."""
    from sklearn.metrics import cohen_kappa_score

    pairs = [(j, labels.get(q, {}).get(d, 0)) for q, docs in nist.items() for d, j in docs.items()]
    out = {}
    for min_judgment in (1, 2):
        truth = [j >= min_judgment for j, _ in pairs]
        for min_grade in range(1, 6):
            predicted = [g >= min_grade for _, g in pairs]
            out[(min_judgment, min_grade)] = float(cohen_kappa_score(truth, predicted))
    return out


def correlations(labels: Qrels, runs: dict, official: dict[str, int]) -> dict[tuple[int, str], tuple]:
    """(min rating, measure) -> (spearman, kendall, n runs), ranks from 4-decimal scores."""
    import warnings

    import pytrec_eval
    from scipy.stats import ConstantInputWarning, kendalltau, rankdata, spearmanr

    # a binary grader has no grade >= 3: constant scores, correlation nan (as published)
    warnings.simplefilter("ignore", ConstantInputWarning)

    names = [n for n in sorted(runs) if n in official]
    out = {}
    for level in MIN_RATINGS:
        evaluator = pytrec_eval.RelevanceEvaluator(labels, set(MEASURES), relevance_level=level)
        per_run = {n: evaluator.evaluate(runs[n]) for n in names}
        for measure in MEASURES:
            key = measure.replace(".", "_")
            scores = [round(sum(v[key] for v in per_run[n].values()) / len(per_run[n]), 4) for n in names]
            ours = rankdata([-s for s in scores], method="average")
            theirs = [official[n] for n in names]
            out[(level, measure)] = (spearmanr(ours, theirs)[0], kendalltau(ours, theirs)[0], len(names))
    return out


def published(data: Path) -> dict[tuple[str, int, str], tuple[str, str]]:
    """(prompt class, min rating, measure) -> (spearman, kendall) as printed (3 decimals or nan)."""
    rows = {}
    for line in (data / PUBLISHED).read_text().splitlines():
        cols = line.split("\t")
        if len(cols) == 5 and cols[0].endswith(".qrel"):
            method = Path(cols[0]).stem
            rows[(method, int(cols[1]), cols[2])] = (cols[3], cols[4])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--device", default="auto", help="cpu, cuda or auto (default auto)")
    parser.add_argument("--batch-size", type=int, default=128, help="texts per embedding batch (default 128)")
    parser.add_argument("--out", type=Path, help="also write the correlation table as TSV here")
    args = parser.parse_args()
    data = args.data
    nist = read_qrels(data / "anserini-tools/qrels.dl19-passage.txt")
    runs = {}
    for path in expand_paths([data / "naghmefarzi-llmjudge/dl19-runs"]):
        run = read_run(path)
        runs[run.name] = run.scores
    official = json.loads((data / "trec-browser/official_dl19_leaderboard.json").read_text())
    print(f"{len(runs)} runs, {len(official)} ranked officially; {sum(map(len, nist.values()))} judged pairs")

    start = time.perf_counter()
    grader = EmbeddingGrader(device=args.device, batch_size=args.batch_size)
    ours = embedding_qrels(grader, data, nist)
    print(f"embedding grading took {time.perf_counter() - start:.1f} s on {grader._device}")
    flan = {kind: read_qrels(data / FLAN_QRELS / f"{m}.qrel") for kind, m in FLAN_METHODS.items()}

    print("\n# Cohen's kappa vs NIST judgments (judged pool): grade >= T vs judgment >= J")
    print("labels\tgrader\tJ\t" + "\t".join(f"T={t}" for t in range(1, 6)))
    for kind in ("questions", "nuggets", "direct"):
        for who, labels in (("embedding", ours[kind]), ("flan-t5-large", flan[kind])):
            k = kappas(nist, labels)
            for j in (1, 2):
                print(f"{kind}\t{who}\t{j}\t" + "\t".join(f"{k[(j, t)]:.3f}" for t in range(1, 6)))

    pub = published(data)
    reproduced = total = 0
    rows = ["labels\tgrader\tmin_rating\tmeasure\tspearman\tkendall\tn_runs"]
    for kind in ("questions", "nuggets", "direct"):
        for who, labels in (("embedding", ours[kind]), ("flan-t5-large", flan[kind])):
            for (level, measure), (rho, tau, n) in correlations(labels, runs, official).items():
                rows.append(f"{kind}\t{who}\t{level}\t{measure}\t{rho:.3f}\t{tau:.3f}\t{n}")
                if who == "flan-t5-large" and (FLAN_METHODS[kind], level, measure) in pub:
                    total += 1
                    reproduced += pub[(FLAN_METHODS[kind], level, measure)] == (f"{rho:.3f}", f"{tau:.3f}")
    print("\n# Leaderboard rank correlation with the official DL19 ranking (scores rounded to 4 decimals)")
    print("\n".join(rows))
    print(f"\npublished FLAN-T5 correlations reproduced by this procedure: {reproduced}/{total}")
    if args.out:
        args.out.write_text("\n".join(rows) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
