(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("rubric-data").textContent);
  var M = DATA.meta;
  var SRC = DATA.source || {file: "", sha256: ""};
  // DATA.queries is an index ({id, text, n, judged}); a query's grid data is its own JSON block,
  // parsed the first time the query is shown or exported (large files open on one query)
  var INDEX = DATA.queries, LOADED = [];
  function query(i) {
    if (!LOADED[i]) LOADED[i] = JSON.parse(document.getElementById("rubric-q" + i).textContent);
    return LOADED[i];
  }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function button(text, cls, onClick, title) {
    var b = el("button", cls, text);
    b.type = "button";
    if (title) b.title = title;
    b.addEventListener("click", onClick);
    return b;
  }
  function colour(g) {
    if (g === null || g === undefined) return null;
    var top = M.palette.length - 1;
    var k = M.max_grade <= top ? g : Math.round(g * top / M.max_grade);
    return M.palette[Math.max(0, Math.min(top, k))];
  }
  function shortId(id) { var t = id.split("/").pop(); return t.length > 8 ? t.slice(0, 8) : t; }
  // an item's column label: its text cut at a word boundary (the full text is the tooltip);
  // the id's hash only when the page was made without the bank's texts
  var LABEL_CHARS = 56;
  function shorten(text, n) {
    var t = String(text).replace(/\s+/g, " ").trim();
    if (t.length <= n) return t;
    var cut = t.slice(0, n - 1), sp = cut.lastIndexOf(" ");
    return (sp > n / 2 ? cut.slice(0, sp) : cut) + "…";
  }
  function itemLabel(q, k) {
    var it = q.items[k], st = itemState(q, it.id);
    var text = st && st.op === "rewrite" ? st.t : it.text;
    return text ? shorten(text, LABEL_CHARS) : shortId(it.id);
  }
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
    INDEX.length + " queries" +
    (SRC.sha256 ? "; file " + SRC.file + " (sha256 " + SRC.sha256.slice(0, 12) + "…)" : "");
  var legend = document.getElementById("legend");
  for (var g = 0; g <= M.max_grade; g++) {
    var s = el("span", "", g); s.style.background = colour(g); legend.appendChild(s);
  }
  var hasJudgments = INDEX.some(function (q) { return q.judged; });
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
  INDEX.forEach(function (q, i) {
    total += q.n;
    var o = el("option", "", q.id + (q.text ? " — " + q.text : ""));
    o.value = String(i);
    ctl.query.appendChild(o);
  });
  ctl.query.value = total <= 3000 ? "all" : "0";

  // --- the reviewer's work: kept in localStorage under the graded file's sha256 ----------------
  // cells:  JSON [qid, pid, item] -> {g: grade | null, c: confirmed, n: note}
  // items:  JSON [qid, item] -> {op: "remove" | "rewrite" | null, t: new text, n: note}
  // added:  qid -> [text, ...];   qnotes: qid -> note
  var KEY = "rubric-review:" + (SRC.sha256 || "unsaved:" + location.pathname);
  var NAME_KEY = "rubric-review:reviewer";
  var storage = null;
  try { storage = window.localStorage; storage.getItem(NAME_KEY); } catch (e) { storage = null; }
  function blank() { return {cells: {}, items: {}, added: {}, qnotes: {}}; }
  var R = blank();
  if (storage) {
    try {
      var saved = JSON.parse(storage.getItem(KEY) || "null");
      if (saved && typeof saved === "object") {
        ["cells", "items", "added", "qnotes"].forEach(function (k) {
          if (saved[k] && typeof saved[k] === "object") R[k] = saved[k];
        });
      }
    } catch (e) { R = blank(); }
  }
  var ui = {
    reviewer: document.getElementById("reviewer"),
    counts: document.getElementById("counts"),
    exportBtn: document.getElementById("export"),
    clearBtn: document.getElementById("clear"),
    status: document.getElementById("status"),
    editor: document.getElementById("editor"),
  };
  function cellKey(q, pid, item) { return JSON.stringify([q.id, pid, item]); }
  function itemKey(q, item) { return JSON.stringify([q.id, item]); }
  function cellState(q, pid, item) { return R.cells[cellKey(q, pid, item)] || null; }
  function itemState(q, item) { return R.items[itemKey(q, item)] || null; }
  function tidy(map, key) {
    var v = map[key];
    if (!v) return;
    var empty = true;
    Object.keys(v).forEach(function (f) {
      if (v[f] !== null && v[f] !== "" && v[f] !== false) empty = false;
    });
    if (empty) delete map[key];
  }
  function setStatus(text) { ui.status.textContent = text; }
  function save() {
    if (!storage) { setStatus("not saved: this browser keeps no local storage for files"); return; }
    try { storage.setItem(KEY, JSON.stringify(R)); setStatus("saved in this browser"); }
    catch (e) { setStatus("not saved: " + e.name); }
  }
  function tally() {
    var t = {grades: 0, confirmed: 0, removed: 0, rewritten: 0, added: 0, notes: 0};
    Object.keys(R.cells).forEach(function (k) {
      var c = R.cells[k];
      if (c.g !== null && c.g !== undefined) t.grades++;
      else if (c.c) t.confirmed++;
      if (c.n) t.notes++;
    });
    Object.keys(R.items).forEach(function (k) {
      var it = R.items[k];
      if (it.op === "remove") t.removed++;
      if (it.op === "rewrite") t.rewritten++;
      if (it.n) t.notes++;
    });
    Object.keys(R.added).forEach(function (q) { t.added += R.added[q].length; });
    Object.keys(R.qnotes).forEach(function (q) { if (R.qnotes[q]) t.notes++; });
    return t;
  }
  function showCounts() {
    var t = tally(), parts = [];
    [["grades", "grade"], ["confirmed", "confirmed"], ["removed", "removed"], ["rewritten", "rewritten"],
     ["added", "added"], ["notes", "note"]
    ].forEach(function (x) { if (t[x[0]]) parts.push(t[x[0]] + " " + (t[x[0]] === 1 ? x[1] : x[0])); });
    ui.counts.textContent = parts.length ? parts.join(" · ") : "no review actions yet";
    ui.counts.dataset.total = String(t.grades + t.confirmed + t.removed + t.rewritten + t.added + t.notes);
    ui.clearBtn.disabled = !parts.length;
  }
  function changed() { save(); showCounts(); }

  // reviewer name: asked once, remembered for every page of this browser
  if (storage) { try { ui.reviewer.value = storage.getItem(NAME_KEY) || ""; } catch (e) {} }
  ui.reviewer.addEventListener("input", function () {
    ui.reviewer.classList.remove("missing");
    if (storage) { try { storage.setItem(NAME_KEY, ui.reviewer.value.trim()); } catch (e) {} }
  });

  function actions() {
    var out = [];
    function withNote(a, note) { if (note) a.note = note; return a; }
    var reviewed = {};  // only queries with review actions are loaded for the export
    [R.cells, R.items].forEach(function (map) {
      Object.keys(map).forEach(function (k) { reviewed[JSON.parse(k)[0]] = true; });
    });
    Object.keys(R.added).concat(Object.keys(R.qnotes)).forEach(function (id) { reviewed[id] = true; });
    INDEX.forEach(function (entry, i) {
      if (!reviewed[entry.id]) return;
      var q = query(i);
      if (R.qnotes[q.id]) out.push({type: "note", query_id: q.id, text: R.qnotes[q.id]});
      q.items.forEach(function (it) {
        var st = itemState(q, it.id);
        if (!st) return;
        if (st.op === "remove") {
          out.push(withNote({type: "remove_item", query_id: q.id, item_id: it.id}, st.n));
        } else if (st.op === "rewrite") {
          out.push(withNote({type: "rewrite_item", query_id: q.id, item_id: it.id, text: st.t}, st.n));
        }
        else if (st.n) out.push({type: "note", query_id: q.id, item_id: it.id, text: st.n});
      });
      (R.added[q.id] || []).forEach(function (text) {
        out.push({type: "add_item", query_id: q.id, text: text});
      });
      q.passages.forEach(function (p) {
        q.items.forEach(function (it) {
          var c = cellState(q, p.id, it.id);
          if (!c) return;
          var base = {query_id: q.id, paragraph_id: p.id, item_id: it.id,
                      prompt_class: M.prompt_class, llm: M.llm};
          if (c.g !== null && c.g !== undefined) {
            base.type = "grade"; base.grade = c.g; out.push(withNote(base, c.n));
          } else if (c.c) {
            base.type = "confirm"; out.push(withNote(base, c.n));
          } else if (c.n) {
            out.push({type: "note", query_id: q.id, paragraph_id: p.id, item_id: it.id, text: c.n});
          }
        });
      });
    });
    return out;
  }
  function exportReview() {
    var name = ui.reviewer.value.trim();
    if (!name) {
      ui.reviewer.classList.add("missing"); ui.reviewer.focus();
      setStatus("enter your name first: it goes into the review file");
      return;
    }
    var review = {version: 1, reviewer: name, source: {file: SRC.file, sha256: SRC.sha256},
                  created: new Date().toISOString(), actions: actions()};
    var blob = new Blob([JSON.stringify(review, null, 1) + "\n"], {type: "application/json"});
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = "review-" + (name.replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 40) || "reviewer") + "-" +
      SRC.sha256.slice(0, 8) + ".json";
    a.className = "hidden";
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 2000);
    setStatus("exported " + review.actions.length + " actions as " + a.download);
  }
  ui.exportBtn.addEventListener("click", exportReview);
  if (!SRC.sha256) {
    ui.exportBtn.disabled = true;
    ui.exportBtn.title = "made without the graded file's digest; make the page with `rubric verify html`";
  }
  var clearArmed = null;
  ui.clearBtn.addEventListener("click", function () {
    if (!clearArmed) {
      ui.clearBtn.textContent = "Really clear all " + ui.counts.dataset.total + "?";
      ui.clearBtn.classList.add("danger");
      clearArmed = setTimeout(disarm, 4000);
      return;
    }
    disarm();
    R = blank(); closeEditor(); changed(); render();
    setStatus("cleared");
  });
  function disarm() {
    clearTimeout(clearArmed); clearArmed = null;
    ui.clearBtn.textContent = "Clear"; ui.clearBtn.classList.remove("danger");
  }

  // --- the editor panel -------------------------------------------------------------------------
  var current = null;  // {kind: "cell", q, pi, k} | {kind: "item", q, k} | {kind: "query", q}
  function closeEditor() {
    current = null;
    ui.editor.classList.add("hidden");
    ui.editor.textContent = "";
    document.querySelectorAll("td.g.current").forEach(function (td) { td.classList.remove("current"); });
  }
  function panel(title) {
    ui.editor.textContent = "";
    ui.editor.classList.remove("hidden");
    ui.editor.appendChild(button("×", "close", closeEditor, "close (Esc)"));
    ui.editor.appendChild(el("h3", "", title));
  }
  function noteBox(label, value, onInput) {
    ui.editor.appendChild(el("label", "lab", label));
    var t = el("textarea", "note");
    t.value = value || "";
    t.addEventListener("input", function () { onInput(t.value.trim()); });
    ui.editor.appendChild(t);
    return t;
  }
  var NO_TEXT = "(no text: make the page with --bank to see item texts)";
  function itemTitle(q, k) {
    var it = q.items[k], st = itemState(q, it.id);
    if (st && st.op === "rewrite") return st.t;
    return it.text || NO_TEXT;
  }
  function editCell(q, pi, k) {
    var p = q.passages[pi], it = q.items[k], llmGrade = p.g[k];
    current = {kind: "cell", q: q, pi: pi, k: k};
    panel(q.id + " · passage " + p.id);
    ui.editor.appendChild(el("div", "itext", shortId(it.id) + ": " + itemTitle(q, k)));
    ui.editor.appendChild(el("div", "ptext", p.text));
    ui.editor.appendChild(el("div", "answer", (p.j === null ? "not judged" : "judged " + p.j) + "; " +
      (llmGrade === null ? "the LLM gave no grade here" :
       "LLM grade " + llmGrade + ", answer: " + (p.a[k] ? String(p.a[k]) : "(none)"))));
    var st = cellState(q, p.id, it.id) || {};
    ui.editor.appendChild(el("label", "lab", "your grade"));
    var row = el("div", "row grades");
    for (var g = 0; g <= 5; g++) {
      (function (g) {
        var b = button(String(g), (st.g === g ? "on" : "") + (llmGrade === g ? " llm" : ""),
          function () { setCell(q, pi, k, {g: g, c: false}); },
          "grade " + g + " (key " + g + ")" + (llmGrade === g ? "; the LLM's grade" : ""));
        b.style.background = colour(g);
        b.dataset.grade = String(g);
        row.appendChild(b);
      })(g);
    }
    ui.editor.appendChild(row);
    var acts = el("div", "row");
    var conf = button(st.c ? "✓ Confirmed" : "✓ Confirm LLM grade " + (llmGrade === null ? "" : llmGrade),
      st.c ? "primary" : "", function () { setCell(q, pi, k, {g: null, c: true}); },
      "the LLM is right (key c)");
    conf.disabled = llmGrade === null;
    conf.dataset.action = "confirm";
    acts.appendChild(conf);
    var reset = button("Reset", "", function () { setCell(q, pi, k, {g: null, c: false}); },
      "back to the LLM's grade");
    reset.disabled = !(st.c || (st.g !== null && st.g !== undefined));
    acts.appendChild(reset);
    ui.editor.appendChild(acts);
    noteBox("note on this cell", st.n, function (v) {
      var key = cellKey(q, p.id, it.id);
      R.cells[key] = Object.assign({g: null, c: false}, R.cells[key] || {}, {n: v});
      tidy(R.cells, key); paintCells(q, p.id, it.id); changed();
    });
    ui.editor.appendChild(el("div", "keys", "keys: 0–5 grade · c confirm · arrows move · Esc close"));
    markCurrent();
  }
  function setCell(q, pi, k, change) {
    var p = q.passages[pi], it = q.items[k], key = cellKey(q, p.id, it.id);
    R.cells[key] = Object.assign({g: null, c: false, n: ""}, R.cells[key] || {}, change);
    tidy(R.cells, key);
    paintCells(q, p.id, it.id);
    changed();
    editCell(q, pi, k);
  }
  function editItem(q, k) {
    var it = q.items[k];
    current = {kind: "item", q: q, k: k};
    panel(q.id + " · item " + shortId(it.id));
    var st = itemState(q, it.id) || {};
    ui.editor.appendChild(el("div", "itext" + (st.op === "remove" ? " struck" : ""), it.text || NO_TEXT));
    ui.editor.appendChild(el("div", "answer", it.id));
    var row = el("div", "row");
    if (st.op === "remove") {
      row.appendChild(button("Keep this item", "", function () { setItem(q, k, {op: null, t: ""}); }));
    } else {
      var rm = button("Mark bad (remove)", "danger", function () { setItem(q, k, {op: "remove", t: ""}); },
        "the item is wrong or useless: remove it from the bank");
      rm.dataset.action = "remove";
      row.appendChild(rm);
    }
    ui.editor.appendChild(row);
    ui.editor.appendChild(el("label", "lab", "rewrite the item (its id follows the new text)"));
    var t = el("textarea", "rewrite");
    t.value = st.op === "rewrite" ? st.t : (it.text || "");
    ui.editor.appendChild(t);
    var row2 = el("div", "row");
    var sv = button("Save rewrite", "primary", function () {
      var v = t.value.trim();
      if (!v || v === it.text) { setStatus("the rewrite is empty or unchanged"); return; }
      setItem(q, k, {op: "rewrite", t: v});
    });
    sv.dataset.action = "rewrite";
    row2.appendChild(sv);
    if (st.op === "rewrite") {
      row2.appendChild(button("Undo rewrite", "", function () { setItem(q, k, {op: null, t: ""}); }));
    }
    ui.editor.appendChild(row2);
    noteBox("note on this item", st.n, function (v) {
      var key = itemKey(q, it.id);
      R.items[key] = Object.assign({op: null, t: ""}, R.items[key] || {}, {n: v});
      tidy(R.items, key); paintHeaders(q); changed();
    });
  }
  function setItem(q, k, change) {
    var key = itemKey(q, q.items[k].id);
    R.items[key] = Object.assign({op: null, t: "", n: ""}, R.items[key] || {}, change);
    tidy(R.items, key);
    changed();
    render();
    editItem(q, k);
  }
  function editQuery(q) {
    current = {kind: "query", q: q};
    panel("query " + q.id + (q.text ? " — " + q.text : ""));
    ui.editor.appendChild(el("label", "lab", "add a missing item"));
    var t = el("textarea", "add");
    t.placeholder = M.prompt_type === "nugget" ? "a key fact an answer should state" :
      "a question a relevant passage answers";
    ui.editor.appendChild(t);
    var row = el("div", "row");
    var add = button("Add item", "primary", function () {
      var v = t.value.trim();
      if (!v) return;
      var list = R.added[q.id] || (R.added[q.id] = []);
      if (list.indexOf(v) < 0) list.push(v);
      changed(); render(); editQuery(q);
    });
    add.dataset.action = "add";
    row.appendChild(add);
    ui.editor.appendChild(row);
    var list = R.added[q.id] || [];
    if (list.length) {
      ui.editor.appendChild(el("label", "lab", "added items"));
      var ul = el("ul");
      list.forEach(function (text, i) {
        var li = el("li", "", text + " ");
        li.appendChild(button("undo", "", function () {
          list.splice(i, 1);
          if (!list.length) delete R.added[q.id];
          changed(); render(); editQuery(q);
        }));
        ul.appendChild(li);
      });
      ui.editor.appendChild(ul);
    }
    noteBox("note on this query", R.qnotes[q.id], function (v) {
      if (v) R.qnotes[q.id] = v; else delete R.qnotes[q.id];
      changed(); paintQueryReview(q);
    });
  }

  // --- painting review state onto the grid -------------------------------------------------------
  function paintCell(td, q, p, k) {
    var it = q.items[k], llmGrade = p.g[k], st = cellState(q, p.id, it.id) || {};
    var human = st.g !== null && st.g !== undefined;
    var shown = human ? st.g : llmGrade;
    var ist = itemState(q, it.id);
    td.className = "g" + (shown === null ? " na" : "") + (human ? " human" : "") +
      (st.c ? " confirmed" : "") + (st.n ? " noted" : "") + (ist && ist.op === "remove" ? " off" : "");
    td.textContent = shown === null ? "" : String(shown) + (st.c ? "✓" : "");
    td.style.background = shown === null ? "" : colour(shown);
    if (llmGrade !== null) td.dataset.grade = String(llmGrade);
    if (human) td.dataset.human = String(st.g); else delete td.dataset.human;
    var answer = p.a[k] ? String(p.a[k]) : "(no answer)";
    td.title = llmGrade === null ? "click to grade" : answer;
  }
  function tipText(td) {
    var c = cellOf(td), it = c.q.items[c.k], llmGrade = c.p.g[c.k];
    var st = cellState(c.q, c.p.id, it.id) || {};
    var human = st.g !== null && st.g !== undefined;
    var lines = [(llmGrade === null ? "not graded by the LLM" : "LLM grade " + llmGrade) +
      (human ? ", your grade " + st.g : st.c ? ", confirmed" : "") + " — " + itemLabel(c.q, c.k)];
    if (llmGrade !== null) lines.push(c.p.a[c.k] ? String(c.p.a[c.k]) : "(no answer)");
    if (st.n) lines.push("note: " + st.n);
    return lines.join("\n");
  }
  function paintCells(q, pid, item) {
    document.querySelectorAll("td.g").forEach(function (td) {
      var c = cellOf(td);
      if (c && c.q === q && c.p.id === pid && c.q.items[c.k].id === item) paintCell(td, c.q, c.p, c.k);
    });
    markCurrent();
  }
  function paintHeader(th, q, k) {
    var it = q.items[k], st = itemState(q, it.id) || {};
    th.classList.toggle("removed", st.op === "remove");
    th.classList.toggle("rewritten", st.op === "rewrite");
    th.classList.toggle("noted", !!st.n);
    th.textContent = "";
    th.appendChild(el("span", "label", (st.op === "rewrite" ? "✎ " : "") + itemLabel(q, k)));
    th.title = (st.op === "rewrite" ? "rewritten: " + st.t + "\nwas: " : "") +
      (it.text ? it.text + "\n" : "") + it.id +
      (st.op === "remove" ? "\nmarked bad (removed)" : "") + (st.n ? "\nnote: " + st.n : "") +
      (th.dataset.spur ? "\n" + th.dataset.spur : "") + "\nclick to edit this item";
  }
  function paintHeaders(q) {
    document.querySelectorAll("th.item").forEach(function (th) {
      var qi = Number(th.dataset.q);
      if (LOADED[qi] === q) paintHeader(th, q, Number(th.dataset.k));
    });
  }
  function paintQueryReview(q) {
    document.querySelectorAll("div.qreview").forEach(function (box) {
      if (LOADED[Number(box.dataset.q)] !== q) return;
      box.textContent = "";
      (R.added[q.id] || []).forEach(function (text) {
        var d = el("div", "added");
        d.appendChild(el("span", "tag", "added"));
        d.appendChild(document.createTextNode(text));
        box.appendChild(d);
      });
      if (R.qnotes[q.id]) {
        var d = el("div", "qnote");
        d.appendChild(el("span", "tag note", "note"));
        d.appendChild(document.createTextNode(R.qnotes[q.id]));
        box.appendChild(d);
      }
    });
  }
  function cellOf(td) {
    if (!td || !td.dataset || td.dataset.q === undefined) return null;
    var q = query(Number(td.dataset.q));
    return {q: q, pi: Number(td.dataset.p), p: q.passages[Number(td.dataset.p)], k: Number(td.dataset.k)};
  }
  function markCurrent() {
    document.querySelectorAll("td.g.current").forEach(function (td) { td.classList.remove("current"); });
    if (!current || current.kind !== "cell") return;
    var qi = LOADED.indexOf(current.q);
    var td = document.querySelector(
      'td.g[data-q="' + qi + '"][data-p="' + current.pi + '"][data-k="' + current.k + '"]');
    if (td) td.classList.add("current");
  }

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

  function renderQuery(q, qi) {
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
    var addBtn = button("+ item / note", "", function () { editQuery(q); },
      "add a missing item or a note to this query");
    addBtn.dataset.action = "query";
    h.appendChild(addBtn);
    sec.appendChild(h);
    var box = el("div", "qreview");
    box.dataset.q = String(qi);
    sec.appendChild(box);
    var table = el("table", "grid"), thead = el("thead"), hr = el("tr");
    hr.appendChild(el("th", "mark"));
    hr.appendChild(el("th", "", "passage"));
    hr.appendChild(el("th", "", "judg."));
    cols.forEach(function (k) {
      var th = el("th", "item" + (hasJudgments && spur[k] >= S ? " spurious" : ""));
      th.dataset.q = String(qi);
      th.dataset.k = String(k);
      if (hasJudgments) th.dataset.spur = "graded >= " + T + " on " + spur[k] + " passages judged < " + J;
      paintHeader(th, q, k);
      hr.appendChild(th);
    });
    thead.appendChild(hr); table.appendChild(thead);
    var tbody = el("tbody"), shown = 0, unc = 0;
    q.passages.forEach(function (p, pi) {
      var isUnc = p.j !== null && p.j >= J && best(p) < T;
      if (isUnc) unc++;
      if (ctl.uncovered.checked && !isUnc) return;
      shown++;
      var tr = el("tr", isUnc ? "uncovered" : "");
      // the uncovered marker has a cell of its own, so it covers neither the id nor the text
      var mark = el("td", "mark");
      if (isUnc) {
        mark.title = "uncovered: judged " + p.j + " (relevant from " + J + "), no item graded " + T + " or more";
      }
      tr.appendChild(mark);
      var pid = el("td", "pid", p.id);
      pid.appendChild(el("span", "ptext", p.text));
      pid.title = "click to show the whole passage";
      pid.addEventListener("click", function () { pid.classList.toggle("open"); });
      tr.appendChild(pid);
      tr.appendChild(el("td", "jud", p.j === null ? "–" : p.j));
      cols.forEach(function (k) {
        var td = el("td", "g");
        td.dataset.q = String(qi);
        td.dataset.p = String(pi);
        td.dataset.k = String(k);
        paintCell(td, q, p, k);
        tr.appendChild(td);
      });
      tbody.appendChild(tr);
    });
    table.appendChild(tbody);
    var st = el("div", "stats", shown + " of " + q.passages.length + " passages, " + cols.length + " of " +
      q.items.length + " items" +
      (hasJudgments ? "; " + unc + " uncovered relevant passage" + (unc === 1 ? "" : "s") + " (red bar)" : ""));
    sec.appendChild(st);
    sec.appendChild(table);
    return sec;
  }
  // the tables' header rows stick below the page header, whose height changes with the width
  var pageHeader = document.querySelector("header");
  function stickBelowHeader() {
    document.documentElement.style.setProperty("--header-height", pageHeader.offsetHeight + "px");
  }
  stickBelowHeader();
  if (window.ResizeObserver) new ResizeObserver(stickBelowHeader).observe(pageHeader);
  else window.addEventListener("resize", stickBelowHeader);
  var grids = document.getElementById("grids");
  grids.addEventListener("click", function (ev) {
    var t = ev.target;
    if (!(t instanceof Element)) return;
    var td = t.closest("td.g"), th = t.closest("th.item");
    if (td) { var c = cellOf(td); hideTip(); editCell(c.q, c.pi, c.k); }
    else if (th) editItem(query(Number(th.dataset.q)), Number(th.dataset.k));
  });
  grids.addEventListener("mouseover", function (ev) {
    var td = ev.target instanceof Element ? ev.target.closest("td.g") : null;
    if (td) showTip(ev, tipText(td)); else hideTip();
  });
  grids.addEventListener("mousemove", function (ev) {
    var td = ev.target instanceof Element ? ev.target.closest("td.g") : null;
    if (td) showTip(ev, tipText(td));
  });
  grids.addEventListener("mouseleave", hideTip);
  document.addEventListener("keydown", function (ev) {
    if (!current) return;
    var typing = ev.target instanceof Element && ev.target.matches("input, textarea, select");
    if (ev.key === "Escape") { closeEditor(); return; }
    if (typing || current.kind !== "cell" || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    var c = current;
    if (/^[0-5]$/.test(ev.key)) {
      setCell(c.q, c.pi, c.k, {g: Number(ev.key), c: false}); ev.preventDefault();
    } else if (ev.key === "c" && c.q.passages[c.pi].g[c.k] !== null) {
      setCell(c.q, c.pi, c.k, {g: null, c: true}); ev.preventDefault();
    } else if (/^Arrow/.test(ev.key)) {
      var td = document.querySelector("td.g.current");
      if (!td) return;
      var tr = td.parentElement, next = null;
      if (ev.key === "ArrowLeft") next = td.previousElementSibling;
      if (ev.key === "ArrowRight") next = td.nextElementSibling;
      var idx = Array.prototype.indexOf.call(tr.children, td);
      if (ev.key === "ArrowUp" && tr.previousElementSibling) next = tr.previousElementSibling.children[idx];
      if (ev.key === "ArrowDown" && tr.nextElementSibling) next = tr.nextElementSibling.children[idx];
      if (next && next.matches("td.g")) {
        var n = cellOf(next); editCell(n.q, n.pi, n.k); ev.preventDefault();
      }
    }
  });

  function render() {
    grids.textContent = "";
    var v = ctl.query.value;
    var qs = v === "all" ? INDEX.map(function (_, i) { return i; }) : [Number(v)];
    qs.forEach(function (i) {
      var q = query(i);
      grids.appendChild(renderQuery(q, i));
      paintQueryReview(q);
    });
    markCurrent();
    document.body.dataset.rendered = "yes";
  }
  [ctl.query, ctl.minGrade, ctl.minJud, ctl.uncovered, ctl.spurious, ctl.spuriousMin].forEach(function (c) {
    c.addEventListener("change", render);
  });
  showCounts();
  if (Number(ui.counts.dataset.total)) {
    setStatus("restored " + ui.counts.dataset.total + " review actions saved in this browser");
  }
  render();
})();
