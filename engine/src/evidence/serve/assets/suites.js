// #/ : the project's suites (the manifest), each leading to its history.
import { el, api, link, table, td } from "./dom.js";

export async function suitesView(root) {
  const manifest = await api("suites");
  root.appendChild(el("h1", { text: "Suites" }));
  root.appendChild(el("p", { cls: "muted", text: "Project root: " + (manifest.root || "") }));
  const rows = (manifest.suites || []).map((s) => el("tr", { "data-suite": s.id }, [
    el("td", null, [link(["suite", s.id], s.id)]),
    td(s.path),
    td(s.surface + " / " + s.preset),
    td([s.provider, s.model].filter(Boolean).join(" / ")),
    td(s.cases, "num"),
    td((s.variants || []).join(", ")),
  ]));
  root.appendChild(table(["suite", "fixture", "surface / preset", "provider / model", { t: "cases", num: 1 }, "variants"], rows, "suites"));
  if ((manifest.invalid || []).length) {
    root.appendChild(el("h2", { text: "Invalid fixtures" }));
    root.appendChild(table(["fixture", "error"], manifest.invalid.map((s) => el("tr", null, [td(s.path), el("td", null, [el("pre", { text: s.error })])])), "invalid"));
  }
}
