"""Answer-key verification (EXAM++ §4.2.1): is an extracted answer one of the gold answers?

Word matching: both answers are normalised (lower-cased, punctuation removed, English stopwords
dropped, every word Porter-stemmed); the answer is correct when the Levenshtein distance of the
normalised strings is below 20% of the longer one. Keys that are exactly "true" or "false" accept
yes / correct / true and no / incorrect / false. Answers that say "unanswerable" (or are
ill-formed, like "a." or "(iii)") are wrong.

LLM verification (EXAM++ Table 2, middle) is :mod:`rubric.grading.verification`.
"""

from __future__ import annotations

import string
from collections.abc import Iterable, Sequence
from functools import lru_cache

from rubric.prompting.phrases import is_ill_formed, is_unanswerable, stem_word, yes_no

#: NLTK's English stopword list (nltk.corpus.stopwords, 179 words), inlined so that no corpus
#: download is needed; the original tool used the same list.
STOPWORDS = frozenset(
    """i me my myself we our ours ourselves you you're you've you'll you'd your yours yourself
    yourselves he him his himself she she's her hers herself it it's its itself they them their
    theirs themselves what which who whom this that that'll these those am is are was were be been
    being have has had having do does did doing a an the and but if or because as until while of at
    by for with about against between into through during before after above below to from up down
    in out on off over under again further then once here there when where why how all any both
    each few more most other some such no nor not only own same so than too very s t can will just
    don don't should should've now d ll m o re ve y ain aren aren't couldn couldn't didn didn't
    doesn doesn't hadn hadn't hasn hasn't haven haven't isn isn't ma mightn mightn't mustn mustn't
    needn needn't shan shan't shouldn shouldn't wasn wasn't weren weren't won won't wouldn
    wouldn't""".split()
)
MAX_RELATIVE_DISTANCE = 0.2
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


@lru_cache(maxsize=65536)
def normalize(text: str) -> str:
    """Lower-case, remove punctuation, drop stopwords, Porter-stem; words joined by one blank."""
    words = text.lower().translate(_NO_PUNCTUATION).split()
    return " ".join(stem_word(w) for w in words if w not in STOPWORDS)


def true_false_key(gold_answers: Iterable[str]) -> bool | None:
    """True / False when the key is exactly "true" / "false" (any case), else None."""
    keys = {g.strip().lower() for g in gold_answers}
    if keys == {"true"}:
        return True
    if keys == {"false"}:
        return False
    return None


def matches(answer: str, gold: str) -> bool:
    """Edit distance of the normalised strings below 20% of the longer one.

    When normalising leaves nothing (an answer made only of stopwords, e.g. "it"), the lower-cased
    texts without punctuation must be equal instead.
    """
    from rapidfuzz.distance import Levenshtein

    a, g = normalize(answer), normalize(gold)
    if not a or not g:
        plain = answer.lower().translate(_NO_PUNCTUATION).split()
        return bool(plain) and plain == gold.lower().translate(_NO_PUNCTUATION).split()
    return Levenshtein.distance(a, g) < MAX_RELATIVE_DISTANCE * max(len(a), len(g))


def check_answer(answer: str, gold_answers: Sequence[str]) -> bool:
    """Is ``answer`` correct for an item with these gold answers (EXAM++ §4.2.1)?"""
    key = true_false_key(gold_answers)
    if key is not None:
        said = yes_no(answer)
        return said is not None and said == key
    if is_unanswerable(answer) or is_ill_formed(answer):
        return False
    return any(matches(answer, gold) for gold in gold_answers)


#: What a single "true" / "false" key also accepts in the first answer check (lower-cased answers).
V1_TRUE_FALSE = {"true": ("yes", "correct"), "false": ("no", "incorrect", "wrong")}


def check_answer_v1(answer: str, gold_answers: Sequence[str]) -> bool:
    """The original tool's first answer check (its QuestionCompleteConcisePromptWithAnswerKey and
    QuestionPromptWithChoices), kept so their grades mean what they meant there: the answer is a
    gold answer as written; or, lower-cased and stripped, one of them; or the Porter stems of the
    lower-cased whole texts have a fuzzy ratio above 80. A lone "true" / "false" key is first
    widened with yes / correct and no / incorrect / wrong, and every test then runs on the widened
    key, as the original's answer checker got the key its true/false matcher had widened ("Wrong."
    and "incorrectly" match "false"). No stopwords, no unanswerable check."""
    from rapidfuzz import fuzz

    accepted = list(gold_answers)
    if len(gold_answers) == 1:
        accepted += V1_TRUE_FALSE.get(gold_answers[0].lower().strip(), ())
    if answer in accepted or answer.lower().strip() in accepted:
        return True
    stemmed = stem_word(answer.lower())
    return any(fuzz.ratio(stemmed, stem_word(g.lower())) > 80 for g in accepted)
