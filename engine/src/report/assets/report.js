// cautilus HTML report. Renders the embedded report data (#report-data).
// Every piece of case or output text goes through textContent: nothing from
// a record is ever parsed as HTML.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var PAGE = 100;
  var app = document.getElementById("app");

  function el(tag, attrs, children) {
    var node = document.createElement(tag);
    if (attrs) {
      Object.keys(attrs).forEach(function (k) {
        if (k === "text") node.textContent = attrs[k];
        else if (k === "cls") node.className = attrs[k];
        else node.setAttribute(k, attrs[k]);
      });
    }
    (children || []).forEach(function (c) {
      if (c !== null && c !== undefined) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    });
    return node;
  }
  function svg(tag, attrs, children) {
    var node = document.createElementNS("http://www.w3.org/2000/svg", tag);
    Object.keys(attrs || {}).forEach(function (k) {
      if (k === "text") node.textContent = attrs[k];
      else node.setAttribute(k, attrs[k]);
    });
    (children || []).forEach(function (c) { node.appendChild(c); });
    return node;
  }
  function fmt(n, digits) { return n === null || n === undefined ? "—" : Number(n).toFixed(digits); }
  function signed(n) { return n === null || n === undefined ? "—" : (n >= 0 ? "+" : "") + Number(n).toFixed(3); }
  function ms(n) { return n === null || n === undefined ? "—" : n >= 1000 ? (n / 1000).toFixed(2) + " s" : Math.round(n) + " ms"; }
  function pretty(v) { return typeof v === "string" ? v : JSON.stringify(v, null, 2); }
  function expectedText(e) {
    if (e && typeof e === "object" && !Array.isArray(e)) {
      if (typeof e.snapshotText === "string") return e.snapshotText;
      if (Object.keys(e).length === 1 && typeof e.finalText === "string") return e.finalText;
    }
    return e === undefined ? "—" : pretty(e);
  }
  function statusCell(status) { return el("span", { cls: "status s-" + status, text: status }); }

  // ---- header -------------------------------------------------------------
  var h = data.header;
  var verdict, good;
  if (h.passed === true || h.passed === false) { verdict = h.passed ? "passed" : "failed"; good = h.passed; }
  else { verdict = h.recommendation || h.status || "?"; good = verdict === "accept-now"; }
  var vcls = good ? "v-good" : verdict === "defer" ? "v-warn" : "v-bad";
  app.appendChild(el("h1", null, [h.title || h.suiteId || "cautilus run",
    el("span", { cls: "verdict " + vcls, "data-testid": "verdict", text: verdict })]));
  var meta = el("dl", { cls: "meta" });
  function metaRow(k, v) { if (v) { meta.appendChild(el("dt", { text: k })); meta.appendChild(el("dd", { text: v })); } }
  metaRow("suite", h.suiteId);
  metaRow("surface / preset", h.surface + " / " + h.preset);
  metaRow("provider / model / harness", (h.targets || []).join(", "));
  metaRow("fixture", h.fixtureRef);
  metaRow("started", h.startedAt);
  metaRow("finished", h.finishedAt);
  metaRow("cost", h.costUsd === null || h.costUsd === undefined ? "" : "$" + h.costUsd.toFixed(4));
  metaRow("run", h.status && h.status !== "completed" ? h.status + " (only finished cases are shown)" : "");
  metaRow("records", h.records);
  app.appendChild(meta);
  var chips = el("div", { cls: "chips", "data-testid": "counts" });
  Object.keys(h.counts).forEach(function (k) { chips.appendChild(el("span", { cls: "s-" + k, text: h.counts[k] + " " + k })); });
  if (data.skipped.length) chips.appendChild(el("span", { text: data.skipped.length + " skipped by the fixture" }));
  app.appendChild(chips);

  // ---- gates, variants, comparison ----------------------------------------
  function table(headers, rows, testid) {
    var head = el("tr", null, headers.map(function (x) { return el("th", { cls: x.num ? "num" : "", text: x.t || x }); }));
    var body = el("tbody", null, rows);
    return el("table", { "data-testid": testid }, [el("thead", null, [head]), body]);
  }
  if (data.gates.length) {
    app.appendChild(el("h2", { text: "Gates" }));
    app.appendChild(table(["", "variant", "gate", { t: "value", num: 1 }, { t: "threshold", num: 1 }, "message"],
      data.gates.map(function (g) {
        var s = g.passed ? "passed" : g.informational ? "informational" : "failed";
        return el("tr", null, [el("td", null, [statusCell(s)]), el("td", { text: g.variant }), el("td", { text: g.gate }),
          el("td", { cls: "num", text: fmt(g.value, 4) }), el("td", { cls: "num", text: fmt(g.threshold, 4) }), el("td", { text: g.message })]);
      }), "gates"));
  }
  if (data.variants.length) {
    app.appendChild(el("h2", { text: "Variants" }));
    app.appendChild(table(["variant", "changes", { t: "cells", num: 1 }, { t: "pass rate", num: 1 }, "scores (mean ± sem)", { t: "p50", num: 1 }, { t: "p95", num: 1 }, { t: "cost", num: 1 }],
      data.variants.map(function (v) {
        var a = v.aggregate || {};
        var scores = Object.keys(a.scores || {}).map(function (k) {
          var s = a.scores[k]; return k + " " + fmt(s.mean, 3) + (s.sem === null || s.sem === undefined ? "" : " ± " + fmt(s.sem, 3));
        }).join(", ");
        var lat = a.latency || {};
        // What the variant sets (model, system, settings …), one line per field.
        var changes = Object.keys(v.overrides || {}).map(function (k) {
          var val = v.overrides[k];
          return el("div", { text: k + ": " + (typeof val === "string" ? val : JSON.stringify(val)) });
        });
        if (!changes.length) changes = [el("span", { text: "—" })];
        return el("tr", null, [el("td", { text: v.name + (v.baseline ? " (baseline)" : "") }), el("td", { "data-testid": "variant-changes" }, changes), el("td", { cls: "num", text: String(a.cells || 0) }),
          el("td", { cls: "num", text: fmt(a.passRate, 3) }), el("td", { text: scores }), el("td", { cls: "num", text: ms(lat.p50Ms) }),
          el("td", { cls: "num", text: ms(lat.p95Ms) }), el("td", { cls: "num", text: a.cost ? "$" + fmt(a.cost.totalUsd, 4) : "—" })]);
      }), "variants"));
  }
  if (data.comparison.length) {
    app.appendChild(el("h2", { text: "Against the baseline" }));
    var delta = function (d) { return d ? signed(d.meanDelta) + " (95% CI " + signed(d.ciLow) + ".." + signed(d.ciHigh) + ")" : "—"; };
    app.appendChild(table(["candidate", "baseline", { t: "pairs", num: 1 }, "pass rate Δ", { t: "McNemar p", num: 1 }, "scores Δ"],
      data.comparison.map(function (c) {
        var scores = Object.keys(c.scores || {}).map(function (k) { return k + " " + delta(c.scores[k]); }).join("; ");
        return el("tr", null, [el("td", { text: c.candidate }), el("td", { text: c.baseline + (c.informational ? " (informational)" : "") }),
          el("td", { cls: "num", text: String(c.pairs) }), el("td", { text: delta(c.passRate) }),
          el("td", { cls: "num", text: c.mcnemar ? fmt(c.mcnemar.pValue, 3) : "—" }), el("td", { text: scores })]);
      }), "comparison"));
  }

  // ---- charts -------------------------------------------------------------
  function histogram(title, values, bins, lo, hi, label, testid) {
    var W = 300, H = 120, pad = 18;
    var counts = new Array(bins).fill(0);
    values.forEach(function (v) {
      var i = hi > lo ? Math.floor((v - lo) / (hi - lo) * bins) : 0;
      counts[Math.max(0, Math.min(bins - 1, i))]++;
    });
    var max = Math.max.apply(null, counts.concat([1]));
    var bw = (W - 2 * pad) / bins;
    var bars = counts.map(function (c, i) {
      var bh = (H - 2 * pad) * c / max;
      return svg("rect", { "class": "bar", x: pad + i * bw + 1, y: H - pad - bh, width: Math.max(1, bw - 2), height: bh }, [svg("title", { text: c + " in " + label(lo + (hi - lo) * i / bins) + "–" + label(lo + (hi - lo) * (i + 1) / bins) })]);
    });
    var axis = [svg("text", { x: pad, y: H - 4, text: label(lo) }), svg("text", { x: W - pad, y: H - 4, "text-anchor": "end", text: label(hi) }),
      svg("text", { x: pad, y: 10, text: "max " + max })];
    return el("div", { cls: "chart", "data-testid": testid }, [el("h3", { text: title + " (" + values.length + ")" }),
      svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" }, bars.concat(axis))]);
  }
  function rateBars(title, rows, testid) {
    var W = 300, rowH = 18, H = rows.length * rowH + 8;
    var items = [];
    rows.forEach(function (r, i) {
      var w = (W - 150) * (r.rate || 0);
      items.push(svg("text", { x: 0, y: i * rowH + 13, text: r.name.slice(0, 16) }));
      items.push(svg("rect", { "class": "bar", x: 100, y: i * rowH + 3, width: Math.max(1, w), height: rowH - 6 }));
      items.push(svg("text", { x: 104 + w, y: i * rowH + 13, text: fmt(r.rate, 3) }));
    });
    return el("div", { cls: "chart", "data-testid": testid }, [el("h3", { text: title }), svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img" }, items)]);
  }
  var scores = data.cases.map(function (c) { return c.score; }).filter(function (s) { return typeof s === "number"; });
  var durations = data.cases.map(function (c) { return c.durationMs; }).filter(function (s) { return typeof s === "number"; });
  var charts = el("div", { cls: "charts" });
  if (scores.length) charts.appendChild(histogram("Score distribution", scores, 10, 0, 1, function (x) { return x.toFixed(1); }, "chart-scores"));
  if (durations.length) {
    var sorted = durations.slice().sort(function (a, b) { return a - b; });
    var top = sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] || 1;
    charts.appendChild(histogram("Latency", durations, 12, 0, Math.max(top, 1), ms, "chart-latency"));
  }
  if (data.variants.length) charts.appendChild(rateBars("Pass rate per variant", data.variants.map(function (v) { return { name: v.name, rate: (v.aggregate || {}).passRate }; }), "chart-variants"));
  if (charts.childNodes.length) { app.appendChild(el("h2", { text: "At a glance" })); app.appendChild(charts); }

  // ---- cases --------------------------------------------------------------
  app.appendChild(el("h2", { text: "Cases" }));
  var hasVariants = data.cases.some(function (c) { return c.variant; });
  var search = el("input", { type: "search", placeholder: "Search case id, summary, answer…", "data-testid": "search", "aria-label": "search" });
  var statusSel = el("select", { "data-testid": "status-filter", "aria-label": "status" });
  var statuses = ["all"].concat(Object.keys(h.counts).filter(function (k) { return k !== "total"; }));
  statuses.splice(1, 0, "not passed");
  statuses.forEach(function (s) { statusSel.appendChild(el("option", { value: s, text: s === "all" || s === "not passed" ? s : s + " (" + h.counts[s] + ")" })); });
  var variantSel = el("select", { "data-testid": "variant-filter", "aria-label": "variant" }, [el("option", { value: "", text: "all variants" })]);
  data.variants.forEach(function (v) { variantSel.appendChild(el("option", { value: v.name, text: v.name })); });
  var shown = el("span", { cls: "muted", "data-testid": "shown" });
  app.appendChild(el("div", { cls: "controls" }, [search, statusSel, hasVariants ? variantSel : null, shown]));
  var headers = [{ t: "status" }, { t: "case" }].concat(hasVariants ? [{ t: "variant" }, { t: "trial", num: 1 }] : [])
    .concat([{ t: "summary" }, { t: "time", num: 1 }, { t: "score", num: 1 }]);
  var tbody = el("tbody", { "data-testid": "case-rows" });
  app.appendChild(el("table", { "data-testid": "cases" }, [el("thead", null, [el("tr", null, headers.map(function (x) { return el("th", { cls: x.num ? "num" : "", text: x.t }); }))]), tbody]));
  var prev = el("button", { type: "button", text: "‹ previous" }), next = el("button", { type: "button", text: "next ›" });
  var pageInfo = el("span", { cls: "muted", "data-testid": "page" });
  app.appendChild(el("div", { cls: "pager" }, [prev, pageInfo, next]));

  function answerOf(c) {
    var o = c.fields.observed;
    if (o && typeof o.finalText === "string") return o.finalText;
    if (typeof c.fields.output === "string") return c.fields.output;
    return null;
  }
  var haystacks = data.cases.map(function (c) {
    return [c.id, c.name, c.summary, c.variant || "", (c.tags || []).join(" "), answerOf(c) || ""].join("\n").toLowerCase();
  });
  var page = 0, filtered = [], open = {};

  function apply() {
    var q = search.value.trim().toLowerCase(), s = statusSel.value, v = variantSel.value;
    filtered = [];
    data.cases.forEach(function (c, i) {
      if (s === "not passed" ? c.status === "passed" : s !== "all" && c.status !== s) return;
      if (v && c.variant !== v) return;
      if (q && haystacks[i].indexOf(q) < 0) return;
      filtered.push(i);
    });
    page = 0;
    render();
  }

  function detail(c) {
    var box = el("div", { "data-testid": "case-detail" });
    if (c.summary.indexOf("\n") >= 0 && !c.snapshotDiff) {
      box.appendChild(el("h3", { text: "Why" }));
      box.appendChild(el("pre", { text: c.summary }));
    }
    var o = c.fields.observed || {};
    if (Array.isArray(o.messages) && o.messages.length) {
      box.appendChild(el("h3", { text: "Messages" }));
      o.messages.forEach(function (m) {
        box.appendChild(el("div", { cls: "msg" }, [el("div", { cls: "role", text: m.role || "?" }), el("pre", { text: pretty(m.content) })]));
      });
    } else if (o.input !== undefined || c.fields.input !== undefined) {
      box.appendChild(el("h3", { text: "Input" }));
      box.appendChild(el("pre", { text: pretty(o.input !== undefined ? o.input : c.fields.input) }));
    }
    var answer = answerOf(c);
    var expected = c.fields.expected;
    if (answer !== null || expected !== undefined) {
      box.appendChild(el("div", { cls: "pair" }, [
        el("div", null, [el("h3", { text: "Answer" }), el("pre", { "data-testid": "answer", text: answer === null ? "—" : answer })]),
        el("div", null, [el("h3", { text: expected && typeof expected.snapshot === "string" ? "Expected (snapshot " + expected.snapshot + ")" : "Expected" }),
          el("pre", { "data-testid": "expected", text: expectedText(expected) })])]));
    }
    if (c.assertions.length) {
      box.appendChild(el("h3", { text: "Assertions" }));
      box.appendChild(table(["status", "assertion", { t: "score", num: 1 }, "detail"], c.assertions.map(function (a) {
        return el("tr", null, [el("td", null, [statusCell(a.status || (a.passed ? "passed" : "failed"))]), el("td", { text: a.name + (a.required === false ? " (optional)" : "") + (a.label ? " → " + a.label : "") }),
          el("td", { cls: "num", text: fmt(a.score, 3) }), el("td", { text: a.detail || "" })]);
      }), "assertions"));
    }
    if (c.snapshotDiff) {
      box.appendChild(el("h3", { text: "Snapshot diff (" + (c.snapshotDiff.kind || "") + ")" }));
      var pre = el("pre", { "data-testid": "snapshot-diff" });
      String(c.snapshotDiff.diff || "").split("\n").forEach(function (line) {
        var cls = line.indexOf("@@") === 0 ? "diff-hunk" : line[0] === "+" ? "diff-add" : line[0] === "-" ? "diff-del" : "";
        pre.appendChild(el("span", { cls: cls, text: line + "\n" }));
      });
      box.appendChild(pre);
    }
    if (c.transcript) {
      var t = c.transcript;
      box.appendChild(el("details", null, [el("summary", { text: "Transcript (" + t.path + (t.truncated ? ", " + t.truncated + " more bytes in the records" : "") + ")" }),
        el("pre", { "data-testid": "transcript", text: t.text })]));
    }
    var rest = {};
    Object.keys(c.fields).forEach(function (k) { if (k !== "observed" && k !== "expected") rest[k] = c.fields[k]; });
    if (o && Object.keys(o).length) rest.observed = o;
    if (Object.keys(rest).length) {
      box.appendChild(el("details", null, [el("summary", { text: "Everything recorded" }), el("pre", { text: JSON.stringify(rest, null, 2) })]));
    }
    return box;
  }

  function render() {
    while (tbody.firstChild) tbody.removeChild(tbody.firstChild);
    var pages = Math.max(1, Math.ceil(filtered.length / PAGE));
    page = Math.max(0, Math.min(page, pages - 1));
    var slice = filtered.slice(page * PAGE, page * PAGE + PAGE);
    slice.forEach(function (i) {
      var c = data.cases[i];
      var cells = [el("td", null, [statusCell(c.status)]), el("td", { cls: "case-id", text: c.name !== c.id ? c.id + " — " + c.name : c.id })];
      if (hasVariants) { cells.push(el("td", { text: c.variant || "" })); cells.push(el("td", { cls: "num", text: c.trial ? String(c.trial) : "" })); }
      cells.push(el("td", { text: c.summary.split("\n")[0] }));
      cells.push(el("td", { cls: "num", text: ms(c.durationMs) }));
      cells.push(el("td", { cls: "num", text: fmt(c.score, 3) }));
      var row = el("tr", { cls: "case-row", "data-case": c.id, "data-status": c.status }, cells);
      tbody.appendChild(row);
      var holder = el("tr", { cls: "detail-row" }, [el("td", { colspan: String(headers.length) })]);
      holder.hidden = !open[i];
      if (open[i]) holder.firstChild.appendChild(detail(c));
      row.addEventListener("click", function () {
        open[i] = !open[i];
        holder.hidden = !open[i];
        if (open[i] && !holder.firstChild.firstChild) holder.firstChild.appendChild(detail(c));
      });
      tbody.appendChild(holder);
    });
    shown.textContent = filtered.length + " of " + data.cases.length + " shown";
    pageInfo.textContent = "page " + (page + 1) + " of " + pages;
    prev.disabled = page === 0;
    next.disabled = page >= pages - 1;
  }
  search.addEventListener("input", apply);
  statusSel.addEventListener("change", apply);
  variantSel.addEventListener("change", apply);
  prev.addEventListener("click", function () { page--; render(); });
  next.addEventListener("click", function () { page++; render(); });
  apply();
  document.body.setAttribute("data-ready", "true");
})();
