"""The library side of the LLM commands: settings checked and turned into a backend, outcomes
that list failures, the LLM summary line."""

from __future__ import annotations

from pathlib import Path

import pytest

from rubric.errors import UserError
from rubric.llm.base import BackendStats
from rubric.llm.cache import ResponseCache
from rubric.llm.openai_chat import OpenAIChat
from rubric.llm.settings import ApiSettings, ChatSettings, LocalSettings
from rubric.outcome import Outcome, failure_lines

RETRY = "re-run the same command to retry them (answered prompts come from the cache)"


def test_no_failures_no_lines():
    assert failure_lines([], "query") == []
    assert Outcome(["wrote 3 banks"]).lines() == ["wrote 3 banks"]


def test_failures_are_listed_first_twenty_then_counted():
    failures = [f"q{i}: no answer" for i in range(25)]
    lines = Outcome(["wrote 0 banks", "LLM m: ..."], failures, "query").lines()
    assert lines[:2] == ["wrote 0 banks", "LLM m: ..."]
    assert lines[2:22] == [f"  failed: q{i}: no answer" for i in range(20)]
    assert lines[22] == "  ... and 5 more"
    assert lines[23] == f"rubric: 25 queries failed and are missing or unlabelled in the output; {RETRY}"
    assert len(lines) == 24
    few = failure_lines(["a", "b"], "pair")
    assert few == [
        "  failed: a",
        "  failed: b",
        f"rubric: 2 pairs failed and are missing or unlabelled in the output; {RETRY}",
    ]


@pytest.mark.parametrize(
    ("n", "what", "said"),
    [
        (1, "query", "1 query failed and is"),
        (2, "query", "2 queries failed and are"),
        (1, "LLM call", "1 LLM call failed and is"),
        (3, "assignment batch", "3 assignment batches failed and are"),
        (1, "prompt", "1 prompt failed and is"),
    ],
)
def test_one_failure_is_said_in_the_singular(n, what, said):
    last = failure_lines([f"f{i}" for i in range(n)], what)[-1]
    assert last.startswith(f"rubric: {said} missing or unlabelled in the output; re-run the same command")
    assert last.endswith(f"retry {'it' if n == 1 else 'them'} (answered prompts come from the cache)")


def test_stats_summary_counts_everything():
    stats = BackendStats(prompts=12, cached=4, retries=3, failures=1)
    assert stats.summary("gpt-4o") == "LLM gpt-4o: 12 prompts, 4 from cache, 3 retries, 1 failed"


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        (ChatSettings("m", ApiSettings(concurrency=0)), "^concurrency: must be at least 1, got 0"),
        (ChatSettings("m", ApiSettings(timeout=0)), "^timeout: must be a positive number of seconds"),
        (ChatSettings("m", ApiSettings(), temperature=2.5), "^temperature: must be 0 to 2, got 2.5"),
        (
            ChatSettings("m", ApiSettings(), local=LocalSettings(max_new_tokens=0)),
            "^max_new_tokens: must be at least 1, got 0",
        ),  # fmt: skip
        (ChatSettings("m", ApiSettings(), backend="nope"), "^backend: unknown backend 'nope'"),
        (ChatSettings("m", ApiSettings(), backend="hf-qa"), "^backend hf-qa: writes no text"),
        (ChatSettings("m", ApiSettings(), backend="embedding"), "^backend embedding: writes no text"),
        (
            ChatSettings("m", ApiSettings(), backend="hf-causal", temperature=0.5),
            "^temperature 0.5: the hf-causal backend decodes greedily",
        ),  # fmt: skip
        (ChatSettings("m", ApiSettings(), parse_retries=-1), "^parse_retries: must be at least 0, got -1"),
    ],
)
def test_bad_settings_name_their_parameter(settings, message):
    with pytest.raises(UserError, match=message):
        settings.check()
    with pytest.raises(UserError, match=message):
        settings.build()  # checked before the cache is opened or the key read


def test_backend_takes_every_setting_and_opens_the_cache(tmp_path: Path):
    key = tmp_path / "key"
    key.write_text("sk-test-key-123456\n")
    api = ApiSettings(base_url="http://127.0.0.1:9/v1", api_key_file=key, concurrency=3, rpm=60.0,
                      max_retries=2, retry_base=0.5, timeout=7.0)  # fmt: skip
    settings = ChatSettings(
        "m", api, temperature=0.5, local=LocalSettings(max_new_tokens=64), cache=tmp_path / "c.sqlite"
    )
    backend, cache = settings.build()
    assert isinstance(backend, OpenAIChat) and isinstance(cache, ResponseCache)
    assert (tmp_path / "c.sqlite").exists()
    assert (backend.model, backend.base_url, backend.concurrency, backend.rpm) == ("m", api.base_url, 3, 60.0)
    assert (backend.max_retries, backend.retry_base, backend.timeout) == (2, 0.5, 7.0)
    assert backend.options() == {"temperature": 0.5, "max_tokens": 64}
    cache.close()
    _, none = ChatSettings("m", ApiSettings(), no_cache=True).build()
    assert none is None


def test_a_missing_key_file_fails_after_the_cache_opened(tmp_path: Path):
    settings = ChatSettings("m", ApiSettings(api_key_file=tmp_path / "nope"), cache=tmp_path / "c.sqlite")
    with pytest.raises(UserError, match="^api_key_file .*nope: cannot read"):
        settings.build()
    assert (tmp_path / "c.sqlite").exists()  # a file that is no cache would have failed first


def test_local_settings_as_backend_keywords():
    assert LocalSettings().backend_options() == {
        "attention": None, "compile": None, "device": "auto", "dtype": "auto", "batch_size": 0,
        "token_budget": 0, "max_input_tokens": 512, "max_new_tokens": 32, "num_beams": 1,
        "compute_type": None, "threads": None, "api_tokenizer": None,
    }  # fmt: skip
    # the list commands' answer length when --max-new-tokens is not given (grading: 32)
    assert LocalSettings().backend_options(None)["max_new_tokens"] is None
    chosen = LocalSettings(device="cpu", attention="sdpa", compile_encoder=True).backend_options()
    assert (chosen["device"], chosen["attention"], chosen["compile"]) == ("cpu", "sdpa", True)
