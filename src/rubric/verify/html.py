"""A self-contained HTML review page: per query, passages x items with colour-scaled grades.

One file with inline CSS and JavaScript and the data embedded as JSON, so it opens from disk,
can be mailed to an assessor and needs no server or network. Its HTML, CSS and JavaScript are
package files (``page/review.html``, ``review.css``, ``review.js``) joined here. The page
builds the grid with DOM calls that set ``textContent``, ``value`` and attributes only, never
``innerHTML`` from data, and the JSON is embedded with ``<``, ``>``, ``&`` escaped, so passage
or answer text (and what a reviewer types) cannot inject markup. Filters (uncovered passages,
spurious items) are computed in the browser from the same rules as ``rubric verify uncovered``
/ ``spurious``, with thresholds the reviewer can change.

It is also the review tool of the human in the loop: a reviewer corrects or confirms grades,
removes, rewrites or adds items and writes notes. The work is kept in the browser's local
storage under the sha256 of the graded file (so two pages never mix), and "Export review"
downloads a review file (:mod:`rubric.verify.review`) for `rubric verify apply`.
"""

from __future__ import annotations

import functools
import html
import io
import json
import logging
import os
import re
from importlib import resources
from pathlib import Path
from typing import IO, Any

from rubric.verify.matrix import GradeMatrix, QueryGrades
from rubric.verify.report import GradedSelection, selected_grades

# Grade colours, 0 .. 5 (ColorBrewer RdYlGn-like, light to strong); higher scales use the last.
PALETTE = ["#f2f2f2", "#fde0a8", "#fdbf6f", "#d9ef8b", "#91cf60", "#1a9850"]

log = logging.getLogger(__name__)


def query_block(q: QueryGrades, item_texts: dict[str, str]) -> dict[str, Any]:
    """The JSON of one query: its items, and per passage its grades and answers as lists."""
    return {
        "id": q.query_id,
        "text": q.query_text,
        "items": [{"id": i, "text": item_texts.get(i, "")} for i in q.items],
        "passages": [
            {
                "id": p.passage_id,
                "text": p.text,
                "j": p.judgment,
                "g": [p.grades.get(i) for i in q.items],
                "a": [p.answers.get(i, "") for i in q.items],
            }
            for p in q.passages
        ],
    }


def page_data(
    matrix: GradeMatrix,
    item_texts: dict[str, str],
    min_grade: int,
    *,
    min_judgment: int,
    spurious_min: int = 5,
    source: dict[str, str] | None = None,
) -> dict[str, Any]:
    """All the page's data as one JSON value (``queries``: every query block), as the page sees it
    once it has loaded every query; :func:`write_page` embeds the same, one block per query."""
    queries = [query_block(q, item_texts) for q in matrix.queries]
    max_grade = max((g for q in queries for p in q["passages"] for g in p["g"] if g is not None), default=1)
    meta = _meta(matrix, min_grade, min_judgment, spurious_min, max_grade)
    return {"meta": meta, "source": _source(source), "queries": queries}


def _meta(matrix: GradeMatrix, min_grade: int, min_judgment: int, spurious_min: int, max_grade: int) -> dict:
    return {
        "prompt_class": matrix.kind.prompt_class,
        "llm": matrix.kind.llm,
        "answers": matrix.answer_kind.prompt_class if matrix.answer_kind else matrix.kind.prompt_class,
        "min_grade": min_grade,
        "min_judgment": min_judgment,
        "spurious_min": spurious_min,
        "max_grade": max(max_grade, 1),
        "palette": PALETTE,
        "prompt_type": matrix.kind.prompt_type,
    }


def _source(source: dict[str, str] | None) -> dict[str, str]:
    """``source`` (``{"file", "sha256"}`` of the graded file) goes into exported reviews and keys
    the reviewer's saved work; without it the page shows grades but cannot export a review."""
    return source or {"file": "", "sha256": ""}


def embed_json(data: Any) -> str:
    """JSON safe inside ``<script type="application/json">`` (no tag, comment or entity breaks out)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def write_page(
    out: IO[str],
    matrix: GradeMatrix,
    item_texts: dict[str, str] | None = None,
    *,
    min_grade: int = 4,
    min_judgment: int = 1,
    spurious_min: int = 5,
    title: str = "rubric verify",
    source: dict[str, str] | None = None,
) -> tuple[int, int]:
    """Write the page to ``out`` one query at a time; returns (queries, passages).

    Each query is its own ``<script type="application/json" id="rubric-qN">`` block, parsed by the
    page only when the query is shown (or exported), so neither this command nor the browser
    holds every query at once; the last block (``rubric-data``) holds the settings and a small
    index of the queries (id, text, passages, judged or not).
    """
    texts = item_texts or {}
    head, tail = page_part("review.html").split("@QUERIES@")
    fill = {"TITLE": html.escape(title), "CSS": page_part("review.css"), "JS": page_part("review.js")}
    out.write(re.sub(r"@(TITLE|CSS)@", lambda m: fill[m.group(1)], head))
    index = []
    max_grade = 1
    n_passages = 0
    for i, q in enumerate(matrix.queries):
        block = query_block(q, texts)
        max_grade = max([max_grade, *(g for p in block["passages"] for g in p["g"] if g is not None)])
        n_passages += len(q.passages)
        index.append(
            {"id": q.query_id, "text": q.query_text, "n": len(q.passages),
             "judged": any(p.judgment is not None for p in q.passages)}
        )  # fmt: skip
        out.write(f'<script type="application/json" id="rubric-q{i}">{embed_json(block)}</script>\n')
    data = {
        "meta": _meta(matrix, min_grade, min_judgment, spurious_min, max_grade),
        "source": _source(source),
        "queries": index,
    }
    fill["DATA"] = embed_json(data)
    # one pass, so text inserted for one placeholder is never scanned for another
    out.write(re.sub(r"@(TITLE|JS|DATA)@", lambda m: fill[m.group(1)], tail))
    return len(index), n_passages


def render_page(
    matrix: GradeMatrix,
    item_texts: dict[str, str] | None = None,
    *,
    min_grade: int = 4,
    min_judgment: int = 1,
    spurious_min: int = 5,
    title: str = "rubric verify",
    source: dict[str, str] | None = None,
) -> str:
    """The page as one string (see :func:`write_page`)."""
    buf = io.StringIO()
    write_page(
        buf,
        matrix,
        item_texts,
        min_grade=min_grade,
        min_judgment=min_judgment,
        spurious_min=spurious_min,
        title=title,
        source=source,
    )
    return buf.getvalue()


@functools.cache
def page_part(name: str) -> str:
    """A part of the page as shipped in the package (``page/review.css``, ``.js``, ``.html``):
    files, so the JavaScript and CSS are edited, linted and parsed as what they are."""
    return (resources.files("rubric.verify") / "page" / name).read_text(encoding="utf-8")


def review_page(
    selection: GradedSelection,
    output: Path,
    item_texts: dict[str, str] | None,
    answer: str,
    *,
    min_grade: int = 4,
    min_judgment: int = 1,
    spurious_min: int = 5,
    title: str = "rubric verify",
) -> tuple[int, int]:
    """`rubric verify html`: write the page of the selected grades to ``output`` (atomically; ``-``
    is stdout), with the graded file's name and sha256 so reviews of it can be told from reviews
    of another file; notes the queries, passages and size written. Returns (queries, passages)."""
    from rubric.data.files import open_output
    from rubric.verify.review import file_sha256

    with selected_grades(selection, answer=answer) as m:
        with open_output(output) as out:
            n_queries, n_passages = write_page(
                out,
                m,
                item_texts,
                min_grade=min_grade,
                min_judgment=min_judgment,
                spurious_min=spurious_min,
                title=title,
                source={"file": selection.graded.name, "sha256": file_sha256(m.readable)},
            )
    size = os.stat(output).st_size // 1024 if os.path.isfile(output) else 0
    log.info("wrote %s: %d queries, %d passages, %s KiB", output, n_queries, n_passages, size)
    return n_queries, n_passages
