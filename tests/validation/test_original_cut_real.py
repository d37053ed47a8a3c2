"""The original's cut on real pairs: DL19's generated questions (and nuggets) with the longest
BM25 passage of their query (rank_llm's DL19 candidates), 24 pairs per prompt class, cut to 384
tokens. Token ids on a T5 backend (a T5-like tokenizer trained here on those passages, a random
tiny T5) and chat texts on the API backend (a GPT-2-like byte-level BPE trained here) equal the
original's rule (exam_pp's PromptTruncater, as tests/grading/test_original_cut.py writes it out)
on every pair."""

from __future__ import annotations

import gzip
import json

import pytest

from rubric.llm.fit import cut_as_original
from rubric.prompting.prompts import get_prompt

T5_CLASSES = [
    "QuestionPromptWithChoices",
    "QuestionAnswerablePromptWithChoices",
    "QuestionCompleteConciseUnanswerablePromptWithChoices",
    "QuestionSelfRatedUnanswerablePromptWithChoices",
    "QuestionCompleteConcisePromptWithAnswerKey",
    "NuggetSelfRatedPrompt",
    "NuggetExtractionPrompt",
]
CHAT_CLASSES = [*T5_CLASSES, "QuestionSelfRatedPrompt", "QuestionBriefWithAnswerKey"]
#: Three quarters of the original's 512, so that these MS MARCO passages (at most ~1,000
#: characters) are cut often: the rule is the same at every limit.
LIMIT = 384
#: A second, smaller limit that cuts the short templates' contexts too (QuestionPromptWithChoices
#: and the like are cut on none of these pairs at 384); a class whose text before the context
#: leaves no room there is left out there (the original raised).
SMALL = 128


@pytest.fixture(scope="module")
def pairs():
    from conftest import shared_data as shared

    hits = json.loads(
        shared("rank_llm", "retrieve_results", "BM25", "retrieve_results_dl19.json").read_text()
    )
    longest = {str(q["hits"][0]["qid"]): max((h["content"] for h in q["hits"][:20]), key=len) for q in hits}
    out = {}
    for kind in ("questions", "nuggets"):
        path = shared("rubric-workbench", "rubric-evaluation", "phase1-data", f"dl19-{kind}.jsonl.gz")
        banks = [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]
        items = [
            (b["items"][0], longest[b["query_id"]]) for b in banks if b["query_id"] in longest and b["items"]
        ]
        key = "question_text" if kind == "questions" else "nugget_text"
        out[kind] = [(i[key], passage) for i, passage in items[:24]]
        assert len(out[kind]) == 24
    return out, [p for q in hits for p in (h["content"] for h in q["hits"][:30])]


def parts_of(name: str, item: str, passage: str) -> tuple[str, str]:
    prompt = get_prompt(name)
    values = {"nugget": item} if prompt.kind == "nugget" else {"question": item, "gold_answers": ""}
    return prompt.render_parts(passage, **values)


def original(tok, question: str, context: str, limit: int) -> str | None:
    """exam_pp's truncate_context_question_prompt; None where it raises (no room for context)."""
    q = tok.encode(question, add_special_tokens=False)
    room = limit - len(q) - tok.num_special_tokens_to_add() - 5
    if room <= 0:
        return None
    c = tok.encode(context, add_special_tokens=False, max_length=room, truncation=True)
    return tok.decode(q + c)


def test_t5_ids_on_real_pairs(pairs, tmp_path):
    from helpers.tiny_models import build_t5_sentencepiece
    from rubric.llm.registry import make_backend

    (items, texts) = pairs
    folder = build_t5_sentencepiece(tmp_path / "t5", texts, vocab_size=2000)
    cut: dict[str, int] = {}
    for limit in (LIMIT, SMALL):
        t5 = make_backend("hf-seq2seq", str(folder), max_input_tokens=limit, device="cpu", dtype="float32")
        for name in T5_CLASSES:
            kind = "nuggets" if get_prompt(name).kind == "nugget" else "questions"
            parts = [parts_of(name, item, passage) for item, passage in items[kind]]
            for (question, part), request in zip(parts, cut_as_original(t5, parts, None), strict=True):
                expected = original(t5.tokenizer, question, part, limit)
                if expected is None:
                    continue
                ids = t5.tokenizer(expected, truncation=True, max_length=limit)["input_ids"]
                assert t5._rows([request.text])[0] == ids
                shorter = len(t5.encode(question + part)) > len(t5.encode(request.text))
                cut[name] = cut.get(name, 0) + shorter
                if part.startswith("context: "):
                    assert " context: " in request.text  # a word of its own, not "...?context:"
    assert cut["QuestionPromptWithChoices"] >= 12 and cut["QuestionAnswerablePromptWithChoices"] >= 12, cut


def test_chat_texts_on_real_pairs(pairs, tmp_path):
    from helpers.tiny_models import sentencepiece_tokenizer
    from rubric.llm.openai_chat import OpenAIChat

    (items, texts) = pairs
    tok = sentencepiece_tokenizer(texts, 3000, byte_level=True)
    tok.save_pretrained(tmp_path / "bpe")
    cut: dict[str, int] = {}
    for most in (LIMIT, SMALL):
        api = OpenAIChat("m", max_input_tokens=most, api_tokenizer=str(tmp_path / "bpe"))
        for name in CHAT_CLASSES:
            prompt = get_prompt(name)
            kind = "nuggets" if prompt.kind == "nugget" else "questions"
            parts = [parts_of(name, item, passage) for item, passage in items[kind]]
            limit = most - (len(tok.encode(prompt.system, add_special_tokens=True)) if prompt.system else 0)
            for (question, part), request in zip(
                parts, cut_as_original(api, parts, prompt.system), strict=True
            ):
                expected = original(tok, question, part, limit)
                if expected is None:
                    continue
                assert request.user == expected
                cut[name] = cut.get(name, 0) + (request.user != question + part)
    assert cut["QuestionPromptWithChoices"] >= 12 and cut["QuestionSelfRatedPrompt"] >= 24, cut
