"""Answer-key verification (EXAM++ §4.2.1) and the LLM verification helpers."""

from __future__ import annotations

import pytest

from rubric.grading.verification import verification_prompts, verified
from rubric.prompting.answer_key import (
    STOPWORDS,
    check_answer,
    matches,
    normalize,
    true_false_key,
)
from rubric.prompting.prompts import get_prompt


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Water Table will RISE.", "water tabl rise"),
        ("During very wet times, the water table will rise", "wet time water tabl rise"),
        ("photosynthesis!", "photosynthesi"),
        ("It is in the", ""),
        ("U.S. dollars", "us dollar"),
    ],
)
def test_normalize(text, normalised):
    assert normalize(text) == normalised


def test_stopword_list_is_nltk_english():
    assert len(STOPWORDS) == 179 and {"the", "wouldn't", "ourselves", "y"} <= STOPWORDS


@pytest.mark.parametrize(
    ("answer", "gold", "match"),
    [
        ("abcdef", "abcdeg", True),  # 1 edit, 6 chars: 1 < 1.2
        ("abcde", "abcdf", False),  # 1 edit, 5 chars: 1 < 1.0 is false (strictly below 20%)
        ("abcdefghij", "abcdefghxy", False),  # 2 edits, 10 chars: 2 < 2.0 is false
        ("abcdefghijk", "abcdefghixy", True),  # 2 edits, 11 chars: 2 < 2.2
        ("carbon dioxide", "Carbon-dioxide", True),  # hyphen removed, words glued: 1 edit < 2.6
        ("carbon dioxide", "carbon dioxides", True),
    ],
)
def test_edit_distance_threshold(answer, gold, match):
    assert matches(answer, gold) is match


def test_true_false_keys():
    assert true_false_key(["True"]) is True and true_false_key([" false "]) is False
    assert true_false_key(["true", "false"]) is None and true_false_key(["rise"]) is None
    assert check_answer("Correct.", ["true"]) and check_answer("incorrect", ["false"])
    assert not check_answer("true", ["false"]) and not check_answer("the rock", ["true"])


def test_unanswerable_and_ill_formed_answers_are_wrong():
    assert not check_answer("unanswerable", ["unanswerable"])
    assert not check_answer("(iii)", ["iii"])
    assert check_answer("rise", ["fall", "rise"])


def test_llm_verification_prompts_and_responses():
    prompt = get_prompt("QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2")
    prompts = verification_prompts(prompt, "Which gas?", "CO2", ["carbon dioxide", "CO2 gas"])
    assert len(prompts) == 2
    assert prompts[1] == (
        'For the question "Which gas?" the correct answer is "CO2 gas". '
        'Is "CO2" an equally correct response to this question? Answer yes or no.'
    )
    assert verified(["no", "Yes"]) and not verified(["no", "maybe"]) and not verified([])
