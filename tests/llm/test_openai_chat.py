"""The OpenAI-compatible backend against a real HTTP server on 127.0.0.1 (the real `openai` client).

Covers retries (429 with Retry-After, 500, timeouts) and their counts, failures that are
recorded and not cached, the sqlite cache, the requests-per-minute pacing, the API key header,
logprob ratings and the fallback for servers without logprobs.
"""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from rubric.errors import UserError
from rubric.llm.cache import ResponseCache
from rubric.llm.openai_chat import ChatPrompt, LLMFailure, OpenAIChat

serve = runpy.run_path(str(Path(__file__).parents[1] / "openai_server.py"))["serve"]

GEN = "Break the query '{}' into concise questions. Generate 2 concise questions."


def backend(url, **kw):
    kw.setdefault("retry_base", 0.01)
    return OpenAIChat(model="test-model", base_url=url, **kw)


def test_answers_in_order_and_retries_429_and_500_are_counted():
    with serve() as srv:
        b = backend(srv.url)
        prompts = [GEN.format("plain"), GEN.format("[429] throttled"), GEN.format("[500] broken")]
        answers = b.generate(prompts)
        assert [a.count("Question") for a in answers] == [2, 2, 2]
        assert "throttled" in answers[1] and "broken" in answers[2]
        assert b.stats.retries == 2 and b.stats.failures == 0
        assert len(srv.requests) == 5


def test_timeout_is_retried():
    with serve(slow=2.0) as srv:
        b = backend(srv.url, timeout=0.5)
        assert "slowly" in b.generate([GEN.format("[slow] slowly")])[0]
        assert b.stats.retries == 1


def test_failure_after_retries_is_recorded_not_cached_and_not_silent(tmp_path):
    with serve(fail_rate=1.0) as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        b = backend(srv.url, max_retries=2, cache=cache)
        assert b.complete([GEN.format("a")]) == [None]
        assert b.stats.failures == 1 and b.stats.retries == 2 and len(srv.requests) == 3
        assert b.stats.errors[0] in ("HTTP 429", "HTTP 500")
        assert len(cache) == 0
        with pytest.raises(LLMFailure, match="1 of 1 prompts failed"):
            b.generate([GEN.format("a")])


def test_cache_answers_repeated_prompts_without_requests(tmp_path):
    with serve() as srv:
        cache = ResponseCache(tmp_path / "c.sqlite")
        first = backend(srv.url, cache=cache).generate([GEN.format("x"), GEN.format("y")])
        again = backend(srv.url, cache=cache)
        assert again.generate([GEN.format("y"), GEN.format("x")]) == first[::-1]
        assert again.stats.cached == 2 and len(srv.requests) == 2
        # other decoding options are other cache entries
        backend(srv.url, cache=cache, temperature=0.7).generate([GEN.format("x")])
        assert len(srv.requests) == 3


def test_system_message_and_api_key_are_sent(tmp_path):
    key = tmp_path / "key"
    key.write_text("sk-test-key\n")
    with serve(api_key="sk-test-key") as srv:
        b = OpenAIChat.from_options(model="m", base_url=srv.url, api_key_file=key)
        b.generate([ChatPrompt(GEN.format("s"), system="You are a test.")])
        req = srv.requests[0]
        assert req["auth"] == "Bearer sk-test-key"
        assert req["body"]["messages"][0] == {"role": "system", "content": "You are a test."}
        assert req["body"]["temperature"] == 0.0


def test_wrong_key_and_unknown_model_are_user_errors(tmp_path):
    with serve(api_key="right") as srv:
        with pytest.raises(UserError, match="authentication failed") as e:
            backend(srv.url, api_key="wrong").generate(["x"])
        assert "wrong" not in str(e.value)
    with serve() as srv:
        with pytest.raises(UserError, match="--model missing-model"):
            OpenAIChat(model="missing-model", base_url=srv.url).generate(["x"])


def test_rpm_spaces_request_starts():
    with serve() as srv:
        b = backend(srv.url, rpm=600, concurrency=4)  # one request per 0.1 s
        b.generate([GEN.format(str(i)) for i in range(4)])
    assert len(srv.requests) == 4
    arrivals = sorted(r["time"] for r in srv.requests)
    gaps = [b - a for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps) >= 0.05 and arrivals[-1] - arrivals[0] >= 0.25, gaps  # 0.1 s apart, minus jitter


def test_rate_reads_choice_probabilities_from_logprobs(tmp_path):
    def digit(user, system):
        return "4"

    with serve(answer=digit) as srv:
        r = backend(srv.url).rate(["rate this"], ["0", "1", "2", "3", "4", "5"])[0]
        assert r.answer == "4"
        assert max(r.probabilities, key=r.probabilities.get) == "4"
        assert srv.requests[0]["body"]["logprobs"] is True
    with serve(answer=digit, logprobs=False) as srv:
        b = backend(srv.url)
        r = b.rate(["rate this"], ["0", "1", "2", "3", "4", "5"])[0]
        assert r == type(r)(answer="4", probabilities=None)
        assert b.stats.failures == 0


def test_concurrency_bounds_requests_in_flight():
    def slow(user, system):
        import time

        time.sleep(0.05)
        return "ok"

    with serve(answer=slow) as srv:
        backend(srv.url, concurrency=3).generate([f"p{i}" for i in range(12)])
        assert 2 <= srv.max_in_flight <= 3
    with serve(answer=slow) as srv:
        backend(srv.url, concurrency=1).generate([f"p{i}" for i in range(4)])
        assert srv.max_in_flight == 1


def test_from_options_ignores_local_options_and_rejects_unknown_ones(tmp_path):
    b = OpenAIChat.from_options(
        model="m", base_url="http://127.0.0.1:9/v1", cache=tmp_path / "c.sqlite", device=None
    )
    assert b.options() == {"temperature": 0.0} and len(b.cache) == 0
    # the grading CLI passes every backend the local-model options: a server ignores them ...
    b = OpenAIChat.from_options(
        model="m", device="cuda", batch_size=8, max_input_tokens=512, max_new_tokens=7
    )
    assert b.max_tokens == 7
    # ... but refuses what it cannot do, and options nobody knows
    with pytest.raises(UserError, match="--num-beams"):
        OpenAIChat.from_options(model="m", num_beams=5)
    with pytest.raises(UserError, match="--top-k: not an option of the openai backend"):
        OpenAIChat.from_options(model="m", top_k=3)
