"""A self-contained HTML review page: per query, passages x items with colour-scaled grades.

One file with inline CSS and JavaScript and the data embedded as JSON, so it opens from disk,
can be mailed to an assessor and needs no server or network. The page builds the grid with DOM
calls that set ``textContent`` and ``title`` only, never ``innerHTML`` from data, and the JSON
is embedded with ``<``, ``>``, ``&`` escaped, so passage or answer text cannot inject markup.
Filters (uncovered passages, spurious items) are computed in the browser from the same rules as
``rubric verify uncovered`` / ``spurious``, with thresholds the reviewer can change.
"""

from __future__ import annotations

import html
import json
import re
from typing import Any

from rubric.verify.matrix import GradeMatrix

# Grade colours, 0 .. 5 (ColorBrewer RdYlGn-like, light to strong); higher scales use the last.
PALETTE = ["#f2f2f2", "#fde0a8", "#fdbf6f", "#d9ef8b", "#91cf60", "#1a9850"]


def page_data(
    matrix: GradeMatrix, item_texts: dict[str, str], min_grade: int, min_judgment: int, spurious_min: int = 5
) -> dict[str, Any]:
    """The JSON the page renders: one entry per query, grades as a list per passage."""
    max_grade = max((g for _, p in matrix.passages() for g in p.grades.values()), default=1)
    queries = []
    for q in matrix.queries:
        queries.append(
            {
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
        )
    return {
        "meta": {
            "prompt_class": matrix.kind.prompt_class,
            "llm": matrix.kind.llm,
            "answers": matrix.answer_kind.prompt_class if matrix.answer_kind else matrix.kind.prompt_class,
            "min_grade": min_grade,
            "min_judgment": min_judgment,
            "spurious_min": spurious_min,
            "max_grade": max(max_grade, 1),
            "palette": PALETTE,
        },
        "queries": queries,
    }


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


def render_page(
    matrix: GradeMatrix,
    item_texts: dict[str, str] | None = None,
    *,
    min_grade: int = 4,
    min_judgment: int = 1,
    spurious_min: int = 5,
    title: str = "rubric verify",
) -> str:
    data = page_data(matrix, item_texts or {}, min_grade, min_judgment, spurious_min)
    parts = {"TITLE": html.escape(title), "CSS": _CSS, "JS": _JS, "DATA": embed_json(data)}
    # one pass, so text inserted for one placeholder is never scanned for another
    return re.sub(r"@(TITLE|CSS|JS|DATA)@", lambda m: parts[m.group(1)], _TEMPLATE)


_CSS = """
body{font:14px/1.35 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#222;background:#fff}
header{position:sticky;top:0;z-index:3;background:#fafafa;border-bottom:1px solid #ddd;padding:8px 16px}
header h1{font-size:17px;margin:0 0 4px}
#meta{color:#555;font-size:12px;margin-bottom:6px}
.controls{display:flex;flex-wrap:wrap;gap:14px;align-items:center}
.controls label{white-space:nowrap}
.controls input[type=number]{width:3.5em}
main{padding:8px 16px}
section{margin:14px 0 26px}
section h2{font-size:15px;margin:6px 0}
section h2 .qid{color:#777;font-weight:normal;margin-right:6px}
.stats{color:#666;font-size:12px;margin-bottom:4px}
table.grid{border-collapse:collapse;font-size:12px}
table.grid th,table.grid td{border:1px solid #fff;padding:0}
table.grid thead th{padding:2px 6px;text-align:left;vertical-align:bottom}
td.pid .ptext{color:#666;margin-left:8px;font-family:system-ui,sans-serif}
table.grid th.item{writing-mode:vertical-rl;transform:rotate(180deg);font-weight:normal;
  font-family:ui-monospace,monospace;padding:4px 2px;max-height:90px;color:#444}
table.grid th.item.spurious{color:#b2182b;font-weight:bold}
td.pid{font-family:ui-monospace,monospace;padding:2px 6px 2px 10px;white-space:nowrap;background:#f7f7f7;
  max-width:420px;overflow:hidden;text-overflow:ellipsis}
td.pid.open{white-space:normal}
td.jud{text-align:center;width:26px;font-weight:bold;color:#333}
td.g{width:26px;height:22px;text-align:center;font-weight:600;cursor:default}
td.g.na{background:repeating-linear-gradient(45deg,#fff,#fff 3px,#eee 3px,#eee 6px)}
tr.uncovered td.pid{box-shadow:inset 4px 0 0 #d73027}
.legend span{display:inline-block;width:22px;text-align:center;margin-right:2px;border-radius:2px}
#tip{position:fixed;z-index:5;max-width:420px;background:#333;color:#fff;padding:6px 8px;border-radius:4px;
  font-size:12px;pointer-events:none;display:none;white-space:pre-wrap}
.hidden{display:none}
"""

_JS = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("rubric-data").textContent);
  var M = DATA.meta;
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function colour(g) {
    if (g === null || g === undefined) return null;
    var top = M.palette.length - 1;
    var k = M.max_grade <= top ? g : Math.round(g * top / M.max_grade);
    return M.palette[Math.max(0, Math.min(top, k))];
  }
  function shortId(id) { var t = id.split("/").pop(); return t.length > 8 ? t.slice(0, 8) : t; }
  function best(p) {
    var b = 0;
    for (var i = 0; i < p.g.length; i++) if (p.g[i] !== null && p.g[i] > b) b = p.g[i];
    return b;
  }
  var ctl = {
    query: document.getElementById("query"),
    minGrade: document.getElementById("min-grade"),
    minJud: document.getElementById("min-judgment"),
    uncovered: document.getElementById("only-uncovered"),
    spurious: document.getElementById("only-spurious"),
    spuriousMin: document.getElementById("spurious-min"),
  };
  var tip = document.getElementById("tip");
  document.getElementById("meta").textContent =
    "grades: " + M.prompt_class + " (" + M.llm + "), answers: " + M.answers + "; " +
    DATA.queries.length + " queries";
  var legend = document.getElementById("legend");
  for (var g = 0; g <= M.max_grade; g++) {
    var s = el("span", "", g); s.style.background = colour(g); legend.appendChild(s);
  }
  var hasJudgments = DATA.queries.some(function (q) {
    return q.passages.some(function (p) { return p.j !== null; });
  });
  if (!hasJudgments) {
    document.querySelectorAll(".needs-judgments").forEach(function (e) { e.classList.add("hidden"); });
  }
  ctl.minGrade.value = M.min_grade;
  ctl.minJud.value = M.min_judgment;
  ctl.spuriousMin.value = M.spurious_min;
  // review.html#uncovered / #spurious open with that filter on (links for assessors, tests)
  ctl.uncovered.checked = /uncovered/.test(location.hash);
  ctl.spurious.checked = /spurious/.test(location.hash);
  var total = 0;
  DATA.queries.forEach(function (q, i) {
    total += q.passages.length;
    var o = el("option", "", q.id + (q.text ? " — " + q.text : ""));
    o.value = String(i);
    ctl.query.appendChild(o);
  });
  ctl.query.value = total <= 3000 ? "all" : "0";

  function spuriousCounts(q, T, J) {
    return q.items.map(function (_, k) {
      var n = 0;
      q.passages.forEach(function (p) {
        if (p.j !== null && p.j < J && p.g[k] !== null && p.g[k] >= T) n++;
      });
      return n;
    });
  }
  function showTip(ev, text) {
    tip.textContent = text; tip.style.display = "block";
    tip.style.left = Math.min(ev.clientX + 12, window.innerWidth - 440) + "px";
    tip.style.top = (ev.clientY + 14) + "px";
  }
  function hideTip() { tip.style.display = "none"; }

  function renderQuery(q) {
    var T = Number(ctl.minGrade.value), J = Number(ctl.minJud.value);
    var S = Number(ctl.spuriousMin.value);
    var spur = spuriousCounts(q, T, J);
    var cols = [];
    q.items.forEach(function (_, k) { if (!ctl.spurious.checked || spur[k] >= S) cols.push(k); });
    var sec = el("section");
    sec.dataset.query = q.id;
    var h = el("h2");
    h.appendChild(el("span", "qid", q.id));
    h.appendChild(document.createTextNode(q.text || ""));
    sec.appendChild(h);
    var table = el("table", "grid"), thead = el("thead"), hr = el("tr");
    hr.appendChild(el("th", "", "passage"));
    hr.appendChild(el("th", "", "judg."));
    cols.forEach(function (k) {
      var it = q.items[k];
      var th = el("th", "item" + (hasJudgments && spur[k] >= S ? " spurious" : ""), shortId(it.id));
      th.title = (it.text ? it.text + "\n" : "") + it.id +
        (hasJudgments ? "\ngraded >= " + T + " on " + spur[k] + " passages judged < " + J : "");
      hr.appendChild(th);
    });
    thead.appendChild(hr); table.appendChild(thead);
    var tbody = el("tbody"), shown = 0, unc = 0;
    q.passages.forEach(function (p) {
      var isUnc = p.j !== null && p.j >= J && best(p) < T;
      if (isUnc) unc++;
      if (ctl.uncovered.checked && !isUnc) return;
      shown++;
      var tr = el("tr", isUnc ? "uncovered" : "");
      var pid = el("td", "pid", p.id);
      pid.appendChild(el("span", "ptext", p.text));
      pid.title = "click to show the whole passage";
      pid.addEventListener("click", function () { pid.classList.toggle("open"); });
      tr.appendChild(pid);
      tr.appendChild(el("td", "jud", p.j === null ? "–" : p.j));
      cols.forEach(function (k) {
        var g = p.g[k];
        var td = el("td", g === null ? "g na" : "g", g === null ? "" : g);
        if (g !== null) {
          td.style.background = colour(g);
          td.dataset.grade = String(g);
          var answer = p.a[k] ? String(p.a[k]) : "(no answer)";
          var text = "grade " + g + " — " + shortId(q.items[k].id) + "\n" + answer;
          td.addEventListener("mouseenter", function (ev) { showTip(ev, text); });
          td.addEventListener("mousemove", function (ev) { showTip(ev, text); });
          td.addEventListener("mouseleave", hideTip);
          td.title = answer;
        }
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    var st = el("div", "stats", shown + " of " + q.passages.length + " passages, " + cols.length + " of " +
      q.items.length + " items" + (hasJudgments ? "; " + unc + " uncovered relevant passages" : ""));
    sec.appendChild(st);
    sec.appendChild(table);
    return sec;
  }
  function render() {
    var main = document.getElementById("grids");
    main.textContent = "";
    var v = ctl.query.value;
    var qs = v === "all" ? DATA.queries : [DATA.queries[Number(v)]];
    qs.forEach(function (q) { main.appendChild(renderQuery(q)); });
    document.body.dataset.rendered = "yes";
  }
  [ctl.query, ctl.minGrade, ctl.minJud, ctl.uncovered, ctl.spurious, ctl.spuriousMin].forEach(function (c) {
    c.addEventListener("change", render);
  });
  render();
})();
"""

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; \
script-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title>
<style>@CSS@</style>
</head>
<body>
<header>
<h1>@TITLE@</h1>
<div id="meta"></div>
<div class="controls">
<label>query <select id="query"><option value="all">all queries</option></select></label>
<label title="an item counts as answered from this grade on">min grade
<input id="min-grade" type="number" min="0" step="1"></label>
<label class="needs-judgments"
  title="passages judged at least this are relevant (TREC DL: 2; its 1 means related)"
>min relevant judgment
<input id="min-judgment" type="number" step="1"></label>
<label class="needs-judgments"><input id="only-uncovered" type="checkbox">
only uncovered relevant passages</label>
<label class="needs-judgments"><input id="only-spurious" type="checkbox"> only spurious items
(graded high on &ge; <input id="spurious-min" type="number" min="1" step="1"> non-relevant)</label>
<span class="legend" id="legend">grades </span>
</div>
</header>
<main id="grids"></main>
<div id="tip"></div>
<script type="application/json" id="rubric-data">@DATA@</script>
<script>@JS@</script>
</body>
</html>
"""
