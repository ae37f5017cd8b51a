// #/run/ID : one run, as the HTML report shows it: verdict and counts,
// gates, variants, and every case with its status (filter by status), each
// leading to its evidence.
import { el, api, link, table, td, meta, pct, num, usd, ms, status, verdictChip } from "./dom.js";

export async function runView(root, id) {
  const detail = await api("run", { run: id });
  const run = detail.run;
  root.appendChild(el("div", { cls: "crumbs" }, [link([], "suites"), " / ", link(["suite", run.suiteId], run.suiteId), " / " + run.id]));
  root.appendChild(el("h1", null, [run.title || run.suiteId, verdictChip(run)]));
  root.appendChild(meta([
    ["run", run.id],
    ["suite", run.suiteId],
    ["surface / preset", detail.surface + " / " + detail.preset],
    ["fixture", detail.fixtureRef],
    ["provider / model / harness", run.targets.join(", ")],
    ["started", run.startedAt],
    ["finished", run.finishedAt],
    ["status", run.status],
    ["pass rate", pct(run.stats.passRate)],
    ["mean score", run.stats.meanScore ? num(run.stats.meanScore.mean, 3) : null],
    ["cost", run.stats.costUsd === null || run.stats.costUsd === undefined ? null : usd(run.stats.costUsd)],
    ["p95 latency", ms(run.stats.p95LatencyMs)],
  ]));
  const chips = el("div", { cls: "chips", "data-testid": "counts" });
  for (const [k, v] of Object.entries(run.counts)) chips.appendChild(el("span", { cls: "s-" + k, text: v + " " + k }));
  root.appendChild(chips);

  if (detail.gates.length) {
    root.appendChild(el("h2", { text: "Gates" }));
    root.appendChild(table(["", "gate", { t: "value", num: 1 }, { t: "threshold", num: 1 }, "message"], detail.gates.map((g) => el("tr", null, [
      el("td", null, [status(g.passed ? "passed" : g.informational ? "informational" : "failed")]),
      td(g.variant + ": " + g.gate), td(num(g.value, 3), "num"), td(num(g.threshold, 3), "num"), td(g.message),
    ])), "gates"));
  }
  if (detail.variants.length > 1) {
    root.appendChild(el("h2", { text: "Variants" }));
    const base = detail.variants.find((v) => v.baseline);
    root.appendChild(table(["variant", "sets", "compare"], detail.variants.map((v) => el("tr", null, [
      td(v.name + (v.baseline ? " (baseline)" : "")),
      td(Object.entries(v.overrides).map(([k, x]) => k + ": " + (typeof x === "string" ? x : JSON.stringify(x))).join("; ")),
      el("td", null, [base && !v.baseline ? link(["compare", run.id, run.id], "against " + base.name, { variantA: base.name, variantB: v.name }) : null]),
    ])), "variants"));
  }

  root.appendChild(el("h2", { text: "Cases" }));
  const filter = el("select", { "data-testid": "status-filter", "aria-label": "status" },
    ["all"].concat(Object.keys(run.counts).filter((k) => k !== "total")).map((s) => el("option", { value: s, text: s })));
  const shown = el("span", { cls: "muted", "data-testid": "shown" });
  root.appendChild(el("div", { cls: "controls" }, [el("label", { text: "status " }), filter, shown]));
  const holder = el("div");
  root.appendChild(holder);
  async function load() {
    const page = await api("cases", { run: run.id, status: filter.value === "all" ? null : filter.value, limit: 1000 });
    shown.textContent = page.cases.length + " of " + page.total + " shown";
    holder.replaceChildren(table(["case", "variant", "trial", "status", { t: "score", num: 1 }, { t: "duration", num: 1 }, "why"], page.cases.map((c) => el("tr", { cls: "case-row", "data-case": c.caseId, "data-status": c.status }, [
      el("td", null, [link(["cell", run.id, c.caseId], c.caseId, { variant: c.variant, trial: c.trial })]),
      td(c.variant), td(c.trial), el("td", null, [status(c.status)]),
      td(num(c.score, 3), "num"), td(ms(c.durationMs), "num"),
      td(c.status === "passed" ? "" : c.failedAssertions.length ? "failed: " + c.failedAssertions.join(", ") : c.summary),
    ])), "cases"));
    document.body.dataset.ready = "true";
  }
  filter.addEventListener("change", () => { document.body.dataset.ready = "false"; load(); });
  await load();
}
