"""Our grade records against the original tool's, on its own LLMJudge output (real FLAN-T5 answers).

For every exam_grades record of the first queries of ``rubric-llm-judge/all-ExtraTrees/dev.jsonl.gz``
we rebuild the record from the original answers with our engine and compare correctAnswered,
wrongAnswered, exam_ratio and self_ratings. Differences are allowed only where the original departs
from the papers' rules: a self-rating answer that is neither a digit 0-5 nor unanswerable (the original
gave 0, the papers 1), ill-formed extractions ("a.", "(iii)") that the original counted, and
unanswerable expressions with punctuation ("No.") that the original took for answers.
"""

from __future__ import annotations

import json
import string
from itertools import islice

from rubric.data.files import open_text
from rubric.data.models import ExamGrades, NuggetItem, QuestionItem
from rubric.grading.records import exam_record
from rubric.llm.base import Answer
from rubric.prompting.parse import get_parser, is_ill_formed, is_unanswerable
from rubric.prompting.prompts import get_prompt

PUNCT = string.punctuation + " "
LLM = "google/flan-t5-large"  # the model that produced the file: its answers are given, not generated


def test_records_match_the_original_tool(shared):
    path = shared("rubric-llm-judge", "all-ExtraTrees", "dev.jsonl.gz")
    checked = explained = 0
    with open_text(path) as f:
        for line in islice(f, 2):
            _, passages = json.loads(line)
            for p in passages:
                for raw in p.get("exam_grades") or []:
                    orig = ExamGrades.model_validate(raw)
                    prompt = get_prompt(orig.prompt_class)
                    parser = get_parser(prompt.parser)
                    make = NuggetItem if prompt.kind == "nugget" else QuestionItem
                    key = "nugget" if prompt.kind == "nugget" else "question"
                    items = [
                        make(query_id="q", **{f"{key}_id": i, f"{key}_text": "x"}) for i, _ in orig.answers
                    ]
                    got = [Answer(str(a)) for _, a in orig.answers]
                    ours = exam_record(prompt, parser, items, got, llm=LLM, options={})
                    same = (
                        sorted(ours.correctAnswered) == sorted(orig.correctAnswered)
                        and sorted(ours.wrongAnswered) == sorted(orig.wrongAnswered)
                        and ours.exam_ratio == orig.exam_ratio
                        and {r.item_id: r.self_rating for r in ours.self_ratings or []}
                        == {r.item_id: r.self_rating for r in orig.self_ratings or []}
                    )
                    checked += 1
                    if not same:
                        answers = [str(a) for _, a in orig.answers]
                        if parser.name == "self_rating":
                            # "42", "6 months": the papers' 1, the original's 0
                            odd = [a for a in answers if parser.parse(a) == 1 and a.strip(" .()") != "1"]
                        else:
                            # ill-formed "a." / "(iii)"; "No." (the original kept the punctuation)
                            odd = [
                                a
                                for a in answers
                                if is_ill_formed(a) or (is_unanswerable(a) and a != a.strip(PUNCT))
                            ]
                        assert odd, (orig.prompt_class, orig.answers, ours.to_json(), orig.to_json())
                        explained += 1
                    assert ours.llm == orig.llm and ours.prompt_type == orig.prompt_type
                    assert ours.prompt_info.prompt_class == orig.prompt_class
    assert checked > 1000
    assert explained < checked * 0.1, (explained, checked)  # seen: 157 of 2,576 records
