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
from rubric.prompting.answer_key import check_answer
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

# UMBRELA / LLMJudge 0-3 relevance answers: "##final score: 2", "M: 2, T: 1, O: 2", "Score: 3",
# '{"final_score": 1}', or just "2". The rule follows what UMBRELA's own parser accepts: a
# labelled final score wins, then an overall label ("O", "overall", "score", "category"), then
# the last lone digit 0-3; each time the last occurrence; nothing found is 0, as UMBRELA records it.
_UMBRELA_FINAL = re.compile(r"final[ _]score(?:\s+is)?\W{0,4}([0-3])(?!\.?[0-9])")
_UMBRELA_LABEL = re.compile(
    r"(?:\bo\b|\boverall(?:[ _]score)?|\bscore|\bcategory)(?:\s+is|\s+of)?\W{0,4}([0-3])(?!\.?[0-9])"
)
_UMBRELA_DIGIT = re.compile(r"(?<![0-9.])([0-3])(?!\.?[0-9])")


def _umbrela_rule(answer: str, _gold: Sequence[str] | None = None) -> int:
    text = answer.lower()
    for pattern in (_UMBRELA_FINAL, _UMBRELA_LABEL, _UMBRELA_DIGIT):
        found = pattern.findall(text)
        if found:
            return int(found[-1])
    return 0


register_parser(
    Parser(
        name="umbrela",
        description="0-3 relevance (UMBRELA, LLMJudge): the last '##final score: N', else the last "
        "'O: N' / 'score: N' / 'category N', else the last lone digit 0-3; none -> 0",
        grades=(0, 1, 2, 3),
        choices=None,
        rule=_umbrela_rule,
    )
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
