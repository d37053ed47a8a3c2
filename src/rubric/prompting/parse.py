"""Answer parsers: turn an LLM's answer text into a grade, by name (the ``parser`` of a prompt file).

The rules are those of the papers (RUBRIC §4.2.1, EXAM++ §4.2.1-4.2.2); where the original tool
differs from them we follow the papers and say so here:

- ``self_rating`` (0-5): an answer that is a single digit 0-5, optionally with punctuation or
  blanks around it, is the grade; an *unanswerable expression* (or an empty answer) gives 0;
  any other answer gives 1. The original tool inverted the last two cases; we follow the papers.
- ``rating_0_N`` (e.g. ``rating_0_2`` for Thomas): the same rule on a 0-N scale; a single digit
  above N is out of scale and gives 0, as the original tool's direct-grading rater did.
- ``yes_no`` (HELM, Sun, FagB, ...): yes / true / correct gives 1, anything else 0.
- ``extraction`` (answer extraction): an unanswerable expression or an ill-formed answer ("a.",
  "(iii)") is wrong (0); any other answer counts as answered (1).
- ``answer_key``: the extracted answer is checked against the item's gold answers
  (:mod:`rubric.prompting.answer_key`): 1 when it matches, else 0.
- ``verify``: the LLM answer-verification prompt: "yes" means the answer is correct (1), else 0.

Unanswerable expressions, ill-formed extractions and yes/no are read by
:mod:`rubric.prompting.phrases`.

Every parser has ``choices``: the one-token answers that decide the grade on their own, which
the grading engine reads from the logits of one decoding step (``None`` for free-text parsers).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rubric.errors import UserError
from rubric.prompting.answer_key import check_answer, check_answer_v1
from rubric.prompting.phrases import is_ill_formed, is_unanswerable, yes_no

__all__ = ["Parser", "get_parser", "is_ill_formed", "is_unanswerable", "parser_names", "yes_no"]

_ONE_DIGIT = re.compile(r"[^\w]*([0-9])[^\w]*")


@dataclass(frozen=True)
class Parser:
    """Turns one answer into a grade. ``grades`` lists every grade it can give, ascending."""

    name: str
    description: str
    grades: tuple[int, ...]
    choices: tuple[str, ...] | None
    rule: Callable[[str, Sequence[str] | None], int]
    needs_gold_answers: bool = False

    def parse(self, answer: str, gold_answers: Sequence[str] | None = None) -> int:
        """The grade of ``answer``; ``gold_answers`` only for parsers with ``needs_gold_answers``."""
        if self.needs_gold_answers and gold_answers is None:
            raise ValueError(f"parser {self.name} needs the item's gold answers")
        return self.rule(answer, gold_answers)

    @property
    def choice_grades(self) -> dict[str, int]:
        """Grade of each one-token choice, for the engine's fast path and expected grades."""
        return {c: self.parse(c) for c in self.choices or ()}

    @property
    def max_grade(self) -> int:
        return self.grades[-1]


def rating_rule(max_grade: int, out_of_scale: int | None) -> Callable[[str, Sequence[str] | None], int]:
    """The self-rating rule on a 0..max_grade scale.

    ``out_of_scale`` is the grade of a lone digit above the scale; ``None`` treats it like any
    other answer (1), which is the papers' rule for 0-5 self-ratings (the original tool gave 0).
    """

    def rule(answer: str, _gold: Sequence[str] | None = None) -> int:
        m = _ONE_DIGIT.fullmatch(answer)
        if m:
            digit = int(m.group(1))
            if digit <= max_grade:
                return digit
            if out_of_scale is not None:
                return out_of_scale
        return 0 if is_unanswerable(answer) else 1

    return rule


def _yes_no_rule(answer: str, _gold: Sequence[str] | None = None) -> int:
    return 1 if yes_no(answer) else 0


def _extraction_rule(answer: str, _gold: Sequence[str] | None = None) -> int:
    return 0 if is_unanswerable(answer) or is_ill_formed(answer) else 1


def _answer_key_rule(answer: str, gold: Sequence[str] | None) -> int:
    return 1 if check_answer(answer, gold or ()) else 0


def rating_parser(max_grade: int, out_of_scale: int | None = 0) -> Parser:
    """A ``rating_0_N`` parser: digits 0..N, unanswerable 0, other text 1, digits above N 0."""
    return Parser(
        name=f"rating_0_{max_grade}",
        description=f"single digit 0-{max_grade} is the grade; digit above {max_grade} or unanswerable "
        "expression -> 0; other text -> 1",
        grades=tuple(range(max_grade + 1)),
        choices=tuple(str(g) for g in range(max_grade + 1)),
        rule=rating_rule(max_grade, out_of_scale),
    )


_YES_NO_CHOICES = ("yes", "no", "Yes", "No")

PARSERS: dict[str, Parser] = {}


def register_parser(parser: Parser) -> Parser:
    """Add a parser to the registry (by its name); returns it, so it can decorate a constant."""
    PARSERS[parser.name] = parser
    return parser


register_parser(
    Parser(
        name="self_rating",
        description="single digit 0-5 (punctuation around it allowed) is the grade; unanswerable "
        "expression or empty -> 0; any other answer -> 1",
        grades=(0, 1, 2, 3, 4, 5),
        choices=("0", "1", "2", "3", "4", "5"),
        rule=rating_rule(5, None),
    )
)
register_parser(
    Parser(
        name="yes_no",
        description="yes / true / correct -> 1; anything else -> 0",
        grades=(0, 1),
        choices=_YES_NO_CHOICES,
        rule=_yes_no_rule,
    )
)
register_parser(
    Parser(
        name="extraction",
        description="extracted answer: unanswerable expression, empty or ill-formed ('a.', '(iii)') -> 0; "
        "other -> 1",
        grades=(0, 1),
        choices=None,
        rule=_extraction_rule,
    )
)
register_parser(
    Parser(
        name="answer_key",
        description="extracted answer matches a gold answer (normalised, stemmed, edit distance < 20%; "
        "true/false keys) -> 1, else 0",
        grades=(0, 1),
        choices=None,
        rule=_answer_key_rule,
        needs_gold_answers=True,
    )
)
register_parser(
    Parser(
        name="verify",
        description="LLM answer verification: yes -> correct (1); anything else -> 0",
        grades=(0, 1),
        choices=_YES_NO_CHOICES,
        rule=_yes_no_rule,
    )
)
register_parser(rating_parser(2))

# The original's SelfRaterTolerant: a digit followed by blanks and more text on its line
# ("4 - mostly answers it") is the grade. Where its pattern does not match, the strict rule
# applies (so a bare "4" is 4; the original, whose pattern needs a blank after the digit, fell
# through to its inverted unanswerable check and gave 0).
_TOLERANT = re.compile(r"[^\w]*([0-9])[^\w]*\s.*")


def _tolerant_rule(answer: str, gold: Sequence[str] | None = None) -> int:
    m = _TOLERANT.fullmatch(answer)
    if m and int(m.group(1)) <= 5:
        return int(m.group(1))
    return _STRICT_0_5(answer, gold)


_STRICT_0_5 = rating_rule(5, None)
register_parser(
    Parser(
        name="self_rating_tolerant",
        description="self_rating, and a digit 0-5 followed by a blank and more text on its line "
        "('4 - mostly') is the grade too (the original's SelfRaterTolerant)",
        grades=(0, 1, 2, 3, 4, 5),
        choices=("0", "1", "2", "3", "4", "5"),
        rule=_tolerant_rule,
    )
)


def _answer_key_v1_rule(answer: str, gold: Sequence[str] | None) -> int:
    return 1 if check_answer_v1(answer, gold or ()) else 0


def _exact_answer_rule(answer: str, gold: Sequence[str] | None) -> int:
    return 1 if answer in (gold or ()) else 0


register_parser(
    Parser(
        name="answer_key_v1",
        description="the original's first answer check: a gold answer exactly, or lower-cased (true/false "
        "keys also accept yes/correct, no/incorrect/wrong), or Porter stems of the whole texts with a "
        "fuzzy ratio above 80 -> 1, else 0",
        grades=(0, 1),
        choices=None,
        rule=_answer_key_v1_rule,
        needs_gold_answers=True,
    )
)
register_parser(
    Parser(
        name="exact_answer",
        description="the answer is exactly one of the gold answers -> 1, else 0",
        grades=(0, 1),
        choices=None,
        rule=_exact_answer_rule,
        needs_gold_answers=True,
    )
)

# UMBRELA / LLMJudge 0-3 relevance answers, read exactly as UMBRELA's judge reads them
# (castorini/umbrela, Apache-2.0: ``parse_fewshot_response``): the answer stripped and
# lower-cased; these patterns tried in order, case-insensitive, ``.`` matching newlines; the first
# pattern that matches anywhere decides, by its last match; nothing matched is 0. So "O: N"
# (pattern 3, which also reads "to 2") comes before "##final score: N", and the last pattern takes
# any digit 0-3 ("2.5" -> 2, "10" -> 0, "score: 10" -> 1). ``[:-=]`` is the character range
# ':' to '=', as in the original.
UMBRELA_PATTERNS: tuple[str, ...] = (
    r'"o"\s*[:-=]?\s*(0|1|2|3)',
    r"\'o\'\s*[:-=]?\s*(0|1|2|3)",
    r"o\s*[:-=]?\s*(0|1|2|3)",
    r'"overall_score"\s*[:-=]?\s*(0|1|2|3)',
    r'"overall"\s*[:-=]?\s*(0|1|2|3)',
    r'"overall score"\s*[:-=]?\s*(0|1|2|3)',
    r'"final score"\s*[:-=]?\s*(0|1|2|3)',
    r"final score\s*[:-=]?\s*(0|1|2|3)",
    r"final score is (0|1|2|3)",
    r'"final_score"\s*[:-=]?\s*(0|1|2|3)',
    r'"score"\s*[:-=]?\s*(0|1|2|3)',
    r'"o_score"\s*[:-=]?\s*(0|1|2|3)',
    r"output score is (0|1|2|3)",
    r"score is (0|1|2|3)",
    r"score of\s+(0|1|2|3)",
    r"assign(?:ing)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"conclude(?:s|d)?\s+with\s+(?:a\s+)?score of\s+(0|1|2|3)",
    r"give(?:n)?\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"i (?:would )?(?:give|assign)\s+(?:it\s+)?(?:a\s+)?score of\s+(0|1|2|3)",
    r"score:\s*(0|1|2|3)",
    r"[a-zA-Z]+\s+is\s+(0|1|2|3)\s",
    r"relevance category\s*[:-=]?\s*(0|1|2|3)",
    r"relevance category is (0|1|2|3)",
    r"it falls into the category (0|1|2|3)",
    r"category\s*(0|1|2|3)",
    r"relevance category (0|1|2|3)",
    r"relevance category for this passage would be (0|1|2|3)",
    r"the relevance category would be (0|1|2|3)",
    r"\n*(0|1|2|3)",
)
_UMBRELA = tuple(re.compile(p, re.IGNORECASE | re.MULTILINE | re.DOTALL) for p in UMBRELA_PATTERNS)


def _umbrela_rule(answer: str, _gold: Sequence[str] | None = None) -> int:
    text = answer.strip().lower()
    for pattern in _UMBRELA:
        found = pattern.findall(text)
        if found:
            return int(found[-1])
    return 0


register_parser(
    Parser(
        name="umbrela",
        description="0-3 relevance as UMBRELA reads it: its patterns in order ('O: N', ..., "
        "'##final score: N', 'score: N', 'category N', any digit 0-3), the last match of the first "
        "that matches; none -> 0",
        grades=(0, 1, 2, 3),
        choices=None,
        rule=_umbrela_rule,
    )
)


@dataclass(frozen=True)
class Deviation:
    """A parse rule where we differ from the original tool (or UMBRELA) on purpose.

    ``rule`` is the name docs/validation.md's deviations table lists it under (a test checks that
    every one is there); ``parsers`` the parsers it concerns."""

    rule: str
    parsers: tuple[str, ...]
    ours: str
    original: str


#: Every parse rule that differs from the original tool's or UMBRELA's (docs/validation.md).
DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "self-rating other answers",
        ("self_rating", "self_rating_tolerant", "rating_0_N"),
        "an answer neither a digit 0-5 nor unanswerable ('42', 'before', '8') is 1, unanswerable 0",
        "inverted: 0 and 1",
    ),
    Deviation(
        "blank or punctuation-only answers",
        ("extraction", "answer_key"),
        "no answer (0)",
        "an answer (1) unless empty",
    ),
    Deviation(
        "unanswerable expressions with punctuation",
        ("extraction", "self_rating", "answer_key"),
        "'No.', '[\"no\"]' are unanswerable",
        "answers",
    ),
    Deviation(
        "ill-formed markers",
        ("extraction", "answer_key"),
        "any lone letter or roman numeral up to 4 letters, bracketed or with ')', '.', ':' "
        "('Y', 'X.', '(N)', 'vi', 'A:') is no answer",
        "only its generated choice markers (A-D, a-d, i-iv with ')', '()', '[]', '.')",
    ),
    Deviation(
        "fuzzy unanswerable matching",
        ("extraction", "self_rating", "answer_key"),
        "per-word Porter stems, punctuation stripped, rapidfuzz ratio > 80 ('7 Answers' ~ 'no answer')",
        "the whole text stemmed, fuzzywuzzy ratio (rounded) > 80, with its extra choice markers "
        "('IVs' ~ 'iv')",
    ),
    Deviation(
        "tolerant self-rating of a bare digit",
        ("self_rating_tolerant",),
        "'4' is 4 (the strict rule)",
        "0 (its pattern needs text after the digit; the fallback is the inverted rule)",
    ),
    Deviation(
        "fuzzy ratio at the threshold",
        ("answer_key_v1",),
        "rapidfuzz ratio > 80 (unrounded)",
        "fuzzywuzzy ratio rounded to an integer > 80",
    ),
    Deviation(
        "answer key matching",
        ("answer_key",),
        "EXAM++ 4.2.1: stopwords dropped, stems, edit distance below 20% of the longer text",
        "AnswerKey2Verifier: exact stems (2+ letters) or fuzzy ratio > 80 (4+ letters)",
    ),
    Deviation(
        "UMBRELA reasoning text",
        ("umbrela",),
        "the answer text alone is parsed",
        "reasoning models' reasoning text is appended to the answer before parsing",
    ),
)


_RATING_NAME = re.compile(r"rating_0_([1-9])")


def get_parser(name: str) -> Parser:
    """The parser called ``name``; ``rating_0_N`` (N = 1..9) works for any scale."""
    if name in PARSERS:
        return PARSERS[name]
    m = _RATING_NAME.fullmatch(name)
    if m:
        return register_parser(rating_parser(int(m.group(1))))
    raise UserError(f"unknown answer parser {name!r}; known: {', '.join(parser_names())}, rating_0_N")


def parser_names() -> list[str]:
    """Names of the registered parsers, sorted."""
    return sorted(PARSERS)
