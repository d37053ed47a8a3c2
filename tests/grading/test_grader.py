"""The grading engine in-process, on tiny random models: record format, regrading, cache, fitting."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList
from rubric.data.queries import read_queries
from rubric.grading.fit import fit_prompts
from rubric.grading.grader import Grader, grade_file, items_by_query
from rubric.grading.parse import get_parser
from rubric.grading.prompts import get_prompt
from rubric.llm.cache import ResponseCache
from rubric.llm.registry import make_backend

HERE = Path(__file__).resolve().parent
TINY = HERE.parent / "data" / "tiny"
_spec = importlib.util.spec_from_file_location("tiny_models", HERE.parent / "llm" / "tiny_models.py")
tiny_models = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tiny_models)

ORIGINAL_KEY_ORDER = ["correctAnswered", "wrongAnswered", "answers", "llm", "llm_options", "exam_ratio"]
ORIGINAL_KEY_ORDER.append("prompt_info")
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
EXTRACT = "QuestionCompleteConciseUnanswerablePromptWithChoices"


@pytest.fixture(scope="module")
def t5(tmp_path_factory):
    folder = tiny_models.build_t5(tmp_path_factory.mktemp("t5"))
    return make_backend("hf-seq2seq", str(folder), max_new_tokens=4, max_input_tokens=160)


@pytest.fixture(scope="module")
def passages() -> list[QueryWithFullParagraphList]:
    """The tiny collection: every passage under every query (12 x 3)."""
    texts = load_texts([TINY / "collection.tsv"])
    return [
        QueryWithFullParagraphList(
            queryId=qid,
            paragraphs=[FullParagraphData(paragraph_id=d, text=t) for d, t in sorted(texts.items())],
        )
        for qid in read_queries(TINY / "queries.tsv")
    ]


@pytest.fixture(scope="module")
def questions():
    return items_by_query(read_bank(HERE / "data" / "questions.jsonl"))


def test_exam_records_are_written_like_the_original_tool(t5, passages, questions):
    grader = Grader(t5, [get_prompt(SELF), get_prompt(EXTRACT)], items=questions)
    graded = grader.grade_chunk(passages)
    assert grader.stats.pairs == sum(len(q.paragraphs) * len(questions[q.queryId]) * 2 for q in passages)
    rating, extraction = get_parser("self_rating"), get_parser("extraction")
    for q in graded:
        items = [it.item_id for it in questions[q.queryId]]
        for p in q.paragraphs:
            sr, ex = p.exam_grades
            assert sr.prompt_class == SELF and ex.prompt_class == EXTRACT
            assert [a[0] for a in sr.answers] == items  # every item, in bank order
            assert [r.question_id for r in sr.self_ratings] == items
            assert [r.self_rating for r in sr.self_ratings] == [rating.parse(a) for _, a in sr.answers]
            assert sr.correctAnswered == [r.question_id for r in sr.self_ratings if r.self_rating >= 1]
            assert sr.wrongAnswered == [r.question_id for r in sr.self_ratings if r.self_rating == 0]
            assert sr.exam_ratio == len(sr.correctAnswered) / len(items)
            assert all(0 <= r.expected_rating <= 5 for r in sr.self_ratings)
            assert sr.prompt_type == "question" and sr.llm == t5.model
            assert sr.llm_options["decoding"] == "greedy" and sr.prompt_info.is_self_rated is True
            assert ex.self_ratings is None and ex.prompt_info.is_self_rated is False
            assert ex.correctAnswered == [i for i, a in ex.answers if extraction.parse(a) == 1]
            on_disk = sr.to_json()
            assert list(on_disk)[:7] == ORIGINAL_KEY_ORDER


def test_grading_again_adds_and_replaces(t5, passages, questions):
    first = Grader(t5, [get_prompt(SELF)], items=questions).grade_chunk(passages)
    both = Grader(t5, [get_prompt(EXTRACT)], items=questions).grade_chunk(first)
    assert [g.prompt_class for g in both[0].paragraphs[0].exam_grades] == [SELF, EXTRACT]
    again = Grader(t5, [get_prompt(SELF)], items=questions).grade_chunk(both)
    assert [g.prompt_class for g in again[0].paragraphs[0].exam_grades] == [SELF, EXTRACT]
    assert again[0].to_json() == both[0].to_json()


def test_cache_answers_a_second_run_completely(tmp_path, t5, passages, questions):
    cache = ResponseCache(tmp_path / "c.sqlite")
    prompts = [get_prompt(SELF), get_prompt(EXTRACT)]
    one = Grader(t5, prompts, items=questions, cache=cache)
    stats1 = grade_file(one, passages, tmp_path / "a.jsonl.gz", [TINY / "queries.tsv"])
    assert stats1.cached == 0 and stats1.pairs > 0
    two = Grader(t5, prompts, items=questions, cache=cache)
    stats2 = grade_file(two, passages, tmp_path / "b.jsonl.gz", [TINY / "queries.tsv"])
    assert stats2.cached == stats2.pairs == stats1.pairs  # 100% hit rate
    import gzip

    assert gzip.decompress((tmp_path / "a.jsonl.gz").read_bytes()) == gzip.decompress(
        (tmp_path / "b.jsonl.gz").read_bytes()
    )
    assert not (tmp_path / "b.jsonl.gz.partial").exists()


def test_contexts_are_cut_by_tokens_so_prompts_fit(t5):
    prompt = get_prompt(SELF)
    long_context = " ".join(["bees collect nectar from flowers"] * 40)
    render = lambda c: prompt.render(question="why is the sky blue", context=c)  # noqa: E731
    (fitted,) = fit_prompts(t5, [(render, long_context)])
    assert 150 <= t5.token_lengths([fitted])[0] <= 160  # cut close to the limit, not far below
    assert "Question: why is the sky blue" in fitted
    cut = fitted.split("Context: ", 1)[1]
    assert long_context.startswith(cut) and 0 < len(cut) < len(long_context)
    short = render("bees")
    assert fit_prompts(t5, [(render, "bees")]) == [short]


def test_direct_prompts_fill_grades(tmp_path, passages):
    gpt2 = make_backend("hf-causal", str(tiny_models.build_gpt2(tmp_path / "g")), max_new_tokens=3)
    queries = read_queries(TINY / "queries.tsv")
    graded = Grader(gpt2, [get_prompt("Sun"), get_prompt("Thomas")], query_texts=queries).grade_chunk(
        passages
    )
    for q in graded:
        for p in q.paragraphs:
            sun, thomas = p.grades
            assert (sun.prompt_class, thomas.prompt_class) == ("Sun", "Thomas")
            assert sun.prompt_type == "direct_grading"
            assert sun.self_ratings == get_parser("yes_no").parse(sun.answer)
            assert thomas.self_ratings == get_parser("rating_0_2").parse(thomas.answer)
            assert sun.correctAnswered == (sun.self_ratings >= 1)
            assert 0 <= thomas.expected_rating <= 2


def test_pair_graders_get_item_and_passage_text(tmp_path, passages, questions):
    qa = make_backend("hf-qa", str(tiny_models.build_bert_qa(tmp_path / "qa")), max_input_tokens=64)
    graded = Grader(qa, [get_prompt(EXTRACT)], items=questions).grade_chunk(passages[:1])
    for p in graded[0].paragraphs:
        (rec,) = p.exam_grades
        assert all(a == "" or a in p.text for _, a in rec.answers)
        assert rec.llm_options["decoding"] == "span"


class BrokenBackend:
    """A backend whose model always fails (out of memory, say)."""

    name, model = "broken", "broken-model"

    def options(self):
        return {}

    def generate(self, prompts):
        raise RuntimeError("CUDA out of memory")


def test_failures_are_counted_and_leave_no_record(tmp_path, passages, questions):
    grader = Grader(BrokenBackend(), [get_prompt(EXTRACT)], items=questions)
    stats = grade_file(grader, passages, tmp_path / "out.jsonl", [TINY / "queries.tsv"])
    assert stats.failures == stats.pairs > 0
    assert "RuntimeError: CUDA out of memory" in stats.errors[0]
    assert (tmp_path / "out.jsonl.partial").exists()  # kept: a rerun grades the failed queries
    assert "exam_grades" not in (tmp_path / "out.jsonl").read_text()
