// #/compare/A/B (?variantA=&variantB=) : two runs, or two variants of one
// run, side by side. Changed verdicts first (regressed, fixed, changed),
// each case's outputs in two columns with their line diff; then cases
// whose score moved, cases on one side only, per-assertion deltas.
import { el, api, link, table, td, pct, num, usd, ms, signed, status, errorBox } from "./dom.js";
import { diffBlock } from "./diff.js";

// Cases whose outputs are fetched at once; the rest on demand.
const OPEN = 12;

function sideName(side) { return side.run + (side.variant ? " [" + side.variant + "]" : ""); }

export async function compareView(root, a, b, variantA, variantB) {
  const c = await api("compare", { a, b, variantA, variantB });
  root.appendChild(el("div", { cls: "crumbs" }, [link([], "suites"), " / ", link(["suite", c.b.suiteId], c.b.suiteId), " / compare"]));
  root.appendChild(el("h1", { text: "Comparison" }));
  root.appendChild(table(["", "side A", "side B", "B − A"], [
    el("tr", null, [td("run"), el("td", null, [link(["run", c.a.run], sideName(c.a))]), el("td", null, [link(["run", c.b.run], sideName(c.b))]), td("")]),
    el("tr", null, [td("started"), td(c.a.startedAt), td(c.b.startedAt), td("")]),
    row("pass rate", c.passRate, pct, (d) => signed(d * 100, 0) + " pts"),
    row("mean score", c.meanScore, (v) => num(v, 3), (d) => signed(d, 3)),
    row("cost", c.costUsd, usd, (d) => signed(d, 4)),
    row("mean latency", c.meanLatencyMs, ms, (d) => signed(d, 0) + " ms"),
    row("p95 latency", c.p95LatencyMs, ms, (d) => signed(d, 0) + " ms"),
  ], "sides"));
  if (!c.sameSuite) root.appendChild(el("p", { cls: "muted", text: "The two sides are runs of different suites." }));
  root.appendChild(el("p", { "data-testid": "tally", text: c.regressed + " regressed, " + c.fixed + " fixed, " + c.changed.length + " changed verdicts, " + c.scoreMoved.length + " score moves, " + c.unchanged + " unchanged." }));

  let opened = 0;
  const section = (title, testid, changes) => {
    if (!changes.length) return;
    root.appendChild(el("h2", { text: title }));
    const list = el("div", { "data-testid": testid });
    root.appendChild(list);
    for (const ch of changes) list.appendChild(caseBlock(ch, opened++ < OPEN));
  };
  const caseBlock = (ch, open) => {
    const box = el("div", { cls: "case-change", "data-case": ch.caseId, "data-change": ch.change });
    const cellLink = (side, variant) => link(["cell", side.run, ch.caseId], side === c.a ? "A's evidence" : "B's evidence", { variant: variant || ch.variant });
    box.appendChild(el("div", { cls: "head" }, [
      el("strong", { cls: "case-id", text: ch.caseId + (ch.variant ? " [" + ch.variant + "]" : "") }),
      status(ch.change),
      el("span", null, [ch.before ? status(ch.before) : "—", " → ", ch.after ? status(ch.after) : "—"]),
      el("span", { cls: "muted", text: "score " + num(ch.score.a, 3) + " → " + num(ch.score.b, 3) }),
      ch.before ? cellLink(c.a, c.a.variant) : null,
      ch.after ? cellLink(c.b, c.b.variant) : null,
    ]));
    const outputs = el("div", { cls: "outputs" });
    box.appendChild(outputs);
    const load = async () => {
      outputs.replaceChildren(el("span", { cls: "muted", text: "loading outputs…" }));
      try {
        const o = await api("outputs", { a: c.a.run, b: c.b.run, case: ch.caseId, variantA: c.a.variant || ch.variant, variantB: c.b.variant || ch.variant });
        const text = (side) => side.cells.length ? side.cells.map((x) => x.finalText === null || x.finalText === undefined ? "(no final text)" : x.finalText).join("\n\n") : "(not on this side)";
        const col = (name, side, testid) => el("div", null, [el("h4", { text: name + " — " + side.cells.map((x) => x.status).join(", ") }), el("pre", { "data-testid": testid, text: text(side) })]);
        outputs.replaceChildren(
          el("div", { cls: "pair", "data-testid": "outputs" }, [col("A", o.a, "output-a"), col("B", o.b, "output-b")]),
          diffBlock(o.a.cells.length ? text(o.a) : "", o.b.cells.length ? text(o.b) : ""),
        );
      } catch (e) {
        outputs.replaceChildren(errorBox(e));
      }
    };
    if (open) pending.push(load());
    else outputs.appendChild(el("button", { text: "Show the outputs", on: { click: load } }));
    return box;
  };
  const pending = [];
  section("Changed verdicts", "changed", c.changed);
  section("Score moved", "score-moved", c.scoreMoved);
  section("Only on side B", "added", c.added);
  section("Only on side A", "removed", c.removed);
  if (c.assertions.length) {
    root.appendChild(el("h2", { text: "Assertions" }));
    root.appendChild(table(["assertion", { t: "A", num: 1 }, { t: "B", num: 1 }, { t: "B − A", num: 1 }], c.assertions.map((x) => el("tr", null, [
      td(x.name), td(x.a ? num(x.a.mean, 3) : "—", "num"), td(x.b ? num(x.b.mean, 3) : "—", "num"), td(signed(x.delta, 3), "num"),
    ])), "assertions"));
  }
  await Promise.all(pending);
}

function row(name, d, fmt, fmtDelta) {
  return el("tr", null, [td(name), td(fmt(d.a), "num"), td(fmt(d.b), "num"), td(d.delta === null || d.delta === undefined ? "—" : fmtDelta(d.delta), "num")]);
}
