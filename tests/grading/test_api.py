"""`rubric.grade`, the Python API: the command's job in process, on paths or loaded objects."""

from __future__ import annotations

import gzip
import json
import os
import signal
import threading

import pytest

import rubric
from helpers import BANKS, TINY
from helpers.openai_server import scripted_answer, serve
from rubric.data.collection import load_texts
from rubric.data.jsonl import read_bank, read_passages, write_passages
from rubric.data.models import FullParagraphData, QueryWithFullParagraphList
from rubric.errors import UserError

SELF = "QuestionSelfRatedUnanswerablePromptWithChoices"
BANK = BANKS / "questions.jsonl"


@pytest.fixture(scope="module")
def setup(tmp_path_factory, t5_dir):
    root = tmp_path_factory.mktemp("api")
    t5 = t5_dir
    texts = load_texts([TINY / "collection.tsv"])
    pool = root / "passages.jsonl.gz"
    write_passages(
        pool,
        [
            QueryWithFullParagraphList(
                queryId=qid,
                paragraphs=[FullParagraphData(paragraph_id=d, text=t) for d, t in sorted(texts.items())],
            )
            for qid in ("q1", "q2", "q3")
        ],
    )
    return root, t5, pool


def test_grade_equals_the_command_on_paths_and_on_loaded_objects(cli, setup):
    root, t5, pool = setup
    out = root / "cli.jsonl.gz"
    r = cli("grade", pool, "--bank", BANK, "-p", SELF, "--model", t5, "--device", "cpu", "--no-cache",
            "-o", out)  # fmt: skip
    assert r.returncode == 0, r.stderr
    written = [json.loads(line) for line in gzip.decompress(out.read_bytes()).decode().splitlines()]
    graded = rubric.grade(pool, BANK, prompts=SELF, model=str(t5), device="cpu", use_cache=False)
    assert [q.to_json() for q in graded.queries] == written
    assert graded.stats.pairs > 0 and graded.stats.failures == 0 and graded.stats.failed == []
    assert graded.outcome is not None and graded.outcome.failures == []
    again = rubric.grade(
        list(read_passages(pool)), list(read_bank(BANK)), prompts=[SELF], model=str(t5), device="cpu",
        cache=root / "loaded.sqlite", output=root / "api.jsonl.gz",
    )  # fmt: skip
    assert [q.to_json() for q in again.queries] == written
    assert gzip.decompress((root / "api.jsonl.gz").read_bytes()) == gzip.decompress(out.read_bytes())
    graded.write(root / "written.jsonl.gz")
    assert gzip.decompress((root / "written.jsonl.gz").read_bytes()) == gzip.decompress(out.read_bytes())


def test_direct_grading_and_the_cache(setup):
    root, t5, pool = setup
    cache = root / "cache.sqlite"
    queries = {"q1": "how do bees make honey", "q2": "why is the sky blue", "q3": "what causes tides"}
    first = rubric.grade(pool, topics=queries, prompts=["Sun"], model=str(t5), cache=cache, device="cpu")
    assert all(p.grades and p.grades[0].prompt_class == "Sun" for q in first.queries for p in q.paragraphs)
    with pytest.warns(DeprecationWarning, match=r"^queries= is deprecated .* 0\.3\.0; use topics=$"):
        second = rubric.grade(pool, queries=queries, prompts="Sun", model=str(t5), cache=cache, device="cpu")
    assert second.stats.cached == second.stats.pairs == first.stats.pairs
    assert [q.to_json() for q in second.queries] == [q.to_json() for q in first.queries]
    rows = list(second.rows())  # one direct grade per passage, as the flat table shows it
    assert len(rows) == sum(len(q.paragraphs) for q in second.queries)
    assert {(r.item, r.prompt_class, r.prompt_type) for r in rows} == {(None, "Sun", "direct")}


def test_queries_selects_query_ids_as_in_every_verb_and_query_is_its_old_name(setup):
    """`queries=` is a list of query ids as in every other verb (`query=` warns); the result of
    one `rubric.grade` (or `rubric.pool`) is the passages of the next."""
    _, t5, pool = setup
    topics = {"q1": "how do bees make honey", "q2": "why is the sky blue", "q3": "what causes tides"}
    some = rubric.grade(pool, topics=topics, queries=["q2"], prompts="Sun", model=str(t5), device="cpu")
    assert [q.queryId for q in some.queries] == ["q2"]
    with pytest.warns(DeprecationWarning, match=r"^query= is deprecated .* 0\.3\.0; use queries=$"):
        old = rubric.grade(pool, topics=topics, query=["q2"], prompts="Sun", model=str(t5), device="cpu")
    assert [q.to_json() for q in old.queries] == [q.to_json() for q in some.queries]
    got: list[str] = []  # the deprecated callback: it receives the logger's messages meanwhile
    with pytest.warns(
        DeprecationWarning, match=r"^report= is deprecated .* 0\.3\.0; notes go to the 'rubric' logger$"
    ):
        rubric.grade(
            pool, topics=topics, queries=["q2", "q9"], prompts="Sun", model=str(t5), report=got.append
        )
    assert got == [f"--query/--queries: query q9 is not in {pool}"]
    again = rubric.grade(some, BANK, prompts=SELF, model=str(t5), device="cpu")  # a Graded as passages
    assert [q.queryId for q in again.queries] == ["q2"]
    assert {r.prompt_class for r in again.rows()} == {"Sun", SELF}


def test_errors_name_parameters_and_bad_settings_are_type_errors(setup):
    _, t5, pool = setup
    with pytest.raises(UserError, match="^checkpoint_pairs: must be at least 1"):
        rubric.grade(pool, BANK, prompts=SELF, model=str(t5), checkpoint_pairs=0)
    with pytest.raises(UserError, match="^concurrency: must be at least 1"):
        rubric.grade(pool, BANK, prompts=SELF, backend="openai", model="m", concurrency=0)
    with pytest.raises(UserError, match="^bank, topics: give one"):
        rubric.grade(pool, prompts="Sun")
    with pytest.raises(TypeError, match="unexpected keyword arguments: no_such_setting"):
        rubric.grade(pool, BANK, prompts=SELF, no_such_setting=1)


@pytest.fixture
def sigint_raises():
    """Ctrl-C as in a notebook: SIGINT raises KeyboardInterrupt in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only, and the test does not run there")
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_an_interrupted_grade_asks_again_only_what_had_not_arrived(cli, tmp_path, sigint_raises):
    """`rubric.grade` runs the command's job: interrupted (Ctrl-C) after K answers, the same call
    asks the server only for the answers that had not arrived (the finished queries resume from
    the partial file, the rest of the answers come from the response cache); a second call on
    the same output meanwhile is refused by the output lock; the result is the command's file."""
    passages = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "-q", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", "-o", passages)  # fmt: skip
    assert r.returncode == 0, r.stderr
    out, cache = tmp_path / "graded.jsonl.gz", tmp_path / "cache.sqlite"
    arrived, stalled, release = [], threading.Event(), threading.Event()
    first = next(iter(read_passages(passages)))
    k = len(first.paragraphs) * 3 + 2  # the first query's pairs (q1: 3 questions, checkpointed alone) and 2
    refused: list[str] = []
    lock = threading.Lock()

    def answer(user: str, system: str | None) -> str:
        with lock:
            stall = len(arrived) >= k and not release.is_set()
            if not stall:
                arrived.append(user)
        if stall:
            stalled.set()
            release.wait(60)
        return scripted_answer(user, system)

    with serve(answer=answer) as srv:
        settings = dict(prompts=SELF, backend="openai", model="test-model", base_url=srv.url, concurrency=1,
                        max_retries=0, cache=cache, output=out, checkpoint_pairs=1)  # fmt: skip

        def interrupt() -> None:
            if not stalled.wait(60):
                return  # never stalled: no Ctrl-C that could land outside the call (the test fails)
            try:
                rubric.grade(passages, BANK, **settings)
            except UserError as e:
                refused.append(str(e))
            os.kill(os.getpid(), signal.SIGINT)

        helper = threading.Thread(target=interrupt)
        helper.start()
        with pytest.raises(KeyboardInterrupt):
            rubric.grade(passages, BANK, **settings)
        helper.join()
        release.set()
        assert len(arrived) == k and len(srv.requests) == k + 1  # K answered, one asked when stopped
        assert refused and refused[0].startswith(
            f"output {out}: another `rubric grade` is writing this output"
        )
        assert not out.exists() and out.with_name(out.name + ".partial").exists()
        before = len(srv.requests)
        graded = rubric.grade(passages, BANK, **settings)
        asked = len(srv.requests) - before
        command = tmp_path / "command.jsonl.gz"
        r = cli("grade", passages, "--bank", BANK, "-p", SELF, "--backend", "openai", "-m", "test-model",
                "--base-url", srv.url, "--no-cache", "-o", command)  # fmt: skip
        assert r.returncode == 0, r.stderr
        total = len(srv.requests) - before - asked  # the command asks every pair once
    assert asked == total - k
    assert graded.stats.resumed_queries >= 1 and graded.stats.cached >= 1
    assert graded.outcome is not None and graded.outcome.failures == []
    assert gzip.decompress(out.read_bytes()) == gzip.decompress(command.read_bytes())
    assert (
        not out.with_name(out.name + ".partial").exists() and not out.with_name(out.name + ".lock").exists()
    )


def test_the_command_reads_each_input_once_before_grading(cli, tmp_path, monkeypatch, openai_server):
    """`rubric grade` with a verify prompt and a query selection: each prompt (the verify prompt
    and its extraction prompt), the bank and the backend's registry entry are loaded once; the
    passages file is read once before the model loads (pairs, texts, selected queries) and once
    while grading."""
    import rubric.data.jsonl
    import rubric.grading.job
    import rubric.grading.verification
    import rubric.llm.registry

    calls: dict[str, int] = {}

    def counted(module, name):
        original = getattr(module, name)

        def call(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return original(*args, **kwargs)

        monkeypatch.setattr(module, name, call)

    passages = tmp_path / "passages.jsonl.gz"
    r = cli("convert", "runs", "-q", TINY / "queries.tsv", "-C", TINY / "collection.tsv",
            "--qrels", TINY / "qrels.txt", TINY / "run.alpha", "-o", passages)  # fmt: skip
    assert r.returncode == 0, r.stderr
    for module, name in [
        (rubric.grading.job, "get_prompt"),
        (rubric.grading.verification, "get_prompt"),
        (rubric.data.jsonl, "read_passages"),
        (rubric.data.jsonl, "read_bank"),
        (rubric.llm.registry, "backend_class"),
    ]:
        counted(module, name)
    r = cli("grade", passages, "--bank", BANK, "-p", "QuestionCompleteConcisePromptWithT5VerifiedAnswerKey2",
            "--backend", "openai", "-m", "test-model", "--base-url", openai_server.url, "--no-cache",
            "--query", "q1", "--query", "q2", "-o", tmp_path / "graded.jsonl.gz")  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert calls == {"get_prompt": 2, "read_bank": 1, "backend_class": 1, "read_passages": 2}
