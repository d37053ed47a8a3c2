"""The original tool's remaining prompt classes as prompt files, and their answer checks.

Expected texts are built here as exam_pp/test_bank_prompts.py built them (its class attributes
and f-strings: question part, then context part), independently of the TOML files; the parse
rows use the answers the original's own comments and code name.
"""

from __future__ import annotations

import pytest

from rubric.prompting.parse import get_parser
from rubric.prompting.prompts import get_prompt, shipped_prompts

Q, C = "How do plants make sugar?", "Leaves take in CO2."

# QuestionBriefWithAnswerKey.system_message (the second definition, which Python keeps)
BRIEF_SYSTEM = (
    "If the question can be answered based on the available context, then please summarize the "
    "answer from the context. Otherwise respond with 'unanswerable'.\n\n"
    "        You must only respond with the short answer or 'unanswerable', no further explanation.\n"
    "        "
)
# QuestionSelfRatedPrompt.system_message
SELF_SYSTEM = """Can the question be answered based on the available context? choose one grade:
        - 5: The answer is highly relevant, complete, and accurate.
        - 4: The answer is mostly relevant and complete but may have minor gaps or inaccuracies.
        - 3: The answer is partially relevant and complete, with noticeable gaps or inaccuracies.
        - 2: The answer has limited relevance and completeness, with significant gaps or inaccuracies.
        - 1: The answer is minimally relevant or complete, with substantial shortcomings.
        - 0: The answer is not relevant or complete at all.

        You must only respond with the numerical grade, no further explanation.
        """
CONCISE = f"provide a complete and concise answer to the question based on the context. Question: {Q}\n"

# name -> (system message, user message) as the original built them
ORIGINAL = {
    "QuestionPromptWithChoices": (None, f" question: {Q}" + f"context: {C};"),
    "QuestionAnswerablePromptWithChoices": (
        None,
        f" question: How does this text answer this question: {Q}" + f"context: {C};",
    ),
    "QuestionCompleteConcisePromptWithAnswerKey": (None, CONCISE + f"Context: {C}"),
    "QuestionCompleteConcisePromptT5Checked": (None, CONCISE + f"Context: {C}"),
    "QuestionBriefWithAnswerKey": (BRIEF_SYSTEM, f"Question: {Q}\n" + f"Context: {C}"),
    "QuestionSelfRatedPrompt": (SELF_SYSTEM, f"Question: {Q}\n" + f"Context: {C}"),
    "QuestionSelfRatedPromptTolerant": (SELF_SYSTEM, f"Question: {Q}\n" + f"Context: {C}"),
}
PARSERS = {
    "QuestionPromptWithChoices": "answer_key_v1",
    "QuestionAnswerablePromptWithChoices": "extraction",
    "QuestionCompleteConcisePromptWithAnswerKey": "answer_key_v1",
    "QuestionCompleteConcisePromptT5Checked": "exact_answer",
    "QuestionBriefWithAnswerKey": "answer_key",
    "QuestionSelfRatedPrompt": "self_rating",
    "QuestionSelfRatedPromptTolerant": "self_rating_tolerant",
}


@pytest.mark.parametrize("name", sorted(ORIGINAL))
def test_the_prompt_is_the_original_text(name):
    p = get_prompt(name)
    system, user = ORIGINAL[name]
    assert p.system == system
    assert p.render(question=Q, context=C) == user
    assert (p.kind, p.parser) == ("question", PARSERS[name])
    assert p.prompt_info["prompt_class"] == name and p.description and p.source


def test_prompt_info_is_the_originals():
    info = {n: shipped_prompts()[n].prompt_info for n in ORIGINAL}
    assert info["QuestionPromptWithChoices"]["context_first"] is True
    assert info["QuestionPromptWithChoices"]["prompt_style"] == "context: question:"
    assert info["QuestionBriefWithAnswerKey"]["prompt_style"] == BRIEF_SYSTEM
    assert info["QuestionSelfRatedPrompt"]["is_self_rater_tolerant"] is False
    assert info["QuestionSelfRatedPromptTolerant"]["is_self_rater_tolerant"] is True
    assert {n for n, i in info.items() if i["is_self_rated"]} == {
        "QuestionSelfRatedPrompt",
        "QuestionSelfRatedPromptTolerant",
    }


def test_prompts_list_shows_them(cli):
    r = cli("prompts", "list")
    assert r.returncode == 0, r.stderr
    for name, parser in PARSERS.items():
        assert any(line.split()[:3] == [name, "question", parser] for line in r.stdout.splitlines()), name


@pytest.mark.parametrize(
    ("answer", "grade"),
    [
        # "if tolerant there can be additional text following the number"
        ("4 - the answer is mostly relevant", 4),
        ("5 The answer is highly relevant, complete, and accurate.", 5),
        ("0: The answer is not relevant or complete at all.", 0),
        ("4", 4),  # strict rule where the tolerant pattern does not match
        ("**3** partially", 3),
        ("7 out of 10", 1),  # outside the scale: any other answer
        ("unanswerable", 0),
        ("The answer is 4", 1),  # the number must come first
        ("4 - first line\nsecond line", 1),  # the original's pattern reads one line
    ],
)
def test_self_rater_tolerant(answer, grade):
    assert get_parser("self_rating_tolerant").parse(answer) == grade


@pytest.mark.parametrize(
    ("answer", "grade"),
    [("4", 4), ("4 - the answer is mostly relevant", 1), ("unanswerable", 0)],
)
def test_self_rater_strict_is_unchanged(answer, grade):
    assert get_parser("self_rating").parse(answer) == grade


@pytest.mark.parametrize(
    ("answer", "gold", "grade"),
    [
        ("carbon dioxide", ["carbon dioxide"], 1),  # check_answer_simple: the gold answer as written
        ("Carbon Dioxide ", ["carbon dioxide"], 1),  # lower-cased and stripped (TrueFalseMatcher)
        ("yes", ["True"], 1),  # a lone true key accepts yes / correct
        ("wrong", ["false"], 1),  # a lone false key accepts no / incorrect / wrong
        ("yes", ["false"], 0),
        # the widened key is also fuzzy-matched: "wrong." and "incorrectli" stem close to wrong /
        # incorrect, and "correct" to "incorrect" (ratio 87.5), as in the original
        ("Wrong.", ["false"], 1),
        ("incorrectly", ["false"], 1),
        ("correct", ["false"], 1),
        ("Yes.", ["true"], 0),  # "yes." vs the stem "ye": ratio 67, as in the original
        ("no", ["true"], 0),
        ("photosynthesizing", ["photosynthesis"], 1),  # stems of the whole texts, fuzzy ratio > 80
        ("oxygen", ["carbon dioxide"], 0),
        ("the carbon dioxide", ["carbon dioxide"], 1),  # no stopwords removed, yet close enough
        ("it is carbon dioxide from the air", ["carbon dioxide"], 0),
    ],
)
def test_answer_key_v1(answer, gold, grade):
    assert get_parser("answer_key_v1").parse(answer, gold) == grade


@pytest.mark.parametrize(
    ("answer", "gold", "grade"),
    [("carbon dioxide", ["carbon dioxide"], 1), ("Carbon dioxide", ["carbon dioxide"], 0)],
)
def test_t5_checked_is_exact(answer, gold, grade):
    assert get_parser("exact_answer").parse(answer, gold) == grade


@pytest.mark.parametrize(
    ("answer", "grade"),
    [("unanswerable", 0), ("Unanswerable", 0), ("carbon dioxide", 1), ("Carbon dioxide.", 1), ("sugar", 0)],
)
def test_brief_answers_are_checked_by_the_answer_key(answer, grade):
    """QuestionBriefWithAnswerKey: 'unanswerable' is always wrong, else the answer key decides."""
    assert get_parser("answer_key").parse(answer, ["carbon dioxide"]) == grade
