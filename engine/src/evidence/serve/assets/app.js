// cautilus serve: the app's router. Views are chosen by the URL's hash so a
// view can be shared: #/ (suites), #/suite/ID, #/run/ID, #/compare/A/B
// (?variantA=&variantB=), #/cell/RUN/CASE (?variant=&trial=), #/live,
// #/live/RUN. Each part is URL-encoded (run ids hold `/`).
import { el, errorBox } from "./dom.js";
import { suitesView } from "./suites.js";
import { historyView } from "./history.js";
import { runView } from "./run.js";
import { compareView } from "./compare.js";
import { cellView } from "./cell.js";
import { liveView } from "./live.js";

const app = document.getElementById("app");
let stop = null;
let generation = 0;

function route() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, qs] = raw.split("?");
  const parts = path ? path.split("/").map(decodeURIComponent) : [];
  const params = new URLSearchParams(qs || "");
  const [view, ...args] = parts;
  switch (view) {
    case undefined: case "": return suitesView;
    case "suite": return (root) => historyView(root, args[0]);
    case "run": return (root) => runView(root, args[0]);
    case "compare": return (root) => compareView(root, args[0], args[1], params.get("variantA"), params.get("variantB"));
    case "cell": return (root) => cellView(root, args[0], args[1], params.get("variant"), params.get("trial"));
    case "live": return (root) => liveView(root, args[0]);
    default: return null;
  }
}

async function show() {
  if (stop) { stop(); stop = null; }
  const mine = ++generation;
  document.body.dataset.ready = "false";
  app.replaceChildren();
  const found = route();
  try {
    if (!found) throw Object.assign(new Error("no such page: " + location.hash), { hint: "start from the suites" });
    const root = el("div");
    app.appendChild(root);
    const cleanup = await found(root);
    if (mine !== generation) { if (cleanup) cleanup(); return; }
    stop = cleanup || null;
  } catch (e) {
    if (mine !== generation) return;
    app.appendChild(errorBox(e));
  }
  if (mine === generation) document.body.dataset.ready = "true";
}

window.addEventListener("hashchange", show);
show();
