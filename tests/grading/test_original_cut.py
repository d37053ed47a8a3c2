"""The original tool's prompt classes are cut by its own rule (exam_pp's PromptTruncater): the
text before the context part and the context part are tokenised apart, the context part keeps
``limit - question tokens - special tokens - 5`` tokens, and the prompt is the decoded
concatenation. Checked token id for token id on a real T5 backend with a T5-like tokenizer built
here, and by text on the chat-API backend with a GPT-2-like byte-level tokenizer, against the
rule written out below as the original computes it."""

from __future__ import annotations

import pytest

from helpers.tiny_models import WORDS, build_t5_sentencepiece, sentencepiece_tokenizer
from rubric.llm.fit import cut_as_original
from rubric.prompting.prompts import get_prompt

SENTENCES = [" ".join(WORDS[i : i + 9]) + ("?" if i % 3 else ".") for i in range(0, len(WORDS) - 9)] + [
    "question: How does this text answer this question: context: Context: Question: Key fact:"
]
QUESTION = "how do bees make honey from nectar?"
LONG = " ".join(SENTENCES * 4)


def original(tok, question: str, context: str, limit: int) -> str:
    """exam_pp's truncate_context_question_prompt, as it computes the prompt text."""
    q = tok.encode(question, add_special_tokens=False)
    room = limit - len(q) - tok.num_special_tokens_to_add() - 5
    c = tok.encode(context, add_special_tokens=False, max_length=room, truncation=True)
    return tok.decode(q + c)


@pytest.fixture(scope="module")
def t5_folder(tmp_path_factory):
    return build_t5_sentencepiece(tmp_path_factory.mktemp("t5sp"), SENTENCES, vocab_size=120)


def t5_backend(folder, limit: int):
    from rubric.llm.registry import make_backend

    return make_backend("hf-seq2seq", str(folder), max_input_tokens=limit, device="cpu", dtype="float32")


@pytest.fixture(scope="module")
def t5(t5_folder):
    return t5_backend(t5_folder, 64)


@pytest.mark.parametrize("name", ["QuestionPromptWithChoices", "QuestionAnswerablePromptWithChoices"])
@pytest.mark.parametrize("context", ["bees collect nectar.", LONG])
def test_t5_input_ids_are_the_originals(t5, name, context):
    prompt = get_prompt(name)
    question, part = prompt.render_parts(context, question=QUESTION)
    assert part.startswith("context: ")  # the template glues them ("...?context:"); T5 does not
    (request,) = cut_as_original(t5, [(question, part)], None)
    expected = original(t5.tokenizer, question, part, 64)
    assert request.text == expected
    assert "? context:" in request.text  # "context:" a word of its own
    ids = t5._rows([request.text])[0]
    assert ids == t5.tokenizer(expected)["input_ids"]
    glued = t5.tokenizer(question + part)["input_ids"]
    assert ids[: len(glued)] != glued[: len(ids)]  # the template's own text tokenises otherwise
    if context == LONG:  # 64 - question - </s> - 5 tokens of context
        room = 64 - len(t5.encode(question)) - 1 - 5
        assert t5.encode(request.text) == t5.encode(question) + t5.encode(part)[:room]


def test_t5_other_classes_cut_their_context_part(t5_folder):
    t5 = t5_backend(t5_folder, 400)
    for name in ("QuestionCompleteConciseUnanswerablePromptWithChoices", "NuggetSelfRatedPrompt"):
        prompt = get_prompt(name)
        values = {"nugget": "bees make honey"} if prompt.kind == "nugget" else {"question": QUESTION}
        question, part = prompt.render_parts(LONG, **values)
        assert part.startswith("Context: ") and prompt.render(context=LONG, **values) == question + part
        (request,) = cut_as_original(t5, [(question, part)], None)
        assert request.text == original(t5.tokenizer, question, part, 400)
        assert len(t5.encode(request.text)) < len(t5.encode(question + part))  # cut


def test_api_cut_is_the_chat_pipelines(tmp_path):
    """ChatCompletionsPipeline: GPT-2 tokens, no special tokens, the system message's tokens off
    the limit; decoding a byte-level BPE gives the text back, so a short prompt is sent as it is."""
    from rubric.llm.openai_chat import OpenAIChat

    tok = sentencepiece_tokenizer(SENTENCES, 300, byte_level=True)
    tok.save_pretrained(tmp_path / "bpe")
    api = OpenAIChat("m", max_input_tokens=1000, api_tokenizer=str(tmp_path / "bpe"))
    for name in ("QuestionPromptWithChoices", "QuestionSelfRatedPrompt"):
        prompt = get_prompt(name)
        question, part = prompt.render_parts(LONG, question=QUESTION)
        short = prompt.render_parts("bees.", question=QUESTION)
        cut, kept = cut_as_original(api, [(question, part), short], prompt.system)
        limit = 1000 - (len(tok.encode(prompt.system, add_special_tokens=True)) if prompt.system else 0)
        assert cut.user == original(tok, question, part, limit) and cut.system == prompt.system
        assert cut.user.startswith(question) and len(cut.user) < len(question + part)
        assert kept.user == "".join(short)  # "?context:" glued, as GPT-2 decoding gives it
