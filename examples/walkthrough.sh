#!/usr/bin/env bash
# The whole method on the bundled example (examples/tiny), offline, in a few minutes on a laptop:
#   convert -> bank -> grade -> verify -> evaluate
# Usage: examples/walkthrough.sh [OUT_DIR]        (default examples/out; every file goes there)
# Environment:
#   RUBRIC          the command to run (default `rubric`; tests use "python -m rubric")
#   OPENAI_API_KEY  when set, also generate a question bank with an API model (OPENAI_MODEL,
#                   default gpt-4o-mini); without it the shipped hand-written banks are used
#   LLM             the local LLM shown on one query (default smollm2-135m: a packaged toy-quality
#                   model that often gives every passage the same rating; use google/flan-t5-large
#                   with --backend hf-seq2seq on a GPU for real evaluations, see examples/dl20/)
#   QUERIES         how many of the 5 example queries to evaluate (default 5; the CI test uses 1)
# The headline result (leaderboard and correlation with the human one) comes from the embedding
# baseline (the packaged all-MiniLM-L6-v2), which gives usable grades offline in seconds; the LLM
# path (rate and answer every (passage, question) pair) is shown on the first query only: an LLM
# prompt costs about a CPU-second.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DATA="$HERE/tiny"
OUT="${1:-$HERE/out}"
read -r -a RUBRIC <<<"${RUBRIC:-rubric}"
LLM="${LLM:-smollm2-135m}"
QUERIES="${QUERIES:-5}"
EMB="minilm-l6"                                   # packaged all-MiniLM-L6-v2
EMB_LLM="sentence-transformers/all-MiniLM-L6-v2"  # the name its grades record as `llm`
EMB_TAG="${EMB_LLM##*/}"
LLM_TAG="${LLM##*/}"
RATE_Q="QuestionSelfRatedUnanswerablePromptWithChoices"
ANSWER_Q="QuestionCompleteConciseUnanswerablePromptWithChoices"
RATE_N="NuggetSelfRatedPrompt"
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"

mkdir -p "$OUT"
rubric() { command "${RUBRIC[@]}" "$@"; }  # `command`: not this function
step() { printf '\n== %s\n' "$*" >&2; }
wrote() { printf '   wrote %s\n' "$@" >&2; }  # for commands that do not say so themselves

step "1. convert: pool the top 10 of the three runs with texts and human judgments ($QUERIES queries)"
rubric convert queries "$DATA/queries.json" --format tsv -o "$OUT/queries.all.tsv"
head -n "$QUERIES" "$OUT/queries.all.tsv" >"$OUT/queries.tsv"
FIRST="$(head -n 1 "$OUT/queries.tsv" | cut -f 1)"
awk 'NR == FNR { keep[$1] = 1; next } ($1 in keep)' "$OUT/queries.tsv" "$DATA/qrels.txt" >"$OUT/qrels.human.txt"
rubric convert runs --topics "$OUT/queries.tsv" --collection "$DATA/collection.tsv" \
    --qrels "$OUT/qrels.human.txt" --top-k 10 "$DATA/runs" -o "$OUT/passages.jsonl.gz"

step "2. bank: the shipped hand-written question and nugget banks"
QUESTIONS="$DATA/questions.jsonl"
NUGGETS="$DATA/nuggets.jsonl"
rubric bank show "$QUESTIONS" --query q1
if [[ -n "${OPENAI_API_KEY:-}" ]]; then
    step "2b. bank: generate DL-style questions with ${OPENAI_MODEL:-gpt-4o-mini} (OPENAI_API_KEY is set)"
    rubric bank generate --topics "$OUT/queries.tsv" --kind questions --style dl --items-per-query 10 \
        --model "${OPENAI_MODEL:-gpt-4o-mini}" -o "$OUT/questions-generated.jsonl.gz"
    wrote "$OUT/questions-generated.jsonl.gz"
    rubric bank diff "$QUESTIONS" "$OUT/questions-generated.jsonl.gz" || true
fi

step "3. grade: the embedding baseline grades every (passage, question) and (passage, nugget) pair"
rubric grade "$OUT/passages.jsonl.gz" --bank "$QUESTIONS" --prompt "$RATE_Q" \
    --backend embedding --model "$EMB" -o "$OUT/graded.jsonl.gz"
rubric grade "$OUT/graded.jsonl.gz" --bank "$NUGGETS" --prompt "$RATE_N" \
    --backend embedding --model "$EMB" -o "$OUT/graded.jsonl.gz"
rubric convert check "$OUT/graded.jsonl.gz"

step "3b. grade: the LLM path on one query ($FIRST): $LLM rates and answers each (passage, question) pair"
rubric grade "$OUT/passages.jsonl.gz" --query "$FIRST" --bank "$QUESTIONS" --prompt "$RATE_Q" --prompt "$ANSWER_Q" \
    --backend hf-causal --model "$LLM" --max-new-tokens 16 -o "$OUT/graded-llm.jsonl.gz"

step "4. verify: agreement with the human judgments, uncovered passages, spurious items, HTML page"
rubric verify agreement "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --llm "$EMB_LLM" \
    --min-relevant-judgment 2 -o "$OUT/agreement-$EMB_TAG.tsv"
rubric verify agreement "$OUT/graded-llm.jsonl.gz" --prompt-class "$RATE_Q" --llm "$LLM" \
    --min-relevant-judgment 2 -o "$OUT/agreement-$LLM_TAG.tsv" 2>&1 | tee "$OUT/agreement-$LLM_TAG.txt" >&2
wrote "$OUT/agreement-$EMB_TAG.tsv" "$OUT/agreement-$LLM_TAG.tsv"
# The embedding grades vary with the passage, so its uncovered/spurious lists and grid say something;
# the LLM's page shows its extracted answers on hover.
rubric verify uncovered "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --llm "$EMB_LLM" \
    --min-judgment 2 --min-grade 4 -o "$OUT/uncovered.tsv"
rubric verify spurious "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --llm "$EMB_LLM" \
    --max-judgment 0 --min-grade 4 -o "$OUT/spurious.tsv"
rubric verify html "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --llm "$EMB_LLM" --bank "$QUESTIONS" \
    -o "$OUT/review.html"
rubric verify html "$OUT/graded-llm.jsonl.gz" --prompt-class "$RATE_Q" --llm "$LLM" --bank "$QUESTIONS" \
    -o "$OUT/review-$LLM_TAG.html"
wrote "$OUT/uncovered.tsv" "$OUT/spurious.tsv"
printf '   open %s in a browser\n' "$OUT/review.html" >&2

step "5. evaluate: Rubric-Qrels, leaderboards with trec_eval measures, Rubric-Cover, correlation"
MEASURES=(-m ndcg_cut.10 -m P.5 -m map)
rubric evaluate leaderboard --qrels "$OUT/qrels.human.txt" --run "$DATA/runs" "${MEASURES[@]}" -l 2 \
    -o "$OUT/leaderboard-human.tsv"
rubric evaluate qrels "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --llm "$EMB_LLM" --label max \
    -o "$OUT/rubric-$EMB_TAG.qrels"
rubric evaluate leaderboard --qrels "$OUT/rubric-$EMB_TAG.qrels" --run "$DATA/runs" "${MEASURES[@]}" -l 4 \
    -o "$OUT/leaderboard-$EMB_TAG.tsv"
rubric evaluate cover "$OUT/graded.jsonl.gz" --prompt-class "$RATE_Q" --llm "$EMB_LLM" -k 10 --min-grade 4 \
    -o "$OUT/cover-$EMB_TAG.tsv"
rubric evaluate correlate --leaderboard "$OUT/leaderboard-$EMB_TAG.tsv" \
    --official "$OUT/leaderboard-human.tsv" --measure ndcg_cut.10 -o "$OUT/correlation-$EMB_TAG.tsv"
rubric evaluate qrels "$OUT/graded-llm.jsonl.gz" --prompt-class "$RATE_Q" --llm "$LLM" --label max \
    -o "$OUT/rubric-$LLM_TAG.qrels"

step "Done. Every file is under $OUT; the review page is $OUT/review.html"
printf '\nResult: the leaderboard from Rubric-Qrels of the embedding baseline (%s grades,\n' "$EMB_LLM"
printf 'grade >= 4 counts as relevant), %s:\n' "$([[ $QUERIES == 1 ]] && echo "1 query" || echo "$QUERIES queries")"
cat "$OUT/leaderboard-$EMB_TAG.tsv"
printf '\nIts rank correlation with the human-qrels leaderboard (ndcg_cut.10):\n'
cat "$OUT/correlation-$EMB_TAG.tsv"
printf '\nHuman-qrels leaderboard for comparison:\n'
cat "$OUT/leaderboard-human.tsv"
printf '\nThe LLM path on one query (%s) with %s, a toy-quality packaged model (no leaderboard\n' "$FIRST" "$LLM"
printf 'from one query): its grades in %s, its answers on %s.\n' "$OUT/graded-llm.jsonl.gz" "$OUT/review-$LLM_TAG.html"
printf 'Its agreement with the human judgments: %s\n' "$(grep -m1 'passages;' "$OUT/agreement-$LLM_TAG.txt" || true)"
printf '(For real evaluations use google/flan-t5-large with --backend hf-seq2seq on a GPU, see examples/dl20/.)\n'
