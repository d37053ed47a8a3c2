"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1 (the real `openai` client).

Covers retries (429 with Retry-After, 500, timeouts) and their counts, failures that belong to one
prompt and are not cached, answers reported as each request completes, the cache layer, the
requests-per-minute pacing, the API key header, logprob ratings and the fallback for servers
without logprobs.
"""

from __future__ import annotations

import time

import pytest

from helpers import openai_server as server
from helpers.openai_server import Fault, serve
from rubric.errors import UserError
from rubric.llm.base import Answer, ChoiceRater, Failure, Request
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.openai_chat import OpenAIChat

GEN = "Break the query '{}' into concise questions. Generate 2 concise questions."


def backend(url, **kw):
    kw.setdefault("retry_base", 0.01)
    return OpenAIChat(model="test-model", base_url=url, **kw)


def asks(*texts: str) -> list[Request]:
    return [Request(t) for t in texts]


def texts(results) -> list[str]:
    assert all(isinstance(r, Answer) for r in results), results
    return [r.text for r in results]


def test_answers_in_order_and_retries_429_and_500_are_counted():
    with serve() as srv:
        b = backend(srv.url)
        assert isinstance(b, ChoiceRater) and b.supports_system
        answers = texts(
            b.generate(asks(GEN.format("plain"), GEN.format("[429] throttled"), GEN.format("[500] x")))
        )
        assert [a.count("Question") for a in answers] == [2, 2, 2]
        assert "throttled" in answers[1] and "x" in answers[2]
        assert b.stats.retries == 2 and len(srv.requests) == 5


def test_timeout_is_retried():
    with serve(slow=2.0) as srv:
        b = backend(srv.url, timeout=0.5)
        assert "slowly" in texts(b.generate(asks(GEN.format("[slow] slowly"))))[0]
        assert b.stats.retries == 1


def test_failure_after_retries_is_recorded_not_cached_and_not_silent(tmp_path):
    with serve(fail_rate=1.0) as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        b = backend(srv.url, max_retries=2)
        (got,) = CachedBackend(b, cache).generate(asks(GEN.format("a")))
        assert (
            isinstance(got, Failure)
            and got.cause in ("HTTP 429", "HTTP 500 (Error code: 500 - ...")[:1]
            or (got.cause.startswith("HTTP 500"))
        )
        assert b.stats.failures == 1 and b.stats.retries == 2 and len(srv.requests) == 3
        assert len(cache) == 0


def test_one_failing_prompt_fails_alone_and_each_answer_is_reported_when_it_arrives(tmp_path):
    """A 400 on one prompt (not retried) among 20, one prompt held at the server until the other 19
    results have been reported: so each answer is reported -- and cached -- as its request
    completes, not when the call returns (no timing involved)."""
    import threading

    gate = threading.Event()
    seen: list[int] = []
    cached_when_released: list[int] = []

    def answer(user, system):
        if "GATE" in user:
            return "released" if gate.wait(60) else "never released"
        return server.scripted_answer(user, system)

    def arrived(batch):
        seen.extend(i for i, _ in batch)
        if len(seen) == 19 and not gate.is_set():
            cached_when_released.append(len(ResponseCache(tmp_path / "c.sqlite")))  # another connection
            gate.set()

    with serve(answer=answer, faults={"POISON": Fault(400)}) as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        b = backend(srv.url, concurrency=20)
        prompts = [GEN.format(f"q{i}") for i in range(18)] + [GEN.format("POISON"), "GATE"]
        results = CachedBackend(b, cache).generate(asks(*prompts), arrived)
        assert results[19] == Answer("released") and seen[-1] == 19
        assert cached_when_released == [18]  # committed before the call returned
        assert [type(r).__name__ for r in results].count("Answer") == 19
        assert results[18] == Failure("HTTP 400 (scripted failure)", retryable=False)
        assert sum("POISON" in r["body"]["messages"][0]["content"] for r in srv.requests) == 1
        assert len(cache) == 19


@pytest.mark.parametrize("kind", sorted(server.HOSTILE_REPLIES))
def test_a_reply_that_is_not_a_chat_completion_is_a_retried_failure_of_that_prompt(kind):
    body = server.HOSTILE_REPLIES[kind]
    with serve(
        faults={"BAD": Fault(200, body, "text/html" if b"<html" in body else "application/json")}
    ) as srv:
        b = backend(srv.url, max_retries=1)
        good, bad = b.generate(asks(GEN.format("fine"), GEN.format("BAD")))
        assert isinstance(good, Answer) and "fine" in good.text
        assert isinstance(bad, Failure) and bad.cause.startswith("unreadable reply ("), bad
        assert bad.retryable and b.stats.retries == 1
        assert sum("BAD" in r["body"]["messages"][0]["content"] for r in srv.requests) == 2
    once = Fault(200, body, times=1)  # a reply that is bad once is answered on the retry
    with serve(faults={"BAD": once}) as srv:
        assert "BAD" in texts(backend(srv.url, max_retries=1).generate(asks(GEN.format("BAD"))))[0]


def test_the_api_key_is_redacted_from_everything_the_server_sends_back(tmp_path):
    key = "sk-secret-echo-4711"

    def echo(user, system):
        return f"You sent {key}"

    faults = {"ECHO": Fault(500, echo_auth=True), "MISSING": Fault(404, echo_auth=True)}
    with serve(api_key=key, answer=echo, faults=faults) as srv:
        b = backend(srv.url, api_key=key, max_retries=0)
        answer, failed = b.generate(asks("hello", "ECHO"))
        assert answer.text == "You sent [redacted]"
        assert isinstance(failed, Failure) and "[redacted]" in failed.cause and key not in failed.cause
        assert srv.requests[-1]["auth"] == f"Bearer {key}"  # the key was sent, and echoed
        with pytest.raises(UserError) as e:
            b.generate(asks("MISSING"))
        assert "404" in str(e.value) and key not in str(e.value) and "[redacted]" in str(e.value)


def test_cache_answers_repeated_prompts_without_requests(tmp_path):
    with serve() as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        first = texts(CachedBackend(backend(srv.url), cache).generate(asks(GEN.format("x"), GEN.format("y"))))
        again = backend(srv.url)
        assert (
            texts(CachedBackend(again, cache).generate(asks(GEN.format("y"), GEN.format("x")))) == first[::-1]
        )
        assert again.stats.cached == 2 and len(srv.requests) == 2
        # other decoding options are other cache entries
        CachedBackend(backend(srv.url, temperature=0.7), cache).generate(asks(GEN.format("x")))
        assert len(srv.requests) == 3


def test_values_of_the_old_openai_cache_still_read(tmp_path):
    """Earlier releases stored the backend's answers as 'answer\\x1f{probabilities}' strings."""
    from rubric.llm.cache import cache_key

    cache = ResponseCache(tmp_path / "c.sqlite")
    b = backend("http://127.0.0.1:9/v1")  # nothing listens: every answer must come from the cache
    choices = ["0", "1"]
    cache.put_many(
        [
            (cache_key("openai", "test-model", b.options(), "old", "generate"), "plain old answer"),
            (cache_key("openai", "test-model", b.options(), "r", "rate:0,1"), 'x1\x1f{"0": 0.25, "1": 0.75}'),
        ]
    )
    llm = CachedBackend(b, cache)
    assert llm.generate(asks("old")) == [Answer("plain old answer")]
    assert llm.rate(asks("r"), choices) == [Answer("x1", {"0": 0.25, "1": 0.75})]


def test_system_message_and_api_key_are_sent(tmp_path):
    key = tmp_path / "key"
    key.write_text("sk-test-key\n")
    with serve(api_key="sk-test-key") as srv:
        b = OpenAIChat.from_options(model="m", base_url=srv.url, api_key_file=key)
        b.generate([Request(GEN.format("s"), system="You are a test.")])
        req = srv.requests[0]
        assert req["auth"] == "Bearer sk-test-key"
        assert req["body"]["messages"][0] == {"role": "system", "content": "You are a test."}
        assert req["body"]["temperature"] == 0.0


def test_wrong_key_and_unknown_model_are_user_errors(openai_server, tmp_path):
    with serve(api_key="right") as srv:
        with pytest.raises(UserError, match="authentication failed") as e:
            backend(srv.url, api_key="wrong").generate(asks("x"))
        assert "wrong" not in str(e.value)
    srv = openai_server
    with pytest.raises(UserError, match="^model missing-model"):
        OpenAIChat(model="missing-model", base_url=srv.url).generate(asks("x"))


def test_rpm_spaces_request_starts():
    with serve() as srv:
        b = backend(srv.url, rpm=600, concurrency=4)  # one request per 0.1 s
        b.generate(asks(*(GEN.format(str(i)) for i in range(4))))
    assert len(srv.requests) == 4
    arrivals = sorted(r["time"] for r in srv.requests)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps) >= 0.05 and arrivals[-1] - arrivals[0] >= 0.25, gaps  # 0.1 s apart, minus jitter


def test_rate_reads_choice_probabilities_from_logprobs(tmp_path):
    def digit(user, system):
        return "4"

    with serve(answer=digit) as srv:
        (r,) = backend(srv.url).rate(asks("rate this"), ["0", "1", "2", "3", "4", "5"])
        assert r.text == "4"
        assert max(r.probabilities, key=r.probabilities.get) == "4"
        assert set(r.probabilities) == set("012345")
        assert srv.requests[0]["body"]["logprobs"] is True
    with serve(answer=digit, logprobs=False) as srv:
        b = backend(srv.url)
        (r,) = b.rate(asks("rate this"), ["0", "1", "2", "3", "4", "5"])
        assert r == Answer("4", None)
        assert b.stats.retries == 0


def test_concurrency_bounds_requests_in_flight():
    def slow(user, system):
        time.sleep(0.05)
        return "ok"

    with serve(answer=slow) as srv:
        backend(srv.url, concurrency=3).generate(asks(*(f"p{i}" for i in range(12))))
        assert 2 <= srv.max_in_flight <= 3
    with serve(answer=slow) as srv:
        backend(srv.url, concurrency=1).generate(asks(*(f"p{i}" for i in range(4))))
        assert srv.max_in_flight == 1


def test_from_options_ignores_local_options_and_rejects_unknown_ones(tmp_path):
    b = OpenAIChat.from_options(model="m", base_url="http://127.0.0.1:9/v1", device=None)
    assert b.options() == {"temperature": 0.0}
    # the grading CLI passes every backend the local-model options: a server ignores them ...
    b = OpenAIChat.from_options(
        model="m", device="cuda", batch_size=8, max_input_tokens=512, max_new_tokens=7
    )
    assert b.max_tokens == 7
    # ... but refuses what it cannot do, and options nobody knows
    with pytest.raises(UserError, match="^num_beams: "):
        OpenAIChat.from_options(model="m", num_beams=5)
    with pytest.raises(UserError, match="^top_k: not an option of the openai backend"):
        OpenAIChat.from_options(model="m", top_k=3)


@pytest.mark.parametrize(
    "option,value,message",
    [
        ("concurrency", 0, "^concurrency: must be at least 1, got 0"),
        ("rpm", 0, "^rpm: must be a positive number, got 0"),
        ("max_retries", -1, "^max_retries: must be 0 or more, got -1"),
        ("timeout", -1, "^timeout: must be a positive number of seconds, got -1"),
        ("timeout", float("nan"), "^timeout"),
        ("retry_base", -0.5, "^retry_base"),
        ("temperature", 3, "^temperature: must be 0 to 2"),
        ("max_tokens", 0, "^max_tokens: must be at least 1"),
    ],
)
def test_option_ranges_are_user_errors(option, value, message):
    with pytest.raises(UserError, match=message.replace("(", r"\(")):
        OpenAIChat(model="m", **{option: value})


def test_works_inside_a_running_event_loop():
    """A Jupyter cell runs inside an event loop, where ``asyncio.run`` refuses to start another:
    the backend then runs its requests on a loop of its own in a worker thread, and both verbs
    answer as they do outside one (the server sees every request)."""
    import asyncio

    with serve() as srv:
        b = backend(srv.url)

        async def in_a_loop():
            asyncio.get_running_loop()  # we are inside one
            reported: list[int] = []
            answers = b.generate(
                asks(GEN.format("a"), GEN.format("b")), lambda got: reported.extend(i for i, _ in got)
            )
            rated = b.rate(asks("Is it relevant? Answer yes or no."), ["yes", "no"])
            return answers, sorted(reported), rated

        answers, reported, rated = asyncio.run(in_a_loop())
        assert [a.count("Question") for a in texts(answers)] == [2, 2]
        assert reported == [0, 1]
        assert isinstance(rated[0], Answer) and len(srv.requests) == 3
