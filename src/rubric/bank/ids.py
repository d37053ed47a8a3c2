"""Item ids: ``qid[/facet]/md5(text.strip())``, as the original workbench wrote them.

Checked against every bank of the original release (phase1-data: dl19/dl20/car questions and
nuggets, 13,705 items): all ids equal this formula, so banks we write interoperate and an edited
item's id follows its text.
"""

from __future__ import annotations

import hashlib

from rubric.errors import UserError


def item_id(query_id: str, text: str, facet_id: str | None = None) -> str:
    """The id of a test item with this text."""
    digest = hashlib.md5(text.strip().encode("utf-8")).hexdigest()
    return f"{query_id}/{facet_id}/{digest}" if facet_id else f"{query_id}/{digest}"


KINDS = ("questions", "nuggets")


def check_kind(kind: str) -> str:
    """A bank holds exam questions or nuggets; anything else is a user error naming ``--kind``."""
    if kind not in KINDS:
        raise UserError(f"{{kind}}: expected questions or nuggets, got {kind!r}", "kind")
    return kind
