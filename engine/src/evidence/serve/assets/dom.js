// Shared helpers of the views. Every piece of record text reaches the page
// as a text node (textContent or createTextNode): nothing from the API is
// ever parsed as HTML.

export function el(tag, attrs, children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = v;
    else if (k === "cls") node.className = v;
    else if (k === "on") for (const [ev, fn] of Object.entries(v)) node.addEventListener(ev, fn);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children || []) {
    if (c !== null && c !== undefined) node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
  }
  return node;
}

export function svg(tag, attrs, children) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, String(v));
  }
  for (const c of children || []) node.appendChild(c);
  return node;
}

// A JSON answer of the API; an error answer throws its `error` and `hint`.
export async function api(path, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") query.set(k, String(v));
  }
  const qs = query.toString();
  const response = await fetch("/api/" + path + (qs ? "?" + qs : ""), { headers: { Accept: "application/json" } });
  const body = await response.json().catch(() => null);
  if (!response.ok) {
    const e = new Error(body && body.error ? body.error : "HTTP " + response.status);
    e.hint = body && body.hint;
    throw e;
  }
  return body;
}

export function errorBox(e) {
  return el("div", { cls: "error", "data-testid": "error" }, [
    el("strong", { text: String(e && e.message ? e.message : e) }),
    e && e.hint ? el("div", { cls: "muted", text: e.hint }) : null,
  ]);
}

// `#/<parts…>` with each part encoded (a run id holds `/`).
export function hash(parts, params) {
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== null && v !== undefined && v !== "") query.set(k, String(v));
  }
  const qs = query.toString();
  return "#/" + parts.map(encodeURIComponent).join("/") + (qs ? "?" + qs : "");
}

export function link(parts, text, params, attrs) {
  return el("a", Object.assign({ href: hash(parts, params), text }, attrs || {}));
}

export function num(n, digits) { return n === null || n === undefined ? "—" : Number(n).toFixed(digits); }
export function pct(n) { return n === null || n === undefined ? "—" : (n * 100).toFixed(0) + "%"; }
export function usd(n) { return n === null || n === undefined ? "—" : "$" + Number(n).toFixed(4); }
export function ms(n) { return n === null || n === undefined ? "—" : n >= 1000 ? (n / 1000).toFixed(2) + " s" : Math.round(n) + " ms"; }
export function signed(n, digits) { return n === null || n === undefined ? "—" : (n >= 0 ? "+" : "") + Number(n).toFixed(digits === undefined ? 3 : digits); }

export function status(s) { return el("span", { cls: "status s-" + s, text: s }); }

export function verdictOf(run) {
  if (run.passed === true || run.passed === false) return { text: run.passed ? "passed" : "failed", good: run.passed };
  const text = run.recommendation || run.status || "?";
  return { text, good: text === "accept-now", warn: text === "defer" };
}

export function verdictChip(run) {
  const v = verdictOf(run);
  return el("span", { cls: "verdict " + (v.good ? "v-good" : v.warn ? "v-warn" : "v-bad"), "data-testid": "verdict", text: v.text });
}

export function table(headers, rows, testid) {
  const head = el("tr", null, headers.map((h) => el("th", { cls: h.num ? "num" : null, text: h.t === undefined ? h : h.t })));
  return el("table", { "data-testid": testid }, [el("thead", null, [head]), el("tbody", null, rows)]);
}

export function td(text, cls) { return el("td", { cls, text: text === null || text === undefined ? "" : String(text) }); }

export function meta(pairs) {
  const dl = el("dl", { cls: "meta" });
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === "") continue;
    dl.appendChild(el("dt", { text: k }));
    dl.appendChild(el("dd", null, [typeof v === "string" ? v : v]));
  }
  return dl;
}
