"""The review loop on a real graded file: LLMJudge dev (TREMA-UNH, FLAN-T5-large grades, 7,263
passages, questions and nuggets).

A review of question and nugget cells is applied; the qrels with ``--prefer HumanReview`` must
equal labels computed straight from the raw JSON with the reviewed grades swapped in, and differ
from the LLM-only qrels exactly where a swap changes the best grade. Where Chromium is installed,
the review page of the whole file is opened, a grade is set and the export applies cleanly.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from rubric.data.trec import read_qrels
from rubric.verify.review import file_sha256, read_review

DEV = ("rubric-llm-judge", "all-ExtraTrees", "dev.jsonl.gz")
QUESTION = "QuestionSelfRatedUnanswerablePromptWithChoices"
NUGGET = "NuggetSelfRatedPrompt"
LLM = "google/flan-t5-large"


def raw_ratings(path: Path) -> dict[str, dict[tuple[str, str], dict[str, int]]]:
    """prompt class -> (query, passage) -> item -> self-rating, read without our models."""
    out: dict[str, dict[tuple[str, str], dict[str, int]]] = {QUESTION: {}, NUGGET: {}}
    with gzip.open(path, "rt") as f:
        for line in f:
            qid, paragraphs = json.loads(line)
            for p in paragraphs:
                for g in p.get("exam_grades") or []:
                    pc = g["prompt_info"]["prompt_class"]
                    if pc in out:
                        out[pc][(qid, p["paragraph_id"])] = {
                            r.get("question_id") or r["nugget_id"]: r["self_rating"]
                            for r in g["self_ratings"]
                        }
    return out


def pick_cells(ratings: dict[tuple[str, str], dict[str, int]], n: int) -> dict[tuple[str, str, str], int]:
    """``n`` cells, one per query, whose new grade changes the passage's best grade: a 5 on a
    passage graded at most 3, or a 0 on the only item graded 5."""
    chosen: dict[tuple[str, str, str], int] = {}
    seen: set[str] = set()
    for (qid, pid), items in sorted(ratings.items()):
        if qid in seen or not items:
            continue
        best = max(items.values())
        fives = [i for i, g in items.items() if g == 5]
        if best <= 3:
            chosen[(qid, pid, sorted(items)[0])] = 5
        elif len(fives) == 1 and len(chosen) % 2:
            chosen[(qid, pid, fives[0])] = 0
        else:
            continue
        seen.add(qid)
        if len(chosen) == n:
            break
    return chosen


def action(cell: tuple[str, str, str], grade: int, prompt_class: str) -> dict:
    qid, pid, item = cell
    return {"type": "grade", "query_id": qid, "paragraph_id": pid, "item_id": item,
            "prompt_class": prompt_class, "llm": LLM, "grade": grade}  # fmt: skip


def test_review_applies_to_the_real_file_and_changes_exactly_the_reviewed_labels(shared, cli, tmp_path):
    dev = shared(*DEV)
    raw = raw_ratings(dev)
    questions, nuggets = pick_cells(raw[QUESTION], 8), pick_cells(raw[NUGGET], 4)
    assert len(questions) == 8 and len(nuggets) == 4
    review = {
        "version": 1, "reviewer": "tester", "source": {"file": dev.name, "sha256": file_sha256(dev)},
        "actions": [action(c, g, QUESTION) for c, g in questions.items()]
        + [action(c, g, NUGGET) for c, g in nuggets.items()],
    }  # fmt: skip
    path = tmp_path / "review.json"
    path.write_text(json.dumps(review), encoding="utf-8")
    out = tmp_path / "reviewed.jsonl.gz"
    result = cli("verify", "apply", path, dev, "-o", out)
    assert result.returncode == 0, result.stderr
    # one record per (passage, prompt type): every cell is on its own passage or type
    assert "12 HumanReview records" in result.stderr and "12 cells (0 confirmed, 12 differ" in result.stderr
    for prompt_class, cells in ((QUESTION, questions), (NUGGET, nuggets)):
        llm, pref = tmp_path / f"{prompt_class}.qrels", tmp_path / f"{prompt_class}-human.qrels"
        assert cli("evaluate", "qrels", out, "--prompt-class", prompt_class, "-o", llm).returncode == 0
        result = cli(
            "evaluate", "qrels", out, "-o", pref, "--prompt-class", prompt_class, "--prefer", "HumanReview"
        )
        assert result.returncode == 0, result.stderr
        before, after = read_qrels(llm), read_qrels(pref)
        expected = {}
        for (qid, pid), items in raw[prompt_class].items():
            items = dict(items)
            for (q, p, i), g in cells.items():
                if (q, p) == (qid, pid):
                    items[i] = g
            expected.setdefault(qid, {})[pid] = max(items.values()) if items else 0
        assert {q: dict(d) for q, d in after.items()} == {q: d for q, d in expected.items() if d}
        differ = {(q, d) for q in before for d in before[q] if before[q][d] != after[q][d]}
        assert differ == {(q, p) for q, p, _ in cells}
    agreement = cli("verify", "agreement", out, "--reviews", "--prompt-class", QUESTION)
    assert agreement.returncode == 0, agreement.stderr
    assert f"{LLM} vs human:tester: 8 cells" in agreement.stderr


def _cdp():
    from helpers import cdp

    return cdp


def test_review_page_of_the_real_file(shared, cli, tmp_path):
    cdp = _cdp()
    if cdp.CHROMIUM is None:
        pytest.skip("chromium is not installed")
    dev = shared(*DEV)
    page_file = tmp_path / "review.html"
    result = cli("verify", "html", dev, "-p", NUGGET, "-j", "2", "-o", page_file)
    assert result.returncode == 0, result.stderr
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    browser = cdp.Browser(tmp_path / "profile", downloads)
    try:
        page = browser.open(page_file.resolve().as_uri())
        # more than 3,000 passages: the page opens on the first query only
        assert page.evaluate("document.querySelectorAll('section').length") == 1
        page.click("#reviewer")
        page.type("tester")
        page.click('td.g[data-q="0"][data-p="0"][data-k="0"]')
        page.press("0")
        page.press("ArrowDown")
        page.press("c")
        page.click("#export")
        done = browser.wait_event("Browser.downloadProgress", lambda e: e.get("state") == "completed")
        assert browser.events_of("Page.javascriptDialogOpening") == []
    finally:
        browser.close()
    review = read_review(done["filePath"])
    assert [a.type for a in review.actions] == ["grade", "confirm"]
    out = tmp_path / "reviewed.jsonl.gz"
    result = cli("verify", "apply", done["filePath"], dev, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "human:tester: 2 cells (1 confirmed" in result.stderr
