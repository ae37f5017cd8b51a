// #/live : runs in progress. #/live/RUN : one run as it goes, polled every
// 2 s until it has its final record.
import { el, api, link, table, td, ms, status, errorBox } from "./dom.js";

const EVERY_MS = 2000;

export async function liveView(root, run) {
  if (!run) return listView(root);
  const head = el("div");
  const body = el("div");
  root.appendChild(el("div", { cls: "crumbs" }, [link(["live"], "in progress"), " / " + run]));
  root.appendChild(head);
  root.appendChild(body);
  let timer = null;
  let stopped = false;
  async function poll() {
    let live;
    try {
      live = (await api("live", { run })).runs[0];
    } catch (e) {
      body.replaceChildren(errorBox(e));
      return;
    }
    if (stopped || !live) return;
    render(head, body, live);
    if (!live.finished) timer = setTimeout(poll, EVERY_MS);
  }
  await poll();
  return () => { stopped = true; clearTimeout(timer); };
}

function render(head, body, r) {
  head.replaceChildren(
    el("h1", null, [r.id, el("span", { cls: "verdict " + (r.finished ? (r.status === "completed" ? "v-good" : "v-bad") : "v-warn"), "data-testid": "live-status", text: r.status })]),
    el("p", null, [
      el("progress", { max: Math.max(r.totalCases, 1), value: r.finishedCases }),
      el("span", { "data-testid": "live-progress", text: " " + r.finishedCases + " of " + r.totalCases + " cases finished" }),
      el("span", { cls: "muted", text: " · " + ms(r.elapsedMs) + (r.fixture ? " · " + r.fixture : "") }),
    ]),
    el("div", { cls: "chips", "data-testid": "live-counts" }, Object.entries(r.counts).map(([k, v]) => el("span", { cls: "s-" + k, text: v + " " + k }))),
    r.finished ? el("p", { "data-testid": "live-finished" }, ["Finished. ", link(["run", r.id], "See the run")]) : el("p", { cls: "muted", text: "Refreshing every 2 s." + (r.idleMs > 60000 ? " No case finished for " + ms(r.idleMs) + ": the run may have been killed." : "") }),
  );
  body.replaceChildren(table(["case", "group", "status", "summary"], r.cases.slice().reverse().map((c) => el("tr", { cls: "live-case", "data-case": c.caseId, "data-status": c.status }, [
    td(c.caseId), td(c.group || ""), el("td", null, [status(c.status)]), td(c.summary),
  ])), "live-cases"));
}

async function listView(root) {
  const live = await api("live");
  root.appendChild(el("h1", { text: "Runs in progress" }));
  if (!live.runs.length) {
    root.appendChild(el("p", { cls: "muted", "data-testid": "live-none", text: "No run is in progress." }));
    return;
  }
  root.appendChild(table(["run", "fixture", "progress", "elapsed"], live.runs.map((r) => el("tr", { "data-run": r.id }, [
    el("td", null, [link(["live", r.id], r.id)]), td(r.fixture), td(r.finishedCases + " of " + r.totalCases), td(ms(r.elapsedMs)),
  ])), "live-runs"));
}
