// #/ : the project's suites (the manifest), each leading to its history.
import { el, api, link, table, td, errorBox } from "./dom.js";

export async function suitesView(root) {
  root.appendChild(el("h1", { text: "Suites" }));
  // The manifest lists the fixtures of today; the records may hold suites
  // whose fixture moved, or a project whose fixtures cannot be listed: those
  // are shown from their runs, so the history stays reachable.
  let manifest = { suites: [] };
  try {
    manifest = await api("suites");
  } catch (e) {
    root.appendChild(errorBox(e));
  }
  if (manifest.root) root.appendChild(el("p", { cls: "muted", text: "Project root: " + manifest.root }));
  if (manifest.notice) root.appendChild(el("p", { cls: "notice", text: manifest.notice }));
  const rows = (manifest.suites || []).map((s) => el("tr", { "data-suite": s.id }, [
    el("td", null, [link(["suite", s.id], s.id)]),
    td(s.path),
    td(s.surface + " / " + s.preset),
    td([s.provider, s.model].filter(Boolean).join(" / ")),
    td(s.cases, "num"),
    td((s.variants || []).join(", ")),
  ]));
  if (rows.length) {
    root.appendChild(table(["suite", "fixture", "surface / preset", "provider / model", { t: "cases", num: 1 }, "variants"], rows, "suites"));
  }
  if ((manifest.invalid || []).length) {
    root.appendChild(el("h2", { text: "Invalid fixtures" }));
    root.appendChild(table(["fixture", "error"], manifest.invalid.map((s) => el("tr", null, [td(s.path), el("td", null, [el("pre", { text: s.error })])])), "invalid"));
  }
  const listed = new Set((manifest.suites || []).map((s) => s.id));
  const empty = el("p", { cls: "muted", text: "No suites and no recorded runs yet: run `cautilus eval test` in this project." });
  if (!rows.length) root.appendChild(empty);
  // Not awaited: the manifest's table is the page; the suites only the
  // records know come after it (their runs may not be indexed yet).
  recordedSuites(root, listed, rows.length ? null : empty).catch((e) => root.appendChild(errorBox(e)));
}

async function recordedSuites(root, listed, empty) {
  const page = await api("runs", { limit: 50 });
  const recorded = new Map();
  for (const run of page.runs || []) {
    if (!listed.has(run.suiteId) && !recorded.has(run.suiteId)) recorded.set(run.suiteId, run);
  }
  if (!recorded.size) return;
  if (empty) empty.remove();
  root.appendChild(el("h2", { text: "Suites with recent runs and no fixture listed" }));
  const extra = [...recorded.values()].map((run) => el("tr", { "data-suite": run.suiteId }, [
    el("td", null, [link(["suite", run.suiteId], run.suiteId)]),
    td(run.title),
    td(run.startedAt),
  ]));
  root.appendChild(table(["suite", "title", "newest run"], extra, "recorded-suites"));
}
