// A trend chart in SVG: one series (a point a run, oldest left) and the
// promoted baseline's value as a dashed line across it.
import { el, svg } from "./dom.js";

const W = 300, H = 150, PAD = { l: 44, r: 10, t: 10, b: 22 };

// points: [{x: label, y: number|null}], baseline: number|null|undefined.
export function trendChart(key, title, points, baseline, format) {
  const values = points.map((p) => p.y).filter((y) => y !== null && y !== undefined);
  const all = values.concat(baseline === null || baseline === undefined ? [] : [baseline]);
  const box = el("div", { cls: "chart", "data-testid": "chart-" + key }, [el("h3", { text: title })]);
  const root = svg("svg", { width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": title });
  box.appendChild(root);
  if (!all.length) {
    root.appendChild(svg("text", { x: PAD.l, y: H / 2, text: "no values recorded" }));
    return box;
  }
  let lo = Math.min(...all), hi = Math.max(...all);
  if (key === "passRate") { lo = 0; hi = 1; }
  if (lo === hi) { lo = lo - (Math.abs(lo) || 1) * 0.1; hi = hi + (Math.abs(hi) || 1) * 0.1; }
  const x = (i) => PAD.l + (points.length < 2 ? (W - PAD.l - PAD.r) / 2 : (i * (W - PAD.l - PAD.r)) / (points.length - 1));
  const y = (v) => PAD.t + (1 - (v - lo) / (hi - lo)) * (H - PAD.t - PAD.b);
  root.appendChild(svg("line", { class: "axis", x1: PAD.l, y1: H - PAD.b, x2: W - PAD.r, y2: H - PAD.b }));
  root.appendChild(svg("text", { x: 2, y: PAD.t + 8, text: format(hi) }));
  root.appendChild(svg("text", { x: 2, y: H - PAD.b, text: format(lo) }));
  root.appendChild(svg("text", { x: PAD.l, y: H - 6, text: points.length + " runs, oldest left" }));
  let d = "";
  points.forEach((p, i) => {
    if (p.y === null || p.y === undefined) return;
    d += (d ? " L" : "M") + x(i).toFixed(1) + " " + y(p.y).toFixed(1);
  });
  if (d) root.appendChild(svg("path", { class: "series", d, "data-testid": "series" }));
  points.forEach((p, i) => {
    if (p.y === null || p.y === undefined) return;
    root.appendChild(svg("circle", { class: "dot", cx: x(i).toFixed(1), cy: y(p.y).toFixed(1), r: 3 }, [
      svg("title", { text: p.x + ": " + format(p.y) }),
    ]));
  });
  if (baseline !== null && baseline !== undefined) {
    const by = y(baseline).toFixed(1);
    root.appendChild(svg("path", { class: "baseline", d: `M${PAD.l} ${by} L${W - PAD.r} ${by}`, "data-testid": "baseline" }, [
      svg("title", { text: "promoted baseline: " + format(baseline) }),
    ]));
  }
  return box;
}
