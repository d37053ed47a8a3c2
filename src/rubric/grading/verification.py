"""Grading with an answer-verification prompt: EXAM++ §4.2.1 and Table 2 (middle), in two stages.

1. **Extract**: every (passage, question) gets an answer from the extraction prompt that the
   verify prompt's file names with ``answer_prompt = "NAME"`` (the shipped
   ``QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2`` names
   ``QuestionCompleteConcisePromptWithAnswerKey2``, the answer-key QA prompt of EXAM++).
2. **Verify**: the LLM is asked the verification prompt once per gold answer of the question;
   the question is answered correctly when any response says yes.

The original tool (``exam_pp/exam_verify_answer.py``) re-graded answers already extracted; we do
both stages in one run, through the grader's cache, batching and resume. Its rules, and where
we differ (we follow the paper and document every change from the original tool):

- The answer goes into the prompt stripped of blanks, and identical prompts are asked once (the
  original deduplicated answers per question; the response cache does it here, across passages,
  queries and runs).
- An unanswerable or ill-formed extracted answer ("unanswerable", "", "(iii)") is wrong without
  asking the verifier (the original asked about it, too).
- A response is yes by :func:`rubric.prompting.phrases.yes_no` ("Yes." too); any other response is
  no. The original took only exactly "yes" / "no" and dropped the question otherwise.
- A question without gold answers cannot be verified. The original had none (its TQA questions
  all carry an answer key); a question it could not verify it left out of both
  ``correctAnswered`` and ``wrongAnswered``, with ``exam_ratio`` = correct / (correct + wrong).
  We do the same: such a question keeps its extracted answer in ``answers`` but is in neither
  list, so it does not lower the ratio (0 when no question was verified).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rubric.data.models import QuestionItem
from rubric.errors import UserError
from rubric.prompting.phrases import is_ill_formed, is_unanswerable, yes_no
from rubric.prompting.prompts import Prompt, get_prompt

VERIFY_KIND = "verify"


@dataclass(frozen=True)
class Verdict:
    """The outcome for one (passage, question): the extracted answer and whether it is correct.

    ``correct`` is None for a question without gold answers (not verified, in neither list).
    """

    answer: str
    correct: bool | None


def answer_prompt(prompt: Prompt, prompt_files: Sequence[Path] = ()) -> Prompt:
    """The extraction prompt a verify prompt names with ``answer_prompt`` (checked: a question
    prompt that generates free text, so there is an answer to verify)."""
    where = str(prompt.path) if prompt.path else f"--prompt {prompt.name}"
    name = prompt.extra.get("answer_prompt")
    if not isinstance(name, str) or not name:
        raise UserError(
            f"{where}: a verify prompt needs answer_prompt = NAME, the question prompt whose answers "
            "it verifies (e.g. QuestionCompleteConcisePromptWithAnswerKey2)"
        )
    extract = get_prompt(name, list(prompt_files), option=f"{where}: answer_prompt")
    if extract.kind != "question" or extract.choices is not None:
        raise UserError(
            f"{where}: answer_prompt {name} is a {extract.kind} prompt with parser {extract.parser}; "
            "it must be a question prompt that extracts a free-text answer"
        )
    return extract


def verification_prompts(
    prompt: Prompt, question: str, answer: str, gold_answers: Sequence[str]
) -> list[str]:
    """One rendered verification prompt per gold answer (``{gold_answers}`` holds one of them)."""
    return [prompt.render(question=question, answer=answer, gold_answers=g) for g in gold_answers]


def verified(responses: Iterable[str]) -> bool:
    """The LLM verified the answer when any of its responses (one per gold answer) says yes."""
    return any(yes_no(r) is True for r in responses)


def gradable(answer: str) -> bool:
    """Is there an answer to verify (not unanswerable, not ill-formed)?"""
    return not (is_unanswerable(answer) or is_ill_formed(answer))


def verification_texts(prompt: Prompt, item: QuestionItem, answer: str) -> list[str]:
    """The prompts to ask for one extracted answer: one per gold answer, none when the question
    has no gold answers or the answer is no answer at all."""
    gold = list(getattr(item, "gold_answers", None) or [])
    if not gold or not gradable(answer):
        return []
    return verification_prompts(prompt, item.question_text, answer.strip(), gold)


def verdict(item: QuestionItem, answer: str, responses: Sequence[str]) -> Verdict:
    """Correct when any verifier response says yes; see the module docstring for the rest."""
    if not getattr(item, "gold_answers", None):
        return Verdict(answer, None)
    return Verdict(answer, gradable(answer) and verified(responses))
