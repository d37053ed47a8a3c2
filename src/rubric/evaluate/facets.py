"""Facet-level qrels for CAR-style banks: one label per (query facet, passage).

TREC CAR topics are a page title with section facets, and a bank has one entry per facet
(``query_id``, ``facet_id``); item ids are ``qid/facet/md5(text)``. The original workbench's
``--qrel-query-facets`` writes qrels whose query id is the facet, ``qid/facet`` (the item id up
to its last ``/``), so trec_eval scores every facet as a query. We do the same:

* question/nugget grades: the items of a passage are grouped by that prefix, and each group
  gets a label by the usual rule (``max``: best grade of the facet's items, ``count``, ``nth``);
* items whose id has no ``/`` (TQA's ``NDQ_...`` question ids) belong to no facet in particular:
  they count for every facet of their query, as in the original;
* direct grades (passage, query) give every facet of the query the passage's label.

The facets of a query come from the bank (``qid/facet_id`` of its entries), which is needed
for direct grades and for facet-less item ids. Unlike the original's count export, a facet with
no answered item gets a 0 line (judged, not relevant) rather than no line.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from rubric.data.labels import LabelRule
from rubric.data.models import TestBank
from rubric.errors import UserError

FacetMap = dict[str, list[str]]  # query id -> its facet query ids ("qid/facet")


def bank_facets(banks: Iterable[TestBank]) -> FacetMap:
    """``{query_id: ["qid/facet_id", ...]}`` of a bank's facet entries, in bank order."""
    out: dict[str, list[str]] = defaultdict(list)
    for b in banks:
        if b.facet_id:
            facet = f"{b.query_id}/{b.facet_id}"
            if facet not in out[b.query_id]:
                out[b.query_id].append(facet)
    return dict(out)


def item_facet(item_id: str) -> str | None:
    """The facet query id of an item (its id up to the last ``/``), None for facet-less ids."""
    head, sep, _ = item_id.rpartition("/")
    return head if sep else None


def _facets_of_query(query_id: str, facets: FacetMap, source: str) -> list[str]:
    found = facets.get(query_id)
    if not found:
        raise UserError(
            f"{source}: query {query_id} has grades that belong to every facet, but no facets are "
            "known for it; give the facet bank with {facet_bank}",
            "facet_bank",
        )
    return found


def direct_facet_labels(query_id: str, label: int, facets: FacetMap, source: str) -> dict[str, int]:
    """A direct grade (its ``label``) labels the passage for every facet of its query."""
    return {f: label for f in _facets_of_query(query_id, facets, source)}


def item_facet_labels(
    query_id: str, grades: dict[str, int], rule: LabelRule, facets: FacetMap, source: str
) -> dict[str, int]:
    """``{facet query id: label}`` from a passage's item grades, grouped by the items' facets."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for item, g in grades.items():
        facet = item_facet(item)
        for f in [facet] if facet else _facets_of_query(query_id, facets, source):
            grouped[f].append(g)
    return {f: rule.apply(gs) for f, gs in grouped.items()}
