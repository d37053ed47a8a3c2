"""Reading what an answer says: unanswerable expressions, ill-formed extractions, yes / no.

The rules of RUBRIC §4.2.1 and EXAM++ §4.2.1, shared by the answer parsers
(:mod:`rubric.prompting.parse`) and answer-key matching (:mod:`rubric.prompting.answer_key`), so
neither imports the other's module for them. Unanswerable expressions are compared lower-cased,
with blanks and punctuation around them removed, each word Porter-stemmed, and a fuzzy ratio
(rapidfuzz) above 80. Stripping the punctuation is our addition: the original tool took "No."
for an answer.
"""

from __future__ import annotations

import re
import string
from functools import lru_cache

#: The unanswerable expressions of EXAM++ §4.2.1 (also the original tool's list).
UNANSWERABLE_EXPRESSIONS: tuple[str, ...] = (
    "unanswerable",
    "no",
    "no answer",
    "not enough information",
    "unknown",
    "it is not possible to tell",
    "it does not say",
    "no relevant information",
)
FUZZY_THRESHOLD = 80  # rapidfuzz ratio strictly above this is a match
YES_ANSWERS = frozenset({"yes", "true", "correct"})
NO_ANSWERS = frozenset({"no", "false", "incorrect"})

_STRIP = string.whitespace + string.punctuation
# Ill-formed extractions (EXAM++ §4.2.1): a lone letter or a list marker such as "(iii)", "b)", "[iv]".
_ILL_FORMED = re.compile(r"[\(\[]?(?:[a-z]|[ivx]{1,4})[\)\]\.:]*")


@lru_cache(maxsize=1)
def porter_stemmer():
    # nltk is imported lazily so that loading prompts (and `rubric --help`) stays fast.
    from nltk.stem import PorterStemmer

    return PorterStemmer()


@lru_cache(maxsize=262144)
def stem_word(word: str) -> str:
    """Porter stem of one word, cached: answers share most of their words."""
    return porter_stemmer().stem(word)


@lru_cache(maxsize=65536)
def stem_phrase(text: str) -> str:
    """Lower-case, drop blanks and punctuation around the text, Porter-stem every word.

    Cached: graders see the same few answers ("0", "no", "unanswerable") millions of times.
    """
    return " ".join(stem_word(w) for w in text.lower().strip(_STRIP).split())


@lru_cache(maxsize=1)
def _stemmed_expressions() -> tuple[str, ...]:
    return tuple(dict.fromkeys(stem_phrase(e) for e in UNANSWERABLE_EXPRESSIONS))


@lru_cache(maxsize=65536)
def is_unanswerable(answer: str) -> bool:
    """Does the answer say that the passage does not answer (EXAM++ §4.2.1)? Empty answers do."""
    from rapidfuzz import fuzz

    stemmed = stem_phrase(answer)
    if not stemmed:
        return True
    return any(fuzz.ratio(stemmed, e) > FUZZY_THRESHOLD for e in _stemmed_expressions())


def is_ill_formed(answer: str) -> bool:
    """An extraction that is only a choice letter or a list marker ("a.", "(iii)"): no answer."""
    return _ILL_FORMED.fullmatch(answer.strip().lower()) is not None


def yes_no(answer: str) -> bool | None:
    """True for yes/true/correct, False for no/false/incorrect, None otherwise (case and
    surrounding punctuation ignored, so "Yes." is yes)."""
    word = answer.strip(_STRIP).lower()
    if word in YES_ANSWERS:
        return True
    if word in NO_ANSWERS:
        return False
    return None
