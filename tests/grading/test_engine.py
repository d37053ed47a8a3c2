"""The grading engine in-process, on tiny random models: record format, regrading, cache, fitting,
failures that belong to one pair."""

from __future__ import annotations

import json

import pytest

from helpers import BANKS, TINY
from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList
from rubric.data.queries import read_queries
from rubric.grading.engine import Engine, items_by_query
from rubric.grading.runner import grade_file
from rubric.llm.base import Answer, Failure, Request, TextGenerator, deliver
from rubric.llm.cache import ResponseCache
from rubric.llm.fit import fit_prompts
from rubric.llm.registry import make_backend
from rubric.prompting.parse import get_parser
from rubric.prompting.prompts import get_prompt

ORIGINAL_KEY_ORDER = ["correctAnswered", "wrongAnswered", "answers", "llm", "llm_options", "exam_ratio"]
ORIGINAL_KEY_ORDER.append("prompt_info")
SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
EXTRACT = "QuestionCompleteConciseUnanswerablePromptWithChoices"


@pytest.fixture(scope="module")
def t5(t5_dir):
    return make_backend("hf-seq2seq", str(t5_dir), max_new_tokens=4, max_input_tokens=160)


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
    return items_by_query(read_bank(BANKS / "questions.jsonl"))


def test_exam_records_are_written_like_the_original_tool(t5, passages, questions):
    grader = Engine(t5, [get_prompt(SELF), get_prompt(EXTRACT)], items=questions)
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
    first = Engine(t5, [get_prompt(SELF)], items=questions).grade_chunk(passages)
    both = Engine(t5, [get_prompt(EXTRACT)], items=questions).grade_chunk(first)
    assert [g.prompt_class for g in both[0].paragraphs[0].exam_grades] == [SELF, EXTRACT]
    again = Engine(t5, [get_prompt(SELF)], items=questions).grade_chunk(both)
    assert [g.prompt_class for g in again[0].paragraphs[0].exam_grades] == [SELF, EXTRACT]
    assert again[0].to_json() == both[0].to_json()


def test_cache_answers_a_second_run_completely(tmp_path, t5, passages, questions):
    cache = ResponseCache(tmp_path / "c.sqlite")
    prompts = [get_prompt(SELF), get_prompt(EXTRACT)]
    one = Engine(t5, prompts, items=questions, cache=cache)
    stats1 = grade_file(one, passages, tmp_path / "a.jsonl.gz", [TINY / "queries.tsv"])
    assert stats1.cached == 0 and stats1.pairs > 0
    two = Engine(t5, prompts, items=questions, cache=cache)
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
    assert "Question: why is the sky blue" in fitted.user and fitted.system is None
    cut = fitted.user.split("Context: ", 1)[1]
    assert long_context.startswith(cut) and 0 < len(cut) < len(long_context)
    short = render("bees")
    assert fit_prompts(t5, [(render, "bees")], "be brief") == [Request(short, "be brief")]


def test_direct_prompts_fill_grades(gpt2_dir, passages):
    gpt2 = make_backend("hf-causal", str(gpt2_dir), max_new_tokens=3)
    queries = read_queries(TINY / "queries.tsv")
    graded = Engine(gpt2, [get_prompt("Sun"), get_prompt("Thomas")], query_texts=queries).grade_chunk(
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


def test_pair_graders_get_item_and_passage_text(qa_dir, passages, questions):
    qa = make_backend("hf-qa", str(qa_dir), max_input_tokens=64)
    graded = Engine(qa, [get_prompt(EXTRACT)], items=questions).grade_chunk(passages[:1])
    for p in graded[0].paragraphs:
        (rec,) = p.exam_grades
        assert all(a == "" or a in p.text for _, a in rec.answers)
        assert rec.llm_options["decoding"] == "span"


class Flaky(TextGenerator):
    """A backend whose model fails on some prompts: those that contain every string of ``poison``
    always (a 400: asking again cannot help), those that contain ``hiccup`` the first time only."""

    name, supports_system = "flaky", False

    def __init__(self, poison: tuple[str, ...] = ("\x00never",), hiccup: str = "\x00never"):
        super().__init__("flaky-model")
        self.poison, self.hiccup, self.asked = poison, hiccup, []

    def options(self):
        return {}

    def poisoned(self, text: str) -> bool:
        return all(p in text for p in self.poison)

    def generate(self, requests, on_results=None):
        results = []
        for r in requests:
            self.asked.append(r.user)
            if self.poisoned(r.user):
                results.append(Failure("HTTP 400 (bad request)", retryable=False))
            elif self.hiccup in r.user and self.asked.count(r.user) == 1:
                results.append(Failure("HTTP 500"))
            else:
                results.append(Answer("unanswerable" if "honey" in r.user else "blue light"))
        deliver(on_results, list(enumerate(results)))
        return results


def test_a_failing_pair_fails_alone_and_is_listed(tmp_path, passages, questions):
    """One prompt that always fails among 72: 71 graded and cached, the pair listed with its cause;
    a prompt that failed once is asked again and graded; the rerun asks only the failed prompt."""
    query, passage = passages[0], passages[0].paragraphs[2]
    item = questions[query.queryId][1]
    flaky = Flaky(poison=(item.question_text, passage.text[:40]), hiccup=passages[1].paragraphs[0].text[:40])
    cache = ResponseCache(tmp_path / "c.sqlite")
    prompts = [get_prompt(EXTRACT)]
    stats = grade_file(
        Engine(flaky, prompts, items=questions, cache=cache), passages, tmp_path / "o.jsonl", []
    )
    assert (stats.pairs, stats.failures) == (72, 1)
    (failed,) = stats.failed
    assert (failed.query, failed.passage, failed.item, failed.prompt, failed.cause) == (
        query.queryId, passage.paragraph_id, item.item_id, EXTRACT, "HTTP 400 (bad request)"
    )  # fmt: skip
    assert sum(flaky.poisoned(a) for a in flaky.asked) == 1  # a 400 is not asked again
    hiccups = [a for a in flaky.asked if flaky.hiccup in a]
    assert len(hiccups) == 2 * len(set(hiccups))  # the 500s were asked once more, and answered
    assert len(cache) == 71  # every other answer of the batch is kept
    out = [json.loads(line) for line in (tmp_path / "o.jsonl").read_text().splitlines()]
    without = [(qid, p["paragraph_id"]) for qid, ps in out for p in ps if not p.get("exam_grades")]
    assert without == [(query.queryId, passage.paragraph_id)]  # only the failed pair's passage lacks it
    assert (tmp_path / "o.jsonl.partial").exists()
    # the rerun sends exactly the failed prompt: the other queries resume, the rest is cached
    flaky.asked.clear()
    again = grade_file(
        Engine(flaky, prompts, items=questions, cache=cache), passages, tmp_path / "o.jsonl", []
    )
    assert again.resumed_queries == 2 and again.failures == 1
    assert len(flaky.asked) == 1 and flaky.poisoned(flaky.asked[0])


class Broken(TextGenerator):
    """A backend that breaks the contract: it raises for a whole call (its model crashed)."""

    name, supports_system = "broken", False

    def options(self):
        return {}

    def generate(self, requests, on_results=None):
        raise RuntimeError("CUDA out of memory")


def test_a_backend_that_raises_fails_its_pairs_with_the_cause(tmp_path, passages, questions):
    engine = Engine(Broken("broken-model"), [get_prompt(EXTRACT)], items=questions)
    stats = grade_file(engine, passages, tmp_path / "out.jsonl", [TINY / "queries.tsv"])
    assert stats.failures == stats.pairs > 0
    assert {f.cause for f in stats.failed} == {"RuntimeError: CUDA out of memory"}
    assert (tmp_path / "out.jsonl.partial").exists()  # kept: a rerun grades the failed queries
    assert "exam_grades" not in (tmp_path / "out.jsonl").read_text()


class Dying(TextGenerator):
    """Answers the first ``n`` requests, reports them, then the process 'dies' (SystemExit)."""

    name, supports_system = "dying", False

    def __init__(self, n: int):
        super().__init__("dying-model")
        self.n = n

    def options(self):
        return {}

    def generate(self, requests, on_results=None):
        for i in range(min(self.n, len(requests))):
            deliver(on_results, [(i, Answer(f"answer {i}"))])
        raise SystemExit(137)


def test_answers_are_cached_as_they_arrive_not_when_the_call_returns(tmp_path, passages, questions):
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(SystemExit):
        Engine(Dying(7), [get_prompt(EXTRACT)], items=questions, cache=cache).grade_chunk(passages)
    assert len(cache) == 7
