"""ir_datasets ids as inputs: ``irds:ID`` wherever topics, qrels or passage texts are read.

``irds:msmarco-passage/trec-dl-2020/judged`` names a dataset of the ``ir_datasets`` package, as
ir_measures and PyTerrier users write it; the readers of topic, qrels and collection files
(:func:`rubric.data.queries.read_queries`, :func:`rubric.data.trec.read_qrels`,
:func:`rubric.data.collection.load_texts`) hand such a name here instead of opening a file.
``ir_datasets`` is the optional ``irds`` extra: imported here only, when an ``irds:`` name is
read, so every other path neither needs nor loads it (its import alone registers hundreds of
datasets).

Passage texts are looked up by id in the dataset's document store (``docs_store().get_many``),
never by iterating the corpus: a pool of 10k passages out of MS MARCO's 8.8M reads 10k records.
ir_datasets downloads and builds what a dataset needs on first use, into ``IR_DATASETS_HOME``
(default ``~/.ir_datasets``); a failure there (offline, a licence to accept) is one error line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rubric.errors import UserError
from rubric.extras import load

PREFIX = "irds:"


def irds_id(source: str | Path) -> str | None:
    """The dataset id of an ``irds:ID`` input, or None for a file name."""
    text = str(source)
    return text[len(PREFIX) :] if text.startswith(PREFIX) else None


def _dataset(dataset_id: str, has: str, what: str) -> Any:
    """The dataset ``dataset_id``, which must provide ``has`` (docs, queries, qrels)."""
    source = PREFIX + dataset_id
    ir_datasets = load("irds", "ir_datasets", source)
    if not dataset_id:
        raise UserError(
            f"{source}: give a dataset id after {PREFIX} (e.g. irds:msmarco-passage/trec-dl-2020/judged)"
        )
    try:
        dataset = ir_datasets.load(dataset_id)
    except KeyError:
        raise UserError(f"{source}: no such ir_datasets dataset (`ir_datasets list` lists them)") from None
    if not getattr(dataset, f"has_{has}")():
        raise UserError(f"{source}: this ir_datasets dataset has no {what} ({has})")
    return dataset


def _fetch(source: str, what: str, read: Any) -> Any:
    """``read()``, with ir_datasets' failures to download or open its files as one error line."""
    try:
        return read()
    except UserError:
        raise
    except (OSError, RuntimeError, ValueError) as e:
        raise UserError(f"{source}: ir_datasets could not provide the {what}: {e}") from None


def _read_all(dataset_id: str, has: str, what: str, read: Callable[[Any, str], dict]) -> dict:
    """``read(dataset, source)`` over the dataset's ``has`` (queries, qrels); none is an error."""
    source = PREFIX + dataset_id
    dataset = _dataset(dataset_id, has, what)
    out = _fetch(source, what, lambda: read(dataset, source))
    if not out:
        raise UserError(f"{source}: holds no {what}")
    return out


def irds_queries(dataset_id: str) -> dict[str, str]:
    """``{query_id: text}`` of the dataset's queries (each query's ``default_text()``: the text,
    or a TREC topic's title)."""

    def read(dataset: Any, source: str) -> dict[str, str]:
        out: dict[str, str] = {}
        for q in dataset.queries_iter():
            text = str(q.default_text()).strip()
            if q.query_id in out and out[q.query_id] != text:
                raise UserError(f"{source}: query {q.query_id} again, with another text")
            out[q.query_id] = text
        return out

    return _read_all(dataset_id, "queries", "queries", read)


def irds_qrels(dataset_id: str) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: relevance}}`` of the dataset's qrels (the pytrec_eval layout); a
    document judged twice for a query with two grades is an error, as in a qrels file."""

    def read(dataset: Any, source: str) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = {}
        for j in dataset.qrels_iter():
            docs = out.setdefault(j.query_id, {})
            level = int(j.relevance)
            if docs.get(j.doc_id, level) != level:
                raise UserError(f"{source}: query {j.query_id} document {j.doc_id} is judged again")
            docs[j.doc_id] = level
        return out

    return _read_all(dataset_id, "qrels", "relevance judgments", read)


def irds_texts(dataset_id: str, wanted: Iterable[str] | None) -> dict[str, str]:
    """``{doc_id: text}`` of the ``wanted`` documents found in the dataset (each document's
    ``default_text()``), looked up in its document store; ids it lacks are left out, as ids a
    collection file lacks are. Reading every document of a corpus is refused (``wanted`` None)."""
    source = PREFIX + dataset_id
    dataset = _dataset(dataset_id, "docs", "documents")
    if wanted is None:
        raise UserError(
            f"{source}: documents are looked up by the ids a command needs; a corpus is not read whole"
        )
    ids = sorted(set(wanted))
    if not ids:
        return {}

    def read() -> dict[str, str]:
        store = dataset.docs_store()
        return {doc_id: str(doc.default_text()) for doc_id, doc in store.get_many(ids).items()}

    return _fetch(source, "documents", read)
