"""Answer parsers: a table of real-looking LLM answers (many taken from the answers FLAN-T5-large
gave in the original tool's LLMJudge files) and the grade the papers' rules give each."""

from __future__ import annotations

import pytest

from rubric.errors import UserError
from rubric.prompting.parse import get_parser, is_ill_formed, is_unanswerable, parser_names

TABLE = [
    # --- self_rating 0-5: a lone digit is the grade, punctuation around it allowed
    ("self_rating", "0", 0),
    ("self_rating", "5", 5),
    ("self_rating", "4", 4),
    ("self_rating", "2.", 2),
    ("self_rating", " 3 ", 3),
    ("self_rating", "(3)", 3),
    ("self_rating", "'4'", 4),
    ("self_rating", "- 5:", 5),
    # --- not a lone 0-5 digit and not unanswerable -> 1
    ("self_rating", "4/5", 1),
    ("self_rating", "5 - The answer is highly relevant", 1),
    ("self_rating", "10", 1),
    ("self_rating", "7", 1),
    ("self_rating", "Poultry", 1),
    ("self_rating", "Dogs have 42 teeth", 1),
    ("self_rating", "yes", 1),
    ("self_rating", "None", 1),
    ("self_rating", "Ordnance Survey Ireland", 1),
    ("self_rating", "Soak in cold water.", 1),
    # --- unanswerable expressions (lower-cased, stemmed, fuzzy > 80) and empty answers -> 0
    ("self_rating", "", 0),
    ("self_rating", "   ", 0),
    ("self_rating", "no", 0),
    ("self_rating", "No.", 0),
    ("self_rating", "NO", 0),
    ("self_rating", "unanswerable", 0),
    ("self_rating", "Unanswerable.", 0),
    ("self_rating", "no answer", 0),
    ("self_rating", "Not enough information", 0),
    ("self_rating", "not enough info", 0),
    ("self_rating", "unknown", 0),
    ("self_rating", "It is not possible to tell", 0),
    ("self_rating", "it is not possible to tell.", 0),
    ("self_rating", "it does not say", 0),
    ("self_rating", "No relevant information.", 0),
    ("self_rating", "no relevant informations", 0),
    # --- Thomas 0-2: digits above the scale are out of scale -> 0
    ("rating_0_2", "2", 2),
    ("rating_0_2", "1.", 1),
    ("rating_0_2", "0", 0),
    ("rating_0_2", "3", 0),
    ("rating_0_2", "5", 0),
    ("rating_0_2", "highly relevant", 1),
    ("rating_0_2", "no", 0),
    ("rating_0_2", "", 0),
    # --- yes/no direct prompts (HELM, Sun, FagB)
    ("yes_no", "yes", 1),
    ("yes_no", "Yes", 1),
    ("yes_no", "Yes.", 1),
    ("yes_no", " YES ", 1),
    ("yes_no", "true", 1),
    ("yes_no", "Correct", 1),
    ("yes_no", "no", 0),
    ("yes_no", "No", 0),
    ("yes_no", "incorrect", 0),
    ("yes_no", "maybe", 0),
    ("yes_no", "yes, it does", 0),
    ("yes_no", "", 0),
    # --- answer extraction: unanswerable or ill-formed -> wrong (0), an answer -> 1
    ("extraction", "Poultry", 1),
    ("extraction", "42", 1),
    ("extraction", "Raymond James & Associates", 1),
    ("extraction", "Muscle protein synthesis", 1),
    ("extraction", "unanswerable", 0),
    ("extraction", "No", 0),
    ("extraction", "", 0),
    ("extraction", "a.", 0),
    ("extraction", "(iii)", 0),
    ("extraction", "[iv]", 0),
    ("extraction", "b)", 0),
    ("extraction", "[c.]", 0),
    ("extraction", '["No"]', 0),
    ("extraction", " .  .", 0),
    # --- LLM answer verification
    ("verify", "yes", 1),
    ("verify", "Yes.", 1),
    ("verify", "no", 0),
    ("verify", "I don't know", 0),
]


@pytest.mark.parametrize(("parser", "answer", "grade"), TABLE)
def test_parse_table(parser, answer, grade):
    assert get_parser(parser).parse(answer) == grade


def test_table_is_large_enough():
    assert len(TABLE) >= 40
    assert {p for p, _, _ in TABLE} >= {"self_rating", "rating_0_2", "yes_no", "extraction", "verify"}


ANSWER_KEY_TABLE = [
    ("rise", ["rise"], 1),
    ("Rising", ["rise"], 1),  # stemmed
    ("rise.", ["Rise"], 1),
    ("photosynthesis", ["Photosynthesis."], 1),
    ("photosynthesys", ["photosynthesis"], 1),  # one edit in 13 characters < 20%
    ("the mitochondria", ["mitochondria"], 1),  # stopword dropped
    ("increase", ["rise"], 0),
    ("During very wet times, the water table will rise.", ["rise"], 0),  # word matching misses it
    ("cat", ["bat"], 0),  # one edit in 3 characters is not < 20%
    ("True", ["true"], 1),
    ("yes", ["true"], 1),
    ("correct", ["True"], 1),
    ("no", ["false"], 1),
    ("No.", ["false"], 1),
    ("incorrect", ["FALSE"], 1),
    ("yes", ["false"], 0),
    ("maybe", ["true"], 0),
    ("unanswerable", ["unanswerable things"], 0),
    ("a.", ["a"], 0),
    ("mantle", ["crust", "mantle"], 1),  # any gold answer
    ("it", ["it"], 1),  # only stopwords: plain comparison
    ("", ["rise"], 0),
]


@pytest.mark.parametrize(("answer", "gold", "grade"), ANSWER_KEY_TABLE)
def test_answer_key_parser(answer, gold, grade):
    assert get_parser("answer_key").parse(answer, gold_answers=gold) == grade


def test_answer_key_parser_demands_gold_answers():
    with pytest.raises(ValueError, match="gold answers"):
        get_parser("answer_key").parse("rise")


def test_choices_and_grades():
    assert get_parser("self_rating").choices == ("0", "1", "2", "3", "4", "5")
    assert get_parser("self_rating").choice_grades == {str(g): g for g in range(6)}
    assert get_parser("yes_no").choice_grades == {"yes": 1, "no": 0, "Yes": 1, "No": 0}
    assert get_parser("rating_0_2").grades == (0, 1, 2)
    assert get_parser("extraction").choices is None
    assert get_parser("answer_key").choices is None
    assert get_parser("rating_0_3").parse("3") == 3 and get_parser("rating_0_3").parse("4") == 0


def test_unknown_parser_is_a_user_error():
    with pytest.raises(UserError, match="unknown answer parser 'nope'"):
        get_parser("nope")
    assert "self_rating" in parser_names()


def test_helpers():
    assert is_unanswerable("") and is_unanswerable("Unknown.") and not is_unanswerable("unknowable facts")
    assert is_ill_formed("(iii)") and is_ill_formed("c.") and not is_ill_formed("42")
