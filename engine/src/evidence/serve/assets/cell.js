// #/cell/RUN/CASE (?variant=&trial=) : one cell's evidence: verdict, the
// assertion ledger with its check sentences, the output, the promoted
// baseline's verdict, the command that reruns it, and each assertion's
// source lines with its own line marked.
import { el, api, link, table, td, meta, num, usd, ms, signed, status } from "./dom.js";

export async function cellView(root, run, caseId, variant, trial) {
  const params = { run, case: caseId, variant, trial };
  const [cell, source] = await Promise.all([api("cell", params), api("source", params)]);
  root.appendChild(el("div", { cls: "crumbs" }, [link([], "suites"), " / ", link(["suite", cell.suiteId], cell.suiteId), " / ", link(["run", cell.run], cell.run), " / " + cell.caseId]));
  root.appendChild(el("h1", null, [cell.displayName || cell.caseId, el("span", { cls: "verdict " + (cell.status === "passed" ? "v-good" : "v-bad"), "data-testid": "cell-status", text: cell.status })]));
  const o = cell.observed;
  root.appendChild(meta([
    ["case", cell.caseId],
    ["variant / trial", cell.variant ? cell.variant + " / " + (cell.trial || 1) : null],
    ["summary", cell.summary],
    ["score", num(cell.score, 3)],
    ["provider / model / harness", [o.provider, o.model, o.harness].filter(Boolean).join(" / ")],
    ["duration", ms(o.durationMs)],
    ["cost", o.costUsd === null || o.costUsd === undefined ? null : usd(o.costUsd)],
  ]));

  root.appendChild(el("h2", { text: "Assertions" }));
  root.appendChild(table(["#", "assertion", "status", { t: "score", num: 1 }, { t: "threshold", num: 1 }, "check", "detail", "written at"], cell.assertions.map((a) => el("tr", { "data-assertion": a.index, "data-status": a.status }, [
    td(a.index + 1), td(a.name), el("td", null, [status(a.status)]), td(num(a.score, 3), "num"), td(num(a.threshold, 2), "num"),
    td(a.check ? a.check.message : ""), td(a.detail || a.label || ""),
    td(a.source ? a.source.file + (a.source.line ? ":" + a.source.line : "") : "—"),
  ])), "ledger"));

  root.appendChild(el("h2", { text: "Output" }));
  root.appendChild(el("pre", { "data-testid": "output", text: o.finalText === null || o.finalText === undefined ? "(no final text)" : o.finalText }));
  if (o.finalTextChars && o.finalText && o.finalTextChars > o.finalText.length) {
    root.appendChild(el("p", { cls: "muted", text: "The first " + o.finalText.length + " of " + o.finalTextChars + " characters; the records keep it whole." }));
  }
  if (o.toolCalls && o.toolCalls.length) root.appendChild(el("pre", { "data-testid": "tool-calls", text: JSON.stringify(o.toolCalls, null, 2) }));

  root.appendChild(el("h2", { text: "Against the promoted baseline" }));
  const b = cell.baseline;
  root.appendChild(b ? el("div", { "data-testid": "baseline" }, [
    el("p", null, ["Baseline (variant " + b.variant + ", promoted " + b.promotedAt + "): ", status(b.status), " score " + num(b.score, 3) + (b.verdictChanged ? " — the verdict changed." : " — same verdict.")]),
    Object.keys(b.scoreDeltas).length ? table(["assertion", { t: "this − baseline", num: 1 }], Object.entries(b.scoreDeltas).map(([k, v]) => el("tr", null, [td(k), td(signed(v, 3), "num")])), "score-deltas") : null,
  ]) : el("p", { cls: "muted", "data-testid": "baseline", text: "The suite has no promoted baseline." }));

  root.appendChild(el("h2", { text: "Rerun it" }));
  root.appendChild(el("pre", { "data-testid": "repro", text: cell.repro.command }));

  root.appendChild(el("h2", { text: "Where each assertion was written" }));
  const holder = el("div", { "data-testid": "sources" });
  root.appendChild(holder);
  for (const a of source.assertions) {
    const head = el("h3", null, [status(a.status), " " + a.name + (a.source ? " — " + a.source.file + (a.source.line ? ":" + a.source.line : "") + " (" + a.source.path + ")" : "")]);
    const block = el("div", { cls: "source-block", "data-assertion": a.index, "data-status": a.status }, [head]);
    if (a.lines.length) {
      block.appendChild(el("pre", { cls: "source" }, a.lines.map((l) => el("span", {
        cls: "line" + (l.marked ? " marked" : ""),
        "data-testid": l.marked ? "marked-line" : null,
        "data-line": l.number,
      }, [el("span", { cls: "n", text: String(l.number) }), l.text]))));
    } else {
      block.appendChild(el("p", { cls: "muted", text: a.unavailable || "no lines" }));
    }
    holder.appendChild(block);
  }
}
