"""The rules of grading with an answer-verification prompt (rubric.grading.verification)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric.data.models import NuggetItem, QuestionItem
from rubric.errors import UserError
from rubric.grading.engine import check_prompts
from rubric.grading.verification import Verdict, answer_prompt, verdict, verification_texts
from rubric.prompting.prompts import get_prompt, load_prompt_file

VERIFY = "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2"
ANSWER_KEY = "QuestionCompleteConcisePromptWithAnswerKey2"


def item(*gold: str) -> QuestionItem:
    return QuestionItem(
        query_id="q", question_id="q/1", question_text="Where is it?", gold_answers=list(gold)
    )


def test_one_prompt_per_gold_answer_with_the_answer_stripped():
    prompt = get_prompt(VERIFY)
    texts = verification_texts(prompt, item("in the hive", "hive"), "  the hive \n")
    assert texts == [
        'For the question "Where is it?" the correct answer is "in the hive". '
        'Is "the hive" an equally correct response to this question? Answer yes or no.',
        'For the question "Where is it?" the correct answer is "hive". '
        'Is "the hive" an equally correct response to this question? Answer yes or no.',
    ]


@pytest.mark.parametrize("answer", ["unanswerable", "", "  ", "No answer.", "(iii)", "b)"])
def test_no_answer_is_wrong_without_asking(answer):
    assert verification_texts(get_prompt(VERIFY), item("hive"), answer) == []
    assert verdict(item("hive"), answer, []) == Verdict(answer, False)


def test_verdicts():
    it = item("hive", "the hive")
    assert verdict(it, "hive", ["no", "Yes."]) == Verdict("hive", True)  # any yes
    assert verdict(it, "hive", ["no", "maybe"]) == Verdict("hive", False)  # anything else is no
    no_gold = item()
    assert verification_texts(get_prompt(VERIFY), no_gold, "hive") == []
    assert verdict(no_gold, "hive", []) == Verdict("hive", None)  # not verifiable: in neither list


def test_the_shipped_verify_prompt_extracts_with_the_answer_key_prompt():
    assert answer_prompt(get_prompt(VERIFY)).name == ANSWER_KEY
    prompts = [get_prompt(VERIFY), get_prompt(ANSWER_KEY)]
    extract = check_prompts(prompts, direct=False, items={"q": [item("hive")]})
    assert list(extract) == [VERIFY] and extract[VERIFY].name == ANSWER_KEY


def _variant(tmp_path: Path, old: str, new: str) -> Path:
    path = tmp_path / "mine.toml"
    shipped = get_prompt(VERIFY).path
    path.write_text(shipped.read_text().replace(old, new))
    return path


def test_bad_answer_prompts_are_user_errors(tmp_path):
    line = f'answer_prompt = "{ANSWER_KEY}"'
    cases = [
        ("", "needs answer_prompt = NAME"),
        ('answer_prompt = "NoSuchPrompt"', "answer_prompt: unknown prompt 'NoSuchPrompt'"),
        ('answer_prompt = "NuggetExtractionPrompt"', "a nugget prompt"),
        ('answer_prompt = "QuestionSelfRatedUnanswerablePromptWithChoices"', "extracts a free-text answer"),
    ]
    for new, message in cases:
        path = _variant(tmp_path, line, new)
        with pytest.raises(UserError, match="mine.toml: .*" + message.replace("(", r"\(")):
            answer_prompt(load_prompt_file(path))


def test_verify_prompts_need_question_items_and_a_generative_backend():
    nugget = NuggetItem(query_id="q", nugget_id="q/n", nugget_text="bees make honey")
    with pytest.raises(UserError, match="grades question items, but the bank holds nugget items"):
        check_prompts([get_prompt(VERIFY)], direct=False, items={"q": [nugget]})
    with pytest.raises(UserError, match="hf-qa backend only extracts answers"):
        check_prompts([get_prompt(VERIFY)], direct=False, items={"q": [item("hive")]}, pair_backend="hf-qa")
    with pytest.raises(UserError, match="`rubric grade direct` direct prompts"):
        check_prompts([get_prompt(VERIFY)], direct=True, items={})
