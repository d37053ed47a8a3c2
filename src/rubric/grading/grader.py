"""The grading engine: every (passage, test item) pair, or (passage, query) for direct prompts.

Work flows in chunks of consecutive queries: plan the pairs of a chunk, render and fit their
prompts, answer what the response cache does not know in length-sorted batches that span passages
and queries, parse the answers, and write the chunk's graded queries to ``OUT.partial``. A killed
run (even ``kill -9``) restarted with the same arguments keeps the finished queries of the partial
file and goes on; the final file is written atomically, in input order, from those lines, so it is
byte for byte the file of an uninterrupted run.

Grades are written as the original Autograding Workbench wrote them: per passage one
``exam_grades`` record per (prompt, LLM) with ``answers`` [[item_id, answer]], ``correctAnswered``
(items with grade >= 1), ``wrongAnswered``, ``exam_ratio`` = correct / items, ``self_ratings`` for
self-rated prompts; direct prompts fill ``grades`` records. A record with the same prompt class
and LLM is replaced in place, so grading a file again with another prompt adds to it. Verify
prompts grade in two stages (extract, then verify against the answer key), see
:mod:`rubric.grading.verification`; both stages share the cache, the batching and the resume.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rubric.data.files import atomic_write
from rubric.data.models import (
    ExamGrades,
    FullParagraphData,
    Grades,
    NuggetItem,
    PromptInfo,
    QueryWithFullParagraphList,
    SelfRating,
    TestBank,
)
from rubric.errors import UserError
from rubric.grading.fit import fit_prompts
from rubric.grading.parse import Parser, get_parser
from rubric.grading.prompts import Prompt
from rubric.grading.verification import VERIFY_KIND, Verdict, answer_prompt, verdict, verification_texts
from rubric.llm.base import Rating
from rubric.llm.cache import ResponseCache, cache_key
from rubric.llm.openai_chat import LLMFailure

DIRECT_PROMPT_TYPE = "direct_grading"  # the original tool's prompt_type of direct grades
ITEM_KINDS = ("question", "nugget")
CHUNK_PAIRS = 4096


@dataclass
class GradeStats:
    """What the end-of-run summary reports."""

    queries: int = 0  # in the output file (resumed ones included)
    pairs: int = 0
    verifications: int = 0  # verification prompts of verify prompts (one per gold answer)
    cached: int = 0
    fallbacks: int = 0
    failures: int = 0
    resumed_queries: int = 0
    queries_without_items: int = 0
    errors: list[str] = field(default_factory=list)

    def summary(self) -> str:
        return (
            f"{self.pairs} pairs graded, "
            + (f"{self.verifications} answers verified, " if self.verifications else "")
            + f"{self.cached} from cache, {self.fallbacks} parse fallbacks "
            f"(generated to the end), {self.failures} failures"
            + (f", {self.resumed_queries} queries resumed" if self.resumed_queries else "")
            + (
                f", {self.queries_without_items} queries with no bank items"
                if self.queries_without_items
                else ""
            )
        )


@dataclass(frozen=True)
class Pair:
    """One question to the backend: where its grade goes and what to ask."""

    query: int  # index in the chunk
    passage: int
    prompt: int
    item: int  # index of the item in the query's items (0 for direct prompts)


def check_prompts(
    prompts: Sequence[Prompt],
    direct: bool,
    items: dict[str, list],
    prompt_files: Sequence[Path] = (),
    pair_backend: str | None = None,
) -> dict[str, Prompt]:
    """Prompts must suit the command (direct vs question/nugget/verify) and the bank's kind of items.

    Checked before any model loads, so a wrong ``--prompt`` costs nothing. ``pair_backend`` names
    the backend when it grades (item, passage) pairs without prompts (it cannot verify). Returns
    the extraction prompt of each verify prompt, by the verify prompt's name.
    """
    wanted = ("direct",) if direct else (*ITEM_KINDS, VERIFY_KIND)
    for p in prompts:
        if p.kind not in wanted:
            raise UserError(
                f"--prompt {p.name}: a {p.kind} prompt; `rubric grade` takes question, nugget and verify "
                "prompts, `rubric grade direct` direct prompts"
            )
    held = {"nugget" if isinstance(it, NuggetItem) else "question" for its in items.values() for it in its}
    for p in prompts:
        graded = "question" if p.kind == VERIFY_KIND else p.kind  # verify prompts grade questions
        if not direct and held and graded not in held:
            raise UserError(
                f"--prompt {p.name}: grades {graded} items, "
                f"but the bank holds {', '.join(sorted(held))} items"
            )
        if p.kind == VERIFY_KIND and pair_backend:
            raise UserError(
                f"--prompt {p.name}: a verify prompt asks the LLM yes/no questions; "
                f"the {pair_backend} backend only extracts answers"
            )
    return {p.name: answer_prompt(p, prompt_files) for p in prompts if p.kind == VERIFY_KIND}


def items_by_query(banks: Iterable[TestBank]) -> dict[str, list]:
    """All items of each query, facets concatenated in file order."""
    out: dict[str, list] = {}
    for bank in banks:
        out.setdefault(bank.query_id, []).extend(bank.items)
    return out


class Grader:
    """Grades passages with a list of prompts (all question/nugget, or all direct) and one backend."""

    def __init__(
        self,
        backend: Any,
        prompts: Sequence[Prompt],
        *,
        items: dict[str, list] | None = None,
        query_texts: dict[str, str] | None = None,
        cache: ResponseCache | None = None,
        fast: bool = True,
        progress: Callable[[int], None] | None = None,
        prompt_files: Sequence[Path] = (),
    ):
        self.backend = backend
        self.prompts = list(prompts)
        self.parsers: list[Parser] = [get_parser(p.parser) for p in self.prompts]
        self.items = items or {}
        self.query_texts = query_texts or {}
        self.cache = cache
        self.fast = fast
        self.progress = progress or (lambda n: None)
        self.stats = GradeStats()
        self.failed_queries: set[str] = set()  # queries with a failed pair: not kept for resume
        self.pair_mode = hasattr(backend, "grade_pairs")
        self.direct = items is None
        self.answer_prompts = check_prompts(
            self.prompts, self.direct, self.items, prompt_files, backend.name if self.pair_mode else None
        )

    def options(self, prompt: Prompt) -> dict[str, Any]:
        """The backend's decoding options for this prompt (chat models take its system text)."""
        if hasattr(self.backend, "with_system"):
            self.backend.with_system(prompt.system)
        return dict(self.backend.options())

    def fingerprint(self) -> dict[str, Any]:
        """Everything besides the input files that decides the output (for resume checks)."""
        out = {
            "backend": self.backend.name,
            "model": self.backend.model,
            "prompts": [[p.name, p.template, p.parser, p.system, p.prompt_info] for p in self.prompts],
            "options": [self.options(p) for p in self.prompts],
            "fast": self.fast,
        }
        if self.answer_prompts:
            extract = list(self.answer_prompts.values())
            out["answer_prompts"] = [[p.name, p.template, p.parser, p.system] for p in extract]
            out["answer_options"] = [self.options(p) for p in extract]
        return out

    # -- planning --------------------------------------------------------------------------------
    def _targets(self, query: QueryWithFullParagraphList) -> list:
        """The items of a query (direct prompts: the query itself, as one target)."""
        if self.direct:
            if query.queryId not in self.query_texts:
                raise UserError(f"--queries: no text for query {query.queryId} of the passages file")
            return [self.query_texts[query.queryId]]
        return self.items.get(query.queryId, [])

    def count_pairs(self, queries: Iterable[QueryWithFullParagraphList]) -> int:
        return sum(len(q.paragraphs) * len(self._targets(q)) * len(self.prompts) for q in queries)

    def _values(self, query: QueryWithFullParagraphList, target: Any) -> dict[str, str]:
        """Placeholder values of a prompt for one target (the context is filled in by fitting)."""
        if self.direct:
            return {"query": target}
        values = {"query": self._bank_query_text(query.queryId) or query.queryId}
        if isinstance(target, NuggetItem):
            values["nugget"] = target.nugget_text
        else:
            values["question"] = target.question_text
            values["gold_answers"] = ", ".join(target.gold_answers or [])
        return values

    def _bank_query_text(self, qid: str) -> str:
        return self.query_texts.get(qid, "")

    # -- one chunk ---------------------------------------------------------------------------------
    def grade_chunk(self, chunk: Sequence[QueryWithFullParagraphList]) -> list[QueryWithFullParagraphList]:
        """Grade a few queries; returns them with their grade records added or replaced."""
        targets = [self._targets(q) for q in chunk]
        self.stats.queries_without_items += sum(1 for t in targets if not t)
        answers: dict[Pair, Any] = {}
        for k, prompt in enumerate(self.prompts):
            pairs = [
                Pair(qi, pi, k, ti)
                for qi, q in enumerate(chunk)
                for pi in range(len(q.paragraphs))
                for ti in range(len(targets[qi]))
            ]
            if pairs and prompt.kind == VERIFY_KIND:
                answers.update(self._verify(prompt, self.parsers[k], chunk, targets, pairs))
            elif pairs:
                answers.update(self._answer(prompt, self.parsers[k], chunk, targets, pairs))
        return [self._record(qi, q, targets[qi], answers) for qi, q in enumerate(chunk)]

    def _answer(
        self,
        prompt: Prompt,
        parser: Parser,
        chunk: Sequence[QueryWithFullParagraphList],
        targets: list[list],
        pairs: list[Pair],
    ) -> dict[Pair, Rating | None]:
        options = self.options(prompt)
        if self.pair_mode:
            texts = [
                json.dumps(
                    [self._pair_left(targets[p.query][p.item]), chunk[p.query].paragraphs[p.passage].text],
                    ensure_ascii=False,
                )
                for p in pairs
            ]
            kind = "pair"
        else:
            jobs = []
            for p in pairs:
                values = self._values(chunk[p.query], targets[p.query][p.item])
                jobs.append((_renderer(prompt, values), chunk[p.query].paragraphs[p.passage].text))
            texts = fit_prompts(self.backend, jobs)
            kind = self._kind(parser)
        got = self._cached(kind, parser, options, texts)
        self.stats.pairs += len(pairs)
        self.progress(len(pairs))
        return dict(zip(pairs, got, strict=True))

    def _verify(
        self,
        prompt: Prompt,
        parser: Parser,
        chunk: Sequence[QueryWithFullParagraphList],
        targets: list[list],
        pairs: list[Pair],
    ) -> dict[Pair, Verdict | None]:
        """Both stages of a verify prompt: extract every pair's answer, then ask the verification
        prompt of each (answer, gold answer) in one batch across the chunk's passages and queries.
        A pair whose extraction or any of whose verifications failed gets None (no record)."""
        extract = self.answer_prompts[prompt.name]
        extracted = self._answer(extract, get_parser(extract.parser), chunk, targets, pairs)
        asks = [
            (p, verification_texts(prompt, targets[p.query][p.item], r.answer))
            for p, r in extracted.items()
            if r is not None
        ]
        texts = [t for _, ts in asks for t in ts]
        options = self.options(prompt)  # after the extraction's: chat backends take this system text
        responses = self._cached(self._kind(parser), parser, options, texts) if texts else []
        self.stats.verifications += len(texts)
        out: dict[Pair, Verdict | None] = dict.fromkeys(pairs)
        start = 0
        for p, ts in asks:
            got = responses[start : start + len(ts)]
            start += len(ts)
            if all(r is not None for r in got):
                out[p] = verdict(targets[p.query][p.item], extracted[p].answer, [r.answer for r in got])
        return out

    def _kind(self, parser: Parser) -> str:
        """How to ask: read one-token choices from the logits (fast path), else generate."""
        rate = self.fast and parser.choices is not None and hasattr(self.backend, "rate")
        return f"rate:{','.join(parser.choices)}" if rate else "generate"

    def _cached(
        self, kind: str, parser: Parser, options: dict[str, Any], texts: list[str]
    ) -> list[Rating | None]:
        """Answers to ``texts``: from the cache where known, else from the backend (then cached)."""
        keys = [cache_key(self.backend.name, self.backend.model, options, t, kind) for t in texts]
        known = self.cache.get_many(keys) if self.cache is not None else {}
        todo = list(dict.fromkeys(k for k in keys if k not in known))
        self.stats.cached += sum(1 for k in keys if k in known)
        if todo:
            first = {k: t for k, t in zip(keys, texts, strict=True)}
            fresh = self._ask(kind, parser, [first[k] for k in todo])
            got = {k: r for k, r in zip(todo, fresh, strict=True) if r is not None}
            if self.cache is not None:
                self.cache.put_many(
                    (k, {"answer": r.answer, "probabilities": r.probabilities}) for k, r in got.items()
                )
            known.update({k: {"answer": r.answer, "probabilities": r.probabilities} for k, r in got.items()})
        return [
            Rating(known[k]["answer"], known[k].get("probabilities")) if k in known else None for k in keys
        ]

    def _pair_left(self, target: Any) -> str:
        return target if isinstance(target, str) else target.item_text

    def _ask(self, kind: str, parser: Parser, texts: list[str]) -> list[Rating | None]:
        """Ask the backend, retrying once; pairs that still fail are counted, not dropped silently."""
        before = getattr(self.backend, "fallbacks", 0)
        for attempt in (1, 2):
            try:
                if kind == "pair":
                    result = self.backend.grade_pairs([tuple(json.loads(t)) for t in texts])
                elif kind == "generate":
                    result = [Rating(a) for a in self.backend.generate(texts)]
                else:
                    result = self.backend.rate(texts, parser.choices)
                self.stats.fallbacks += getattr(self.backend, "fallbacks", 0) - before
                return list(result)
            except (RuntimeError, ValueError, OSError, LLMFailure) as e:  # LLMFailure: after API retries
                if attempt == 2:
                    self.stats.failures += len(texts)
                    self.stats.errors.append(f"{type(e).__name__}: {e}")
        return [None] * len(texts)

    # -- records -----------------------------------------------------------------------------------
    def _record(
        self, qi: int, query: QueryWithFullParagraphList, targets: list, answers: dict[Pair, Any]
    ) -> QueryWithFullParagraphList:
        paragraphs = []
        for pi, passage in enumerate(query.paragraphs):
            passage = passage.model_copy(deep=True)
            for k, prompt in enumerate(self.prompts):
                got = [answers.get(Pair(qi, pi, k, ti)) for ti in range(len(targets))]
                if any(r is None for r in got):
                    self.failed_queries.add(query.queryId)
                if not targets or any(r is None for r in got):
                    continue  # no items, or a failed pair: no record (a rerun grades it)
                if self.direct:
                    _put(passage, "grades", self._direct_record(prompt, self.parsers[k], got[0]))
                elif prompt.kind == VERIFY_KIND:
                    _put(passage, "exam_grades", self._verify_record(prompt, targets, got))
                else:
                    _put(passage, "exam_grades", self._exam_record(prompt, self.parsers[k], targets, got))
            paragraphs.append(passage)
        return QueryWithFullParagraphList(queryId=query.queryId, paragraphs=paragraphs)

    def _prompt_info(self, prompt: Prompt) -> PromptInfo:
        return PromptInfo(**{**prompt.prompt_info, "prompt_class": prompt.name})

    def _exam_record(self, prompt: Prompt, parser: Parser, items: list, got: list[Rating]) -> ExamGrades:
        grades = [
            parser.parse(
                r.answer, (getattr(it, "gold_answers", None) or []) if parser.needs_gold_answers else None
            )
            for it, r in zip(items, got, strict=True)
        ]
        correct = [it.item_id for it, g in zip(items, grades, strict=True) if g >= 1]
        wrong = [it.item_id for it, g in zip(items, grades, strict=True) if g < 1]
        self_rated = bool(prompt.prompt_info.get("is_self_rated", parser.choices is not None))
        ratings = None
        if self_rated:
            ratings = []
            for it, g, r in zip(items, grades, got, strict=True):
                field_name = "nugget_id" if isinstance(it, NuggetItem) else "question_id"
                ratings.append(
                    SelfRating(
                        **{field_name: it.item_id}, self_rating=g, expected_rating=_expected(parser, r)
                    )
                )
        return ExamGrades(
            correctAnswered=correct,
            wrongAnswered=wrong,
            answers=[(it.item_id, r.answer) for it, r in zip(items, got, strict=True)],
            llm=self.backend.model,
            llm_options=self.options(prompt),
            exam_ratio=len(correct) / len(items),
            prompt_info=self._prompt_info(prompt),
            self_ratings=ratings,
            prompt_type=prompt.prompt_type or prompt.kind,
        )

    def _verify_record(self, prompt: Prompt, items: list, got: list[Verdict]) -> ExamGrades:
        """Answers from the extraction stage, correct / wrong from the verification stage;
        questions without gold answers are in neither list (see rubric.grading.verification)."""
        correct = [it.item_id for it, v in zip(items, got, strict=True) if v.correct is True]
        wrong = [it.item_id for it, v in zip(items, got, strict=True) if v.correct is False]
        info = {"orig_prompt_class": self.answer_prompts[prompt.name].name, **prompt.prompt_info}
        return ExamGrades(
            correctAnswered=correct,
            wrongAnswered=wrong,
            answers=[(it.item_id, v.answer) for it, v in zip(items, got, strict=True)],
            llm=self.backend.model,
            llm_options=self.options(prompt),
            exam_ratio=len(correct) / max(len(correct) + len(wrong), 1),
            prompt_info=PromptInfo(**{**info, "prompt_class": prompt.name}),
            self_ratings=None,
            prompt_type=prompt.prompt_type or "question",
        )

    def _direct_record(self, prompt: Prompt, parser: Parser, rating: Rating) -> Grades:
        grade = parser.parse(rating.answer)
        return Grades(
            correctAnswered=grade >= 1,
            answer=rating.answer,
            llm=self.backend.model,
            llm_options=self.options(prompt),
            prompt_info=self._prompt_info(prompt),
            self_ratings=grade,
            prompt_type=prompt.prompt_type or DIRECT_PROMPT_TYPE,
            expected_rating=_expected(parser, rating),
        )


def _renderer(prompt: Prompt, values: dict[str, str]) -> Callable[[str], str]:
    return lambda context: prompt.render(**values, context=context)


def _expected(parser: Parser, rating: Rating) -> float | None:
    """Probability-weighted grade over the parser's one-token choices (rounded for stable files)."""
    if parser.choices is None:
        return None
    value = rating.expected({c: float(g) for c, g in parser.choice_grades.items()})
    return None if value is None else round(value, 4)


def _put(passage: FullParagraphData, field_name: str, record: ExamGrades | Grades) -> None:
    """Replace the record with the same prompt class and LLM in place, else append it."""
    records = list(getattr(passage, field_name) or [])
    for i, old in enumerate(records):
        if old.prompt_class == record.prompt_class and old.llm == record.llm:
            records[i] = record
            break
    else:
        records.append(record)
    setattr(passage, field_name, records)


# ---------------------------------------------------------------------------------------------
# Running over a file: chunks, the partial file, resume, the final atomic write
# ---------------------------------------------------------------------------------------------


def query_line(q: QueryWithFullParagraphList) -> str:
    """One line of the passages file, exactly as :func:`rubric.data.jsonl.write_passages` writes it."""
    return json.dumps(q.to_json(), ensure_ascii=False)


def file_identity(path: Path) -> list[Any]:
    st = path.stat()
    return [str(path.resolve()), st.st_size, st.st_mtime_ns]


class PartialFile:
    """``OUT.partial``: a header naming the run, then one finished query per line (append-only)."""

    def __init__(self, output: Path, fingerprint: dict[str, Any]):
        self.path = output.with_name(output.name + ".partial")
        blob = json.dumps(fingerprint, sort_keys=True, ensure_ascii=False, default=str)
        self.header = json.dumps({"rubric_grade_partial": hashlib.sha256(blob.encode()).hexdigest()})

    def load(self) -> dict[str, str]:
        """Finished query lines of an earlier run with the same arguments (else nothing)."""
        if not self.path.exists():
            return {}
        raw = self.path.read_bytes()
        complete = raw[: raw.rfind(b"\n") + 1]  # a line cut by a kill has no newline yet
        lines = complete.decode("utf-8").splitlines()
        if not lines or lines[0] != self.header:
            return {}
        done = {}
        for line in lines[1:]:
            done[str(json.loads(line)[0])] = line
        with open(self.path, "r+b") as f:
            f.truncate(len(complete))
        return done

    def start(self, keep: bool) -> None:
        if not keep:
            with open(self.path, "w", encoding="utf-8") as f:
                f.write(self.header + "\n")

    def append(self, lines: list[str]) -> None:
        with open(self.path, "a", encoding="utf-8") as f:
            for line in lines:
                f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())

    def remove(self) -> None:
        self.path.unlink(missing_ok=True)


def grade_file(
    grader: Grader,
    queries: list[QueryWithFullParagraphList],
    output: Path,
    inputs: Sequence[Path],
    progress_factory: Callable[[int], Any] | None = None,
    chunk_pairs: int = CHUNK_PAIRS,
) -> GradeStats:
    """Grade ``queries`` into ``output`` with resume; returns the run's statistics."""
    partial = PartialFile(output, {"run": grader.fingerprint(), "inputs": [file_identity(p) for p in inputs]})
    done = partial.load()
    partial.start(keep=bool(done))
    grader.stats.queries = len(queries)
    grader.stats.resumed_queries = sum(1 for q in queries if q.queryId in done)
    todo = [q for q in queries if q.queryId not in done]
    bar = progress_factory(grader.count_pairs(todo)) if progress_factory else None
    if bar is not None:
        grader.progress = bar.update
    chunk: list[QueryWithFullParagraphList] = []
    size = 0
    for q in todo + [None]:  # None flushes the last chunk
        if q is not None:
            chunk.append(q)
            size += grader.count_pairs([q])
        if chunk and (q is None or size >= chunk_pairs):
            graded = grader.grade_chunk(chunk)
            lines = [query_line(g) for g in graded]
            done.update({g.queryId: line for g, line in zip(graded, lines, strict=True)})
            partial.append(
                [
                    line
                    for g, line in zip(graded, lines, strict=True)
                    if g.queryId not in grader.failed_queries
                ]
            )
            chunk, size = [], 0
    if bar is not None:
        bar.close()
    with atomic_write(output) as f:
        for q in queries:
            f.write(done[q.queryId])
            f.write("\n")
    if not grader.failed_queries:
        partial.remove()  # with failures it stays, so a rerun grades only the failed queries again
    return grader.stats
