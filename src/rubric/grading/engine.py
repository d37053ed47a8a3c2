"""The grading engine: plan every (passage, test item) pair -- or (passage, query) for direct
prompts -- of a chunk of queries, ask the model, and hand the answers to the record builders.

Per prompt, the pairs of all queries of a chunk are asked in one call, so a local backend sorts
them by length and batches across passages and queries. Prompts are rendered with the passage
cut by tokens to fit the model (:mod:`rubric.llm.fit`); prompt-free pair graders get the
(item text, passage text) pairs. Every request goes through the cache layer
(:class:`~rubric.llm.cache.CachedBackend`), which asks only what it does not know and stores
each answer as it arrives.

A failure belongs to one pair: the backend answers every other request of the call; a failed
request is asked once more at the end of its call (unless its failure says retrying cannot
help), and if it still fails the pair is recorded (:class:`PairFailure`: query, passage, item,
prompt, cause), counted, and its passage gets no record for that prompt. The file runner keeps
such queries out of the resumable partial file, so a rerun asks again only what failed (the
rest comes from the cache).

Verify prompts grade in two stages (extract, then verify against the answer key, see
:mod:`rubric.grading.verification`); both stages share the cache, the batching and the resume.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.data.models import NuggetItem, QueryWithFullParagraphList, TestBank
from rubric.errors import UserError
from rubric.grading import records
from rubric.grading.verification import VERIFY_KIND, Verdict, answer_prompt, verdict, verification_texts
from rubric.llm.base import (
    Answer,
    Backend,
    ChoiceRater,
    Failure,
    OnResults,
    PairGrader,
    Request,
    Result,
    ScaleGrader,
    TextGenerator,
    TokenCounter,
)
from rubric.llm.cache import CachedBackend, ResponseCache
from rubric.llm.fit import cut_as_original, cuts_as_original, fit_prompts
from rubric.prompting.parse import Parser, get_parser
from rubric.prompting.prompts import Prompt

ITEM_KINDS = ("question", "nugget")


@dataclass(frozen=True)
class PairFailure:
    """A pair that got no grade: where it is and why (the backend's cause)."""

    query: str
    passage: str
    item: str  # the test item's id; "(query)" for direct prompts
    prompt: str
    cause: str

    def __str__(self) -> str:
        return (
            f"query {self.query} passage {self.passage} item {self.item} prompt {self.prompt}: {self.cause}"
        )


@dataclass
class GradeStats:
    """What the end-of-run summary reports; adds up over shards and workers (:meth:`add`)."""

    queries: int = 0  # in the output file (resumed and kept ones included)
    kept_queries: int = 0  # copied through unchanged (in place, not selected)
    pairs: int = 0
    verifications: int = 0  # verification prompts of verify prompts (one per gold answer)
    cached: int = 0
    damaged: int = 0  # cached values that could not be read back, asked again (docs/grading.md)
    fallbacks: int = 0
    failures: int = 0
    resumed_queries: int = 0
    queries_without_items: int = 0
    failed: list[PairFailure] = field(default_factory=list)
    kernels: list[str] = field(default_factory=list)  # each process's backend kernel summary

    def summary(self) -> str:
        return (
            f"{self.pairs} pairs graded, "
            + (f"{self.verifications} answers verified, " if self.verifications else "")
            + f"{self.cached} from cache, "
            + (f"{self.damaged} damaged cache values asked again, " if self.damaged else "")
            + f"{self.fallbacks} parse fallbacks "
            f"(generated to the end), {self.failures} failures"
            + (f", {self.resumed_queries} queries resumed" if self.resumed_queries else "")
            + (f", {self.kept_queries} queries not selected kept as they were" if self.kept_queries else "")
            + (
                f", {self.queries_without_items} queries with no bank items"
                if self.queries_without_items
                else ""
            )
            + "".join(f"\n{line}" for line in dict.fromkeys(self.kernels) if line)
        )

    def add(self, other: GradeStats) -> None:
        """Add another part's counts (a shard, a worker) to these."""
        for name in ("queries", "pairs", "verifications", "cached", "damaged", "fallbacks", "failures"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.resumed_queries += other.resumed_queries
        self.kept_queries += other.kept_queries
        self.queries_without_items += other.queries_without_items
        self.failed.extend(other.failed)
        self.kernels.extend(other.kernels)


@dataclass(frozen=True)
class Pair:
    """One question to the backend: where its grade goes."""

    query: int  # index in the chunk
    passage: int
    prompt: int
    item: int  # index of the item in the query's items (0 for direct prompts)


def items_by_query(banks: Iterable[TestBank]) -> dict[str, list]:
    """All items of each query, facets concatenated in file order."""
    out: dict[str, list] = {}
    for bank in banks:
        out.setdefault(bank.query_id, []).extend(bank.items)
    return out


def check_prompts(
    prompts: Sequence[Prompt],
    *,
    direct: bool,
    items: dict[str, list],
    prompt_files: Sequence[Path] = (),
    pair_backend: str | None = None,
    pair_scales: bool = False,
) -> dict[str, Prompt]:
    """Prompts must suit the command (direct vs question/nugget/verify) and the bank's kind of items.

    Checked before any model loads, so a wrong ``--prompt`` costs nothing. ``pair_backend`` names
    the backend when it grades (item, passage) pairs without prompts (it cannot verify);
    ``pair_scales`` says it is a :class:`~rubric.llm.base.ScaleGrader`, the only pair graders
    that can stand in for a direct prompt (on the prompt's 0..m scale). Returns the extraction
    prompt of each verify prompt, by the verify prompt's name.
    """
    wanted = ("direct",) if direct else (*ITEM_KINDS, VERIFY_KIND)
    for p in prompts:
        if p.kind not in wanted:
            raise UserError(
                f"{{prompts}} {p.name}: a {p.kind} prompt; `rubric grade` takes question, nugget and verify "
                "prompts, `rubric grade direct` direct prompts",
                "prompts",
            )
    held = {"nugget" if isinstance(it, NuggetItem) else "question" for its in items.values() for it in its}
    for p in prompts:
        graded = "question" if p.kind == VERIFY_KIND else p.kind  # verify prompts grade questions
        if not direct and held and graded not in held:
            raise UserError(
                f"{{prompts}} {p.name}: grades {graded} items, "
                f"but the bank holds {', '.join(sorted(held))} items",
                "prompts",
            )
        if direct and pair_backend:
            _check_scale(p, pair_backend, pair_scales=pair_scales)
        if p.kind == VERIFY_KIND and pair_backend:
            raise UserError(
                f"{{prompts}} {p.name}: a verify prompt asks the LLM yes/no questions; "
                f"the {pair_backend} backend only extracts answers",
                "prompts",
            )
    return {p.name: answer_prompt(p, prompt_files) for p in prompts if p.kind == VERIFY_KIND}


def _check_scale(prompt: Prompt, pair_backend: str, *, pair_scales: bool) -> None:
    """A prompt-free pair grader serves a direct prompt only on a 0..m scale it can grade on."""
    if not pair_scales:
        raise UserError(
            f"{{prompts}} {prompt.name}: the {pair_backend} backend reads no prompt and gives answer spans, "
            "not relevance grades on a direct prompt's scale; use a generating backend or embedding",
            "prompts",
        )
    grades = get_parser(prompt.parser).grades
    if grades != tuple(range(len(grades))):
        raise UserError(
            f"{{prompts}} {prompt.name}: its parser {prompt.parser} grades {list(grades)}, not a 0..m scale "
            f"the {pair_backend} backend can grade on",
            "prompts",
        )


class Engine:
    """Grades chunks of queries with a list of prompts (all question/nugget/verify, or all direct)
    and one backend, through its cache."""

    def __init__(
        self,
        backend: Backend,
        prompts: Sequence[Prompt],
        *,
        items: dict[str, list] | None = None,
        query_texts: dict[str, str] | None = None,
        cache: ResponseCache | None = None,
        fast: bool = True,
        prompt_files: Sequence[Path] = (),
        progress: Callable[[int], None] | None = None,
        answer_prompts: dict[str, Prompt] | None = None,
    ):
        """``answer_prompts``: what :func:`check_prompts` returned, when the caller checked the
        prompts already (a grading job, which loads every prompt once); else they are checked
        here, the extraction prompts found in ``prompt_files`` or the shipped ones."""
        if not isinstance(backend, (TextGenerator, PairGrader)):
            raise TypeError(f"the {backend.name} backend neither generates text nor grades pairs")
        self.backend = backend
        self.llm = CachedBackend(backend, cache)
        self.prompts = list(prompts)
        self.parsers: list[Parser] = [get_parser(p.parser) for p in self.prompts]
        self.items = items or {}
        self.query_texts = query_texts or {}
        self.fast = fast
        self.progress = progress or (lambda n: None)
        self.stats = GradeStats()
        self.failed_queries: set[str] = set()  # queries with a failed pair: not kept for resume
        self.pair_mode = isinstance(backend, PairGrader)
        self.direct = items is None
        if answer_prompts is None:
            answer_prompts = check_prompts(
                self.prompts,
                direct=self.direct,
                items=self.items,
                prompt_files=prompt_files,
                pair_backend=backend.name if self.pair_mode else None,
                pair_scales=isinstance(backend, ScaleGrader),
            )
        self.answer_prompts = answer_prompts

    def llm_options(self, prompt: Prompt) -> dict[str, Any]:
        """The options recorded with a prompt's grades: the backend's, plus the system message
        where the model has a system role."""
        options = dict(self.backend.options())
        options.update(self.decoding(prompt))
        system = self.system(prompt)
        if system and isinstance(self.backend, TextGenerator) and self.backend.supports_system:
            options["system"] = system
        if self.direct and isinstance(self.backend, ScaleGrader):
            options["grade_scale"] = f"0-{get_parser(prompt.parser).max_grade}"  # not the prompt's parse
        return options

    def system(self, prompt: Prompt) -> str | None:
        """The prompt's system message, unless it is for chat APIs only and this backend is none
        (UMBRELA's judge sends its system message to chat APIs, none to local models)."""
        api = isinstance(self.backend, TextGenerator) and bool(self.backend.decoding_keys)
        return prompt.system if api or not prompt.system_api_only else None

    def decoding(self, prompt: Prompt) -> tuple[tuple[str, Any], ...]:
        """The prompt's own decoding settings that this backend applies (sorted pairs)."""
        keys = self.backend.decoding_keys if isinstance(self.backend, TextGenerator) else frozenset()
        return tuple(sorted((k, v) for k, v in prompt.decoding.items() if k in keys))

    def fingerprint(self) -> dict[str, Any]:
        """Everything besides the input files that decides the output (for resume checks)."""
        out: dict[str, Any] = {
            "backend": self.backend.name,
            "model": self.backend.model,
            "prompts": [[p.name, p.template, p.parser, p.system, p.prompt_info] for p in self.prompts],
            "options": [self.llm_options(p) for p in self.prompts],
            "fast": self.fast,
        }
        if self.answer_prompts:
            extract = list(self.answer_prompts.values())
            out["answer_prompts"] = [[p.name, p.template, p.parser, p.system] for p in extract]
            out["answer_options"] = [self.llm_options(p) for p in extract]
        return out

    # -- planning --------------------------------------------------------------------------------
    def targets(self, query: QueryWithFullParagraphList) -> list:
        """The items of a query (direct prompts: the query itself, as one target)."""
        if self.direct:
            if query.queryId not in self.query_texts:
                raise UserError(
                    f"{{queries}}: no text for query {query.queryId} of the passages file", "queries"
                )
            return [self.query_texts[query.queryId]]
        return self.items.get(query.queryId, [])

    def count_pairs(self, queries: Iterable[QueryWithFullParagraphList]) -> int:
        return sum(len(q.paragraphs) * len(self.targets(q)) * len(self.prompts) for q in queries)

    def _values(self, query: QueryWithFullParagraphList, target: Any) -> dict[str, str]:
        """Placeholder values of a prompt for one target (the context is filled in by fitting)."""
        if self.direct:
            return {"query": target}
        values = {"query": self.query_texts.get(query.queryId, "") or query.queryId}
        if isinstance(target, NuggetItem):
            values["nugget"] = target.nugget_text
        else:
            values["question"] = target.question_text
            values["gold_answers"] = ", ".join(target.gold_answers or [])
        return values

    # -- one chunk ---------------------------------------------------------------------------------
    def grade_chunk(self, chunk: Sequence[QueryWithFullParagraphList]) -> list[QueryWithFullParagraphList]:
        """Grade a few queries; returns them with their grade records added or replaced."""
        targets = [self.targets(q) for q in chunk]
        self.stats.queries_without_items += sum(1 for t in targets if not t)
        answers: dict[Pair, Any] = {}
        for k, prompt in enumerate(self.prompts):
            pairs = [
                Pair(qi, pi, k, ti)
                for qi, q in enumerate(chunk)
                for pi in range(len(q.paragraphs))
                for ti in range(len(targets[qi]))
            ]
            if not pairs:
                continue
            if prompt.kind == VERIFY_KIND:
                got = self._verify(prompt, self.parsers[k], chunk, targets, pairs)
            else:
                got = self._answer(prompt, self.parsers[k], chunk, targets, pairs, progress=True)
            for p, r in got.items():
                if isinstance(r, Failure):
                    self._failed(chunk, targets, p, prompt, r.cause)
                else:
                    answers[p] = r
        return [self._graded(qi, q, targets[qi], answers) for qi, q in enumerate(chunk)]

    def _answer(
        self,
        prompt: Prompt,
        parser: Parser,
        chunk: Sequence[QueryWithFullParagraphList],
        targets: list[list],
        pairs: list[Pair],
        *,
        progress: bool = False,
    ) -> dict[Pair, Result]:
        """Every pair's answer (or failure) to ``prompt``."""

        def counted(batch: Sequence[tuple[int, Result]]) -> None:
            self.progress(len(batch))

        on_results = counted if progress else None
        if self.pair_mode:
            asks = [
                (_item_text(targets[p.query][p.item]), chunk[p.query].paragraphs[p.passage].text)
                for p in pairs
            ]
            call = self._caller(
                lambda idx, listen: self.llm.grade_pairs([asks[i] for i in idx], listen), on_results
            )
        elif prompt.context_part is not None and cuts_as_original(self.backend):
            assert isinstance(self.backend, TokenCounter)
            parts = [
                prompt.render_parts(
                    chunk[p.query].paragraphs[p.passage].text,
                    **self._values(chunk[p.query], targets[p.query][p.item]),
                )
                for p in pairs
            ]
            requests = with_decoding(
                cut_as_original(self.backend, parts, self.system(prompt)), self.decoding(prompt)
            )
            call = self._prompt_caller(parser, requests, on_results)
        else:
            jobs = [
                (
                    _renderer(prompt, self._values(chunk[p.query], targets[p.query][p.item])),
                    chunk[p.query].paragraphs[p.passage].text,
                )
                for p in pairs
            ]
            requests = with_decoding(
                fit_prompts(self.backend, jobs, self.system(prompt)), self.decoding(prompt)
            )
            call = self._prompt_caller(parser, requests, on_results)
        got = self._with_second_chance(call, len(pairs))
        self.stats.pairs += len(pairs)
        return dict(zip(pairs, got, strict=True))

    def _prompt_caller(
        self, parser: Parser, requests: list[Request], on_results: OnResults | None
    ) -> Callable[[list[int]], list[Result]]:
        """How to ask prompts: read one-token choices from the logits (fast path), else generate."""
        if self.fast and parser.choices is not None and isinstance(self.backend, ChoiceRater):
            choices = parser.choices
            return self._caller(
                lambda idx, listen: self.llm.rate([requests[i] for i in idx], choices, listen), on_results
            )
        return self._caller(
            lambda idx, listen: self.llm.generate([requests[i] for i in idx], listen), on_results
        )

    @staticmethod
    def _caller(
        ask: Callable[[list[int], OnResults | None], list[Result]], on_results: OnResults | None
    ) -> Callable[[list[int]], list[Result]]:
        """``ask(indices, listener)`` as a call on indices; only the first call reports progress (a
        second chance for failed requests counts no new pairs)."""
        calls = 0

        def call(idx: list[int]) -> list[Result]:
            nonlocal calls
            calls += 1
            return ask(idx, on_results if calls == 1 else None)

        return call

    def _with_second_chance(self, call: Callable[[list[int]], list[Result]], n: int) -> list[Result]:
        """``call`` on every request; those that failed (and may succeed when asked again) are
        asked once more, after the backend's own retries."""
        fallbacks = self.backend.stats.fallbacks
        cached, damaged = self.backend.stats.cached, self.backend.stats.damaged
        got = call(list(range(n)))
        again = [i for i, r in enumerate(got) if isinstance(r, Failure) and r.retryable]
        if again:
            for i, r in zip(again, call(again), strict=True):
                got[i] = r
        self.stats.fallbacks += self.backend.stats.fallbacks - fallbacks
        self.stats.cached += self.backend.stats.cached - cached
        self.stats.damaged += self.backend.stats.damaged - damaged
        return got

    def _verify(
        self,
        prompt: Prompt,
        parser: Parser,
        chunk: Sequence[QueryWithFullParagraphList],
        targets: list[list],
        pairs: list[Pair],
    ) -> dict[Pair, Verdict | Failure]:
        """Both stages of a verify prompt: extract every pair's answer, then ask the verification
        prompt of each (answer, gold answer) in one batch across the chunk's passages and queries.
        A pair whose extraction or any of whose verifications failed gets that failure."""
        extract = self.answer_prompts[prompt.name]
        extracted = self._answer(extract, get_parser(extract.parser), chunk, targets, pairs, progress=True)
        asks = [
            (p, verification_texts(prompt, targets[p.query][p.item], r.text))
            for p, r in extracted.items()
            if isinstance(r, Answer)
        ]
        texts = [t for _, ts in asks for t in ts]
        responses: list[Result] = []
        if texts:
            requests = [Request(t, self.system(prompt), self.decoding(prompt)) for t in texts]
            responses = self._with_second_chance(self._prompt_caller(parser, requests, None), len(requests))
        self.stats.verifications += len(texts)
        out: dict[Pair, Verdict | Failure] = {p: r for p, r in extracted.items() if isinstance(r, Failure)}
        start = 0
        for p, ts in asks:
            got = responses[start : start + len(ts)]
            start += len(ts)
            failed = next((r for r in got if isinstance(r, Failure)), None)
            if failed is not None:
                out[p] = Failure(f"verification: {failed.cause}", failed.retryable)
            else:
                out[p] = verdict(targets[p.query][p.item], extracted[p].text, [r.text for r in got])
        return out

    def _failed(
        self,
        chunk: Sequence[QueryWithFullParagraphList],
        targets: list[list],
        p: Pair,
        prompt: Prompt,
        cause: str,
    ) -> None:
        query = chunk[p.query]
        target = targets[p.query][p.item]
        self.stats.failures += 1
        self.stats.failed.append(
            PairFailure(
                query=query.queryId,
                passage=query.paragraphs[p.passage].paragraph_id,
                item="(query)" if self.direct else target.item_id,
                prompt=prompt.name,
                cause=cause,
            )
        )
        self.failed_queries.add(query.queryId)

    # -- records -----------------------------------------------------------------------------------
    def _graded(
        self, qi: int, query: QueryWithFullParagraphList, targets: list, answers: dict[Pair, Any]
    ) -> QueryWithFullParagraphList:
        """The query with each passage's records added or replaced (none where a pair failed)."""
        paragraphs = []
        for pi, passage in enumerate(query.paragraphs):
            passage = passage.model_copy(deep=True)
            for k, prompt in enumerate(self.prompts):
                got = [answers.get(Pair(qi, pi, k, ti)) for ti in range(len(targets))]
                if not targets or any(r is None for r in got):
                    continue  # no items, or a failed pair: no record (a rerun grades it)
                llm, options = self.backend.model, self.llm_options(prompt)
                if self.direct:
                    grade = (  # a scale grader stands in for the prompt: its grade, not the parse
                        self.backend.grade_on_scale(got[0], self.parsers[k].max_grade)
                        if isinstance(self.backend, ScaleGrader)
                        else None
                    )
                    records.put(
                        passage,
                        records.direct_record(prompt, self.parsers[k], got[0], llm, options, grade=grade),
                    )
                elif prompt.kind == VERIFY_KIND:
                    extract = self.answer_prompts[prompt.name]
                    records.put(
                        passage,
                        records.verify_record(prompt, extract, targets, got, llm=llm, options=options),
                    )
                else:
                    records.put(
                        passage,
                        records.exam_record(prompt, self.parsers[k], targets, got, llm=llm, options=options),
                    )
            paragraphs.append(passage)
        return QueryWithFullParagraphList(queryId=query.queryId, paragraphs=paragraphs)


def with_decoding(requests: list[Request], decoding: tuple[tuple[str, Any], ...]) -> list[Request]:
    """The requests with a prompt's decoding settings (unchanged when it has none)."""
    return [dataclasses.replace(r, decoding=decoding) for r in requests] if decoding else requests


def _renderer(prompt: Prompt, values: dict[str, str]) -> Callable[[str], str]:
    return lambda context: prompt.render(**values, context=context)


def _item_text(target: Any) -> str:
    return target if isinstance(target, str) else target.item_text
