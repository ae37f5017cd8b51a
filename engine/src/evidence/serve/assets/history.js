// #/suite/ID : a suite over time. Trend charts of pass rate, mean score,
// cost and p95 latency (the promoted baseline dashed across each), then its
// runs, newest first, with two checkboxes picking the runs to compare.
import { el, api, link, hash, table, td, pct, num, usd, ms, verdictChip, errorBox } from "./dom.js";
import { trendChart } from "./chart.js";

export async function historyView(root, suite) {
  const [progress, page] = await Promise.all([
    api("progress", { suite, limit: 100 }),
    api("runs", { suite, limit: 50 }),
  ]);
  root.appendChild(el("div", { cls: "crumbs" }, [link([], "suites"), " / " + suite]));
  root.appendChild(el("h1", { text: suite }));
  const base = progress.baseline;
  root.appendChild(el("p", { cls: "legend", "data-testid": "baseline-legend" }, base
    ? ["Promoted baseline (", el("span", { cls: "dash", text: "- - -" }), ") of variant " + base.variant + ", promoted " + base.promotedAt + "."]
    : ["No promoted baseline (cautilus eval promote <run> sets one)."]));
  const points = progress.runs;
  const series = (f) => points.map((p) => ({ x: p.run, y: f(p.stats) }));
  const bs = base ? base.stats : null;
  const charts = el("div", { cls: "charts", "data-testid": "charts" }, [
    trendChart("passRate", "Pass rate", series((s) => s.passRate), bs && bs.passRate, pct),
    trendChart("meanScore", "Mean score", series((s) => (s.meanScore ? s.meanScore.mean : null)), bs && bs.meanScore && bs.meanScore.mean, (v) => num(v, 2)),
    trendChart("costUsd", "Cost", series((s) => s.costUsd), bs && bs.costUsd, usd),
    trendChart("p95LatencyMs", "p95 latency", series((s) => s.p95LatencyMs), bs && bs.p95LatencyMs, ms),
  ]);
  root.appendChild(charts);
  if (progress.truncated || progress.omitted) root.appendChild(el("p", { cls: "muted", text: "The charts show the newest " + points.length + " runs." }));

  root.appendChild(el("h2", { text: "Runs" }));
  const picked = [];
  const compare = el("button", { "data-testid": "compare", disabled: true, text: "Compare the two picked runs" });
  const controls = el("div", { cls: "controls" }, [compare, el("span", { cls: "muted", text: "Pick two runs." })]);
  root.appendChild(controls);
  const body = el("tbody");
  const tableEl = el("table", { "data-testid": "runs" }, [
    el("thead", null, [el("tr", null, ["", "run", "started", "kind", "verdict", "pass rate", "mean score", "cost", "p95 latency"].map((t, i) => el("th", { cls: i >= 5 ? "num" : null, text: t })))]),
    body,
  ]);
  root.appendChild(tableEl);
  function pick(box) {
    const id = box.dataset.run;
    if (box.checked) {
      picked.push(id);
      while (picked.length > 2) {
        const old = picked.shift();
        const other = body.querySelector(`input[data-run="${CSS.escape(old)}"]`);
        if (other) other.checked = false;
      }
    } else {
      const i = picked.indexOf(id);
      if (i >= 0) picked.splice(i, 1);
    }
    compare.disabled = picked.length !== 2;
  }
  compare.addEventListener("click", () => {
    // Older on the left: ids start with the time the run started.
    const [a, b] = picked.slice().sort();
    location.hash = hash(["compare", a, b]);
  });
  function addRows(runs) {
    for (const r of runs) {
      const box = el("input", { type: "checkbox", "data-run": r.id, "aria-label": "pick " + r.id });
      box.addEventListener("change", () => pick(box));
      body.appendChild(el("tr", { "data-run": r.id }, [
        el("td", null, [box]),
        el("td", null, [link(["run", r.id], r.id)]),
        td(r.startedAt),
        td(r.kind),
        el("td", null, [verdictChip(r)]),
        td(pct(r.stats.passRate), "num"),
        td(r.stats.meanScore ? num(r.stats.meanScore.mean, 3) : "—", "num"),
        td(usd(r.stats.costUsd), "num"),
        td(ms(r.stats.p95LatencyMs), "num"),
      ]));
    }
  }
  addRows(page.runs);
  let next = page.next;
  const more = el("button", { "data-testid": "older", text: "Older runs", hidden: !next });
  more.addEventListener("click", async () => {
    try {
      const older = await api("runs", { suite, limit: 50, before: next });
      addRows(older.runs);
      next = older.next;
      more.hidden = !next;
    } catch (e) {
      root.appendChild(errorBox(e));
    }
  });
  root.appendChild(el("div", { cls: "controls" }, [more]));
  if (page.unreadable.length) root.appendChild(el("p", { cls: "muted", text: "Unreadable: " + page.unreadable.join("; ") }));
}
