"""Query selection: the queries a command works on, from ``--query ID`` and ``--queries FILE``.

IR people look at a few queries at a time (a failure analysis, a pilot before a GPU run, the
judged subset of a topic set). One typed object carries that choice from the options to every
reader: passages, qrels, runs, banks and ASSIGNED records are restricted to the same queries,
and what was asked for but is absent from an input is reported, never silently dropped.

``--query`` is repeatable; ``--queries`` takes any queries file the project reads (workbench
JSON ``{"qid": "text"}``, JSON lines, TREC topics TSV) or a plain list of ids, one per line.
Both together select the union. No option selects every query.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from rubric.errors import UserError

T = TypeVar("T")
V = TypeVar("V")

#: How the options are named in messages (parameters: the CLI spells them as its flags).
OPTIONS = "{query}/{queries_file}"


def read_query_ids(path: str | Path) -> list[str]:
    """The ids of a queries file (JSON, JSON lines, TSV topics) or of a list of ids, in file order."""
    from rubric.data.files import read_text
    from rubric.data.queries import read_queries

    lines = [line.strip() for line in read_text(path).splitlines()]
    content = [line for line in lines if line and not line.startswith("#")]
    if content and not content[0].startswith(("{", "[")) and all(len(line.split()) == 1 for line in content):
        return list(dict.fromkeys(content))  # one id per line
    return list(read_queries(path))


@dataclass(frozen=True)
class QuerySelection:
    """Every query (``ids is None``) or just these ids, in the order given."""

    ids: tuple[str, ...] | None = None
    _wanted: frozenset[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_wanted", frozenset(self.ids or ()))

    @classmethod
    def from_options(
        cls, query: Iterable[str] | None = None, queries_file: str | Path | None = None
    ) -> QuerySelection:
        """The selection of ``--query ID`` (repeatable) and ``--queries FILE``; neither: all."""
        ids = [q.strip() for q in query or []]
        if any(not q for q in ids):
            raise UserError("{query}: a query id cannot be empty", "query")
        if queries_file is not None:
            from_file = read_query_ids(queries_file)
            if not from_file:
                raise UserError(f"{{queries_file}}: {queries_file} holds no query ids", "queries_file")
            ids.extend(from_file)
        return cls(tuple(dict.fromkeys(ids)) if ids else None)

    @classmethod
    def of(cls, queries: Queries) -> QuerySelection:
        """A selection from a selection, any iterable of ids (a list, a qrels dict), None (all), or
        a function that reads one (see :data:`Queries`)."""
        if callable(queries):
            queries = queries()
        if queries is None or isinstance(queries, QuerySelection):
            return queries or cls()
        if isinstance(queries, str):
            return cls((queries,))
        return cls(tuple(dict.fromkeys(str(q) for q in queries)))

    @property
    def everything(self) -> bool:
        return self.ids is None

    def __contains__(self, query_id: object) -> bool:
        return self.ids is None or query_id in self._wanted

    def restrict(self, mapping: Mapping[str, V]) -> dict[str, V]:
        """The entries of ``{query_id: ...}`` (qrels, runs, per-query values) that are selected."""
        if self.ids is None:
            return dict(mapping)
        return {q: v for q, v in mapping.items() if q in self._wanted}

    def select(self, items: Iterable[T], query_id: Callable[[T], str]) -> Iterator[T]:
        """The items (passages lines, bank entries, records) of selected queries, streamed."""
        if self.ids is None:
            yield from items
            return
        for item in items:
            if query_id(item) in self._wanted:
                yield item

    def missing(self, available: Iterable[str]) -> list[str]:
        """Selected ids that ``available`` lacks (empty when everything is selected)."""
        if self.ids is None:
            return []
        have = set(available)
        return [q for q in self.ids if q not in have]

    def check_present(self, available: Iterable[str], where: str) -> list[str]:
        """The selected ids absent from ``where``; an error if none of them is there."""
        have = set(available)
        absent = self.missing(have)
        if self.ids is not None and len(absent) == len(self.ids):
            raise UserError(
                f"{OPTIONS}: none of the selected queries is in {where}: {_some(absent)}",
                "query",
                "queries_file",
            )
        return absent


Queries = QuerySelection | Iterable[str] | Callable[[], QuerySelection] | None
"""The queries a library function works on: a selection, ids, None (every query), or a function
that makes the selection, such as the CLI's reader of ``--query``/``--queries``. The function is
called once the other options are checked, so a bad option fails before a queries file is read."""


def _some(ids: list[str], n: int = 10) -> str:
    return ", ".join(ids[:n]) + (f" and {len(ids) - n} more" if len(ids) > n else "")


def absent_note(ids: list[str], where: str, consequence: str = "") -> str | None:
    """One line for stderr about queries missing from an input (None when nothing is missing)."""
    if not ids:
        return None
    tail = f" ({consequence})" if consequence else ""
    counted = "1 query is" if len(ids) == 1 else f"{len(ids)} queries are"
    return f"{counted} not in {where}{tail}: {_some(ids)}"
