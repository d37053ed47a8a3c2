"""Import human-made banks: TQA-style exam questions with answer keys, plain question/nugget lists,
and the original workbench's "genq" question sets (``{query: {facet: {title, facet, questions}}}``).

Ids are computed from the text (:func:`rubric.bank.ids.item_id`) exactly as for generated banks,
so a human list and a generated list of the same texts agree on ids.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

from rubric.bank.generate import Topic, build_items
from rubric.bank.ids import check_kind
from rubric.data.files import read_text, text_lines
from rubric.data.json_line import load_json
from rubric.data.jsonl import write_bank
from rubric.data.models import NuggetItem, QuestionItem, TestBank
from rubric.data.queries import read_queries
from rubric.errors import UserError

TEXT_FIELDS = ("text", "question", "question_text", "nugget", "nugget_text")


def _entry(path: Path, where: str, raw: Any, kind: str) -> tuple[str, dict[str, Any]]:
    """(text, extra fields) of one list entry: a string or an object with a text field."""
    if isinstance(raw, str):
        return raw, {}
    if isinstance(raw, dict):
        text = next((raw[f] for f in TEXT_FIELDS if isinstance(raw.get(f), str)), None)
        if text is None:
            raise UserError(f"{path}: {where}: no text field (one of {', '.join(TEXT_FIELDS)})")
        extra: dict[str, Any] = {}
        if kind == "questions" and raw.get("gold_answers") is not None:
            gold = raw["gold_answers"]
            extra["gold_answers"] = [str(g) for g in (gold if isinstance(gold, list) else [gold])]
        if kind == "nuggets" and raw.get("importance") is not None:
            extra["importance"] = _importance(path, where, raw["importance"])
        return text, extra
    raise UserError(f"{path}: {where}: expected a string or an object with a text field")


def _importance(path: Path, where: str, value: Any) -> str:
    label = str(value).strip().lower()
    if label not in ("vital", "okay"):
        raise UserError(f"{path}: {where}: importance must be 'vital' or 'okay', got {value!r}")
    return label


def read_plain(path: str | Path, kind: str) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """``{qid: [(text, extra)]}`` from JSON ``{qid: [...]}``, a JSON list of records, or TSV
    ``qid<TAB>text[<TAB>gold1|gold2 or importance]``."""
    path = Path(path)
    content = read_text(path)
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    if content.lstrip().startswith(("{", "[")):
        try:
            data = load_json(str(path), content)
        except json.JSONDecodeError as e:
            raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
        if isinstance(data, dict):
            if is_genq(data):
                raise _GenqFound
            for qid, entries in data.items():
                if not isinstance(entries, list):
                    raise UserError(f"{path}: query {qid}: expected a list of {kind}")
                out[str(qid)] = [
                    _entry(path, f"query {qid} item {i + 1}", e, kind) for i, e in enumerate(entries)
                ]
        else:
            for i, rec in enumerate(data, start=1):
                qid = rec.get("query_id", rec.get("qid")) if isinstance(rec, dict) else None
                if qid is None:
                    raise UserError(f"{path}: record {i}: no query_id")
                out.setdefault(str(qid), []).append(_entry(path, f"record {i}", rec, kind))
        return out
    for line_no, line in text_lines(content):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) < 2 or not cols[1].strip():
            raise UserError(f"{path}:{line_no}: expected 'qid<TAB>text[<TAB>...]'")
        extra: dict[str, Any] = {}
        if len(cols) > 2 and cols[2].strip():
            if kind == "questions":
                extra["gold_answers"] = [g.strip() for g in cols[2].split("|") if g.strip()]
            else:
                extra["importance"] = _importance(path, f"line {line_no}", cols[2])
        out.setdefault(cols[0].strip(), []).append((cols[1].strip(), extra))
    return out


class _GenqFound(Exception):
    """A list-format JSON file that is a genq question set (read by :func:`read_genq`)."""


def is_genq(data: Any) -> bool:
    """A genq question set: queries map to facets, each an object with a ``questions`` list."""
    return (
        isinstance(data, dict)
        and bool(data)
        and all(
            isinstance(facets, dict)
            and facets
            and all(isinstance(f, dict) and "questions" in f for f in facets.values())
            for facets in data.values()
        )
    )


_ENUMERATION = re.compile(r"^\d+\.\s+")


def read_genq(path: str | Path, test_collection: str = "") -> list[TestBank]:
    """The original workbench's genq question set, one bank per query, as its loader read it:
    each question without its leading "N. ", with the id ``query/facet/md5(question as written)``
    (so grades of the original's files match), one-character questions dropped; the query text is
    the facets' title, the facet id is kept on each item."""
    path = Path(path)
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    if not is_genq(data):
        raise UserError(
            f"{path}: not a genq question set ({{query: {{facet: {{title, facet, questions}}}}}})"
        )
    banks = []
    for qid, facets in data.items():
        items: list[QuestionItem | NuggetItem] = []
        seen: set[str] = set()
        title = ""
        for facet_id, facet in facets.items():
            questions = facet.get("questions")
            if not isinstance(questions, list) or not all(isinstance(q, str) for q in questions):
                raise UserError(f"{path}: query {qid} facet {facet_id}: questions must be a list of strings")
            title = title or _text(path, f"query {qid} facet {facet_id}: title", facet.get("title"))
            for written in questions:
                text = _ENUMERATION.sub("", written)
                iid = f"{qid}/{facet_id}/{hashlib.md5(written.encode('utf-8')).hexdigest()}"
                if len(text) > 1 and iid not in seen:
                    seen.add(iid)
                    items.append(
                        QuestionItem(query_id=qid, question_id=iid, question_text=text, facet_id=facet_id)
                    )
        banks.append(
            TestBank(
                query_id=qid,
                test_collection=test_collection,
                query_text=title,
                info={"generator": "rubric bank import", "source": str(path), "prompt_target": "questions"},
                items=items,
            )
        )
    return banks


def _text(path: Path, where: str, value: Any) -> str:
    """An optional text field: missing or ``null`` is no text (never the word ``None``, which
    would go into prompts as the query); anything else but a string is an error naming it."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise UserError(f"{path}: {where} must be text, found {json.dumps(value)[:60]}")
    return value


def _field(path: Path, where: str, record: Any, key: str) -> str:
    """``record[key]["processedText"]`` of a TQA record, each level optional."""
    value = record.get(key) if isinstance(record, dict) else None
    if value is not None and not isinstance(value, dict):
        raise UserError(f"{path}: {where}: {key} must be an object, found {json.dumps(value)[:60]}")
    return _text(path, f"{where}: {key}.processedText", (value or {}).get("processedText")).strip()


def _tqa_choice(path: Path, where: str, q: dict) -> list[str]:
    """The answer key of a TQA question: the correct choice's text (and its letter)."""
    correct = _field(path, where, q, "correctAnswer")
    choices = q.get("answerChoices") or {}
    if not isinstance(choices, dict):
        raise UserError(f"{path}: {where}: answerChoices must be an object")
    text = _field(path, f"{where} choice {correct}", choices, correct) if correct in choices else ""
    return [text] if text else ([correct] if correct else [])


def read_tqa(
    path: str | Path, prefix: str = "tqa2:"
) -> tuple[dict[str, list[tuple[str, dict]]], dict[str, str]]:
    """TQA lessons (``[{globalID, lessonName, questions: {nonDiagramQuestions: {...}}}]``)."""
    path = Path(path)
    try:
        data = load_json(str(path), read_text(path))
    except json.JSONDecodeError as e:
        raise UserError(f"{path}:{e.lineno}: not valid JSON ({e.msg})") from None
    lessons = data if isinstance(data, list) else [data]
    out: dict[str, list[tuple[str, dict]]] = {}
    titles: dict[str, str] = {}
    for i, lesson in enumerate(lessons, start=1):
        if not isinstance(lesson, dict) or "globalID" not in lesson:
            raise UserError(f"{path}: lesson {i}: not a TQA lesson (no 'globalID')")
        qid = f"{prefix}{lesson['globalID']}"
        titles[qid] = _text(path, f"lesson {lesson['globalID']}: lessonName", lesson.get("lessonName"))
        questions = lesson.get("questions") or {}
        questions = questions.get("nonDiagramQuestions") if isinstance(questions, dict) else None
        if not isinstance(questions or {}, dict):
            raise UserError(f"{path}: lesson {lesson['globalID']}: nonDiagramQuestions must be an object")
        for source_id, q in (questions or {}).items():
            where = f"lesson {lesson['globalID']} question {source_id}"
            if not isinstance(q, dict):
                raise UserError(f"{path}: {where}: not a question object")
            text = _field(path, where, q, "beingAsked")
            if not text:
                raise UserError(f"{path}: {where}: no beingAsked text")
            gold = _tqa_choice(path, where, q)
            out.setdefault(qid, []).append((text, {"gold_answers": gold, "source_id": source_id}))
    return out, titles


def to_banks(
    entries: dict[str, list[tuple[str, dict[str, Any]]]],
    kind: str,
    queries: dict[str, str],
    test_collection: str = "",
    source: str = "",
) -> list[TestBank]:
    """Banks with ids from the text; extra fields (answer keys, importance) are kept."""
    banks = []
    for qid, rows in entries.items():
        topic = Topic(query_id=qid, query_text=queries.get(qid, ""))
        items: list[QuestionItem | NuggetItem] = []
        for item, (_, extra) in zip(
            build_items(topic, kind, [t for t, _ in rows]), _unique(rows), strict=True
        ):
            items.append(type(item).model_validate({**item.to_json(), **extra}) if extra else item)
        banks.append(
            TestBank(
                query_id=qid,
                test_collection=test_collection,
                query_text=queries.get(qid, ""),
                info={"generator": "rubric bank import", "source": source, "prompt_target": kind},
                items=items,
            )
        )
    return banks


def _unique(rows: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Rows with the first of each stripped text (as build_items keeps them)."""
    seen, out = set(), []
    for text, extra in rows:
        if text.strip() not in seen:
            seen.add(text.strip())
            out.append((text, extra))
    return out


def import_bank(
    source: Path,
    output: Path,
    *,
    fmt: str = "list",
    kind: str = "questions",
    queries: Path | None = None,
    tqa_prefix: str = "tqa2:",
    test_collection: str = "",
) -> str:
    """`rubric bank import`: the banks of ``source`` written to ``output``; the summary line.

    ``fmt`` is ``list`` (:func:`read_plain`, of ``kind``; a genq file is recognised as one),
    ``tqa`` (:func:`read_tqa`: always questions, lesson titles as query texts unless ``queries``
    gives them) or ``genq`` (:func:`read_genq`). A source without a
    single item is an error: an empty bank would only fail later, in grading.
    """
    texts = read_queries(queries) if queries else {}
    if fmt == "list":
        try:
            entries = read_plain(source, check_kind(kind))
        except _GenqFound:
            fmt = "genq"
    if fmt == "genq":
        banks = read_genq(source, test_collection)
        for bank in banks:
            bank.query_text = texts.get(bank.query_id, bank.query_text)
        if not any(b.items for b in banks):
            raise UserError(f"{source}: no questions found")
        write_bank(output, banks)
        return f"wrote {len(banks)} banks ({sum(len(b.items) for b in banks)} questions, genq) to {output}"
    if fmt == "tqa":
        entries, titles = read_tqa(source, tqa_prefix)
        kind = "questions"
        texts = {**titles, **texts}
    elif fmt != "list":
        raise UserError(f"{{fmt}}: expected list, tqa or genq, got {fmt!r}", "fmt")
    if not any(entries.values()):
        raise UserError(f"{source}: no {kind} found")
    banks = to_banks(entries, kind, texts, test_collection, source=str(source))
    write_bank(output, banks)
    return f"wrote {len(banks)} banks ({sum(len(b.items) for b in banks)} {kind}) to {output}"
