"""The HTML review page, rendered by a real headless Chromium: DOM after JS and a screenshot."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from html.parser import HTMLParser
from importlib import resources
from pathlib import Path

import pytest

from helpers.cdp import CHROMIUM, FLAGS  # noqa: E402
from rubric.data.grade_filter import GradeFilter
from rubric.verify.html import PALETTE, embed_json, render_page
from rubric.verify.matrix import load_matrix

needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    cmd = [CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def png_pixels(path: Path) -> set[tuple[int, int, int]]:
    """The distinct RGB colours of an 8-bit RGB/RGBA non-interlaced PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    prev = bytearray(stride)
    colours: set[tuple[int, int, int]] = set()
    for y in range(height):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 0xFF
            elif f == 2:
                line[i] = (line[i] + b) & 0xFF
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pred = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pred) & 0xFF
        colours.update(tuple(line[i : i + 3]) for i in range(0, stride, bpp))
        prev = line
    return colours


class Tags(HTMLParser):
    """Element names of a serialised DOM (attribute values may hold any text) and the body's attributes."""

    def __init__(self):
        super().__init__()
        self.names: list[str] = []
        self.body_attrs: dict[str, str | None] = {}

    def handle_starttag(self, tag, attrs):
        self.names.append(tag)
        if tag == "body":
            self.body_attrs = dict(attrs)


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5))


def test_embedded_json_cannot_close_the_script_tag():
    text = embed_json({"t": "</script><!-- & \u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text


def test_page_is_self_contained_and_escaped(graded, fx):
    page = render_page(load_matrix(graded, GradeFilter(fx.RATING)), title="<b>review</b>")
    assert "<title>&lt;b&gt;review&lt;/b&gt;</title>" in page
    assert fx.XSS not in page  # the payload only appears JSON-escaped
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)  # nothing loaded from the network
    assert "innerHTML" not in page


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_page_script_parses(tmp_path):
    """`node --check` parses the page's JavaScript as shipped (the browser tests, where chromium is
    installed, also run it: the grid is built by it)."""
    script = resources.files("rubric.verify") / "page" / "review.js"
    ok = subprocess.run(["node", "--check", str(script)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    broken = tmp_path / "broken.js"
    broken.write_text(script.read_text(encoding="utf-8").replace("function (", "function ((", 1))
    bad = subprocess.run(["node", "--check", str(broken)], capture_output=True, text=True)
    assert bad.returncode != 0 and "SyntaxError" in bad.stderr


def test_the_page_is_its_package_files_joined(graded, fx):
    """The page's HTML, CSS and JavaScript are the package files, inserted as they are."""
    page = resources.files("rubric.verify") / "page"
    text = render_page(load_matrix(graded, GradeFilter(fx.RATING)))
    css, js = (
        (page / "review.css").read_text(encoding="utf-8"),
        (page / "review.js").read_text(encoding="utf-8"),
    )
    assert f"<style>\n{css}</style>" in text and f"<script>\n{js}</script>" in text
    head = (page / "review.html").read_text(encoding="utf-8").split("@TITLE@")[0]
    assert text.startswith(head)


@needs_chromium
def test_grid_renders_in_headless_chromium(tmp_path, graded, fx, cli):
    out = tmp_path / "review.html"
    bank = fx.write_bank_file(tmp_path / "bank.jsonl")
    result = cli("verify", "html", graded, "-p", fx.RATING, "--bank", bank, "--spurious-min", "1", "-o", out)
    assert result.returncode == 0, result.stderr
    url = out.resolve().as_uri()

    dom = chromium(tmp_path, "--dump-dom", url)
    assert dom.returncode == 0, dom.stderr
    html = dom.stdout
    assert 'data-rendered="yes"' in html
    cells = re.findall(r'<td class="g"[^>]*data-grade="(\d)"', html)
    assert len(cells) == 5 * 3 + 3 * 2  # every graded (passage, item) pair of both queries
    assert sorted(map(int, cells)).count(5) == 3
    assert len(re.findall(r"<section ", html)) == 2
    # the injected markup stayed text: no element was created and no script ran
    tags = Tags()
    tags.feed(html)
    # one script of code, the settings block and one JSON block per query (loaded on demand)
    assert "img" not in tags.names and tags.names.count("script") == 2 + 2
    assert "data-pwned" not in tags.body_attrs
    assert "what is a cat?" in html  # item texts from --bank in the column titles
    assert "1 uncovered relevant passage (red bar)" in html  # q1: p2 is judged 2, best grade 1

    # filters: only p2 is uncovered (3 cells); only items b and e are spurious (5 + 3 cells)
    uncovered = chromium(tmp_path, "--dump-dom", url + "#uncovered").stdout
    assert re.findall(r'<tr class="uncovered">.*?</tr>', uncovered).__len__() == 1
    assert len(re.findall(r'<td class="g"', uncovered)) == 3
    spurious = chromium(tmp_path, "--dump-dom", url + "#spurious").stdout
    assert len(re.findall(r'<td class="g"', spurious)) == 5 + 3
    # the columns are labelled by the items' texts (from --bank), not by their ids
    labels = re.findall(r'<th class="item spurious"[^>]*><span class="label">([^<]*)</span></th>', spurious)
    assert labels == ["how long do cats live?", "who wrote trec_eval?"]

    shot = tmp_path / "grid.png"
    res = chromium(tmp_path, f"--screenshot={shot}", "--window-size=1000,700", url)
    assert shot.exists(), res.stderr
    colours = png_pixels(shot)
    for grade in (0, 4, 5):
        assert rgb(PALETTE[grade]) in colours, f"no cell of grade {grade} painted"
