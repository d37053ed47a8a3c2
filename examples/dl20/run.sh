#!/usr/bin/env bash
# The paper-scale recipe: RUBRIC on TREC DL 2020 passages with FLAN-T5-large on one GPU.
# Reproduces the RUBRIC paper's (ICTIR'24) DL 2020 leaderboard correlations; see README.md here
# for the data to obtain, the expected run time and the numbers.
#
# Usage: examples/dl20/run.sh [DATA_DIR] [OUT_DIR]
#   DATA_DIR (default examples/dl20/data) must hold:
#     msmarco-test2020-queries.tsv   TREC DL 2020 topics (200; 54 judged)
#     2020qrels-pass.txt             NIST passage qrels (54 topics, 11,386 judgments)
#     collection.tsv                 MS MARCO v1 passage collection (8.8M passages, 2.9 GB)
#     runs/input.*.gz                the 59 official participant passage runs (NIST, participants only)
#     dl20-questions.jsonl.gz        question bank (the original tool's, or generated: see README)
#     dl20-nuggets.jsonl.gz          nugget bank (idem)
#   OUT_DIR (default examples/dl20/out): every output file.
# Environment: RUBRIC (default `rubric`), MODEL (default google/flan-t5-large), DEVICE (default cuda).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="${1:-$HERE/data}"
OUT="${2:-$HERE/out}"
read -r -a RUBRIC <<<"${RUBRIC:-rubric}"
MODEL="${MODEL:-google/flan-t5-large}"
DEVICE="${DEVICE:-cuda}"
RATE_Q="QuestionSelfRatedUnanswerablePromptWithChoices"
RATE_N="NuggetSelfRatedPrompt"
rubric() { command "${RUBRIC[@]}" "$@"; }
step() { printf '\n== %s\n' "$*" >&2; }

for f in msmarco-test2020-queries.tsv 2020qrels-pass.txt collection.tsv dl20-questions.jsonl.gz dl20-nuggets.jsonl.gz; do
    [[ -e "$DATA/$f" ]] || { echo "missing $DATA/$f (see examples/dl20/README.md)" >&2; exit 2; }
done
compgen -G "$DATA/runs/input.*" >/dev/null || { echo "missing $DATA/runs/input.*.gz (NIST runs)" >&2; exit 2; }
mkdir -p "$OUT"

step "1. pool the judged passages and the top 20 of every run, for the 54 judged topics (~2 min)"
awk 'NR==FNR { judged[$1] = 1; next } ($1 in judged)' "$DATA/2020qrels-pass.txt" \
    "$DATA/msmarco-test2020-queries.tsv" >"$OUT/topics.judged.tsv"
rubric convert runs --topics "$OUT/topics.judged.tsv" --collection "$DATA/collection.tsv" \
    --qrels "$DATA/2020qrels-pass.txt" --top-k 20 "$DATA/runs" -o "$OUT/dl20-passages.jsonl.gz"

step "2. grade every (passage, item) pair with $MODEL on $DEVICE (the long step)"
rubric grade "$OUT/dl20-passages.jsonl.gz" --bank "$DATA/dl20-questions.jsonl.gz" --prompt "$RATE_Q" \
    --backend hf-seq2seq --model "$MODEL" --device "$DEVICE" -o "$OUT/dl20-graded.jsonl.gz"
rubric grade "$OUT/dl20-graded.jsonl.gz" --bank "$DATA/dl20-nuggets.jsonl.gz" --prompt "$RATE_N" \
    --backend hf-seq2seq --model "$MODEL" --device "$DEVICE" -o "$OUT/dl20-graded.jsonl.gz"
rubric grade direct "$OUT/dl20-graded.jsonl.gz" --topics "$OUT/topics.judged.tsv" --prompt Sun \
    --backend hf-seq2seq --model "$MODEL" --device "$DEVICE" -o "$OUT/dl20-graded.jsonl.gz"

step "3. agreement with NIST judgments (paper Table 5: grades 4-5 vs judgments 2-3)"
rubric verify agreement "$OUT/dl20-graded.jsonl.gz" --prompt-class "$RATE_Q" --min-relevant-judgment 2 \
    -o "$OUT/agreement-questions.tsv"

step "4. Rubric-Qrels, leaderboards and rank correlation with the official leaderboard"
# The official DL20 order is passages-eval NDCG@10 (trec_eval -l 2) over the human qrels.
rubric evaluate leaderboard --qrels "$DATA/2020qrels-pass.txt" --run "$DATA/runs" -m ndcg_cut.10 -l 2 \
    -o "$OUT/leaderboard-official.tsv"
MEASURES=(-m ndcg_cut.10 -m map -m recip_rank)
for spec in "$RATE_Q:1 4 5" "$RATE_N:1 4 5" "Sun:1"; do
    prompt="${spec%%:*}"
    rubric evaluate qrels "$OUT/dl20-graded.jsonl.gz" --prompt-class "$prompt" -o "$OUT/$prompt.qrels"
    for level in ${spec#*:}; do
        rubric evaluate leaderboard --qrels "$OUT/$prompt.qrels" --run "$DATA/runs" "${MEASURES[@]}" \
            -l "$level" -o "$OUT/leaderboard-$prompt-l$level.tsv"
        for measure in ndcg_cut.10 map recip_rank; do
            printf '%s\t%s\t%s\t' "$prompt" "$level" "$measure"
            rubric evaluate correlate --leaderboard "$OUT/leaderboard-$prompt-l$level.tsv" \
                --official "$OUT/leaderboard-official.tsv" --official-measure ndcg_cut.10 --measure "$measure" | tail -n 1
        done
    done
done | tee "$OUT/correlations.tsv"
echo "Compare $OUT/correlations.tsv with the numbers in examples/dl20/README.md" >&2
