// A line diff of two texts (longest common subsequence of lines), bounded:
// texts of more than MAX lines each are compared on their first MAX.
import { el } from "./dom.js";

const MAX = 400;

// [{op: " "|"-"|"+", text}]
export function lineDiff(a, b) {
  const x = (a || "").split("\n").slice(0, MAX), y = (b || "").split("\n").slice(0, MAX);
  const n = x.length, m = y.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint16Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) {
    lcs[i][j] = x[i] === y[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  const out = [];
  let i = 0, j = 0;
  while (i < n && j < m) {
    if (x[i] === y[j]) { out.push({ op: " ", text: x[i] }); i++; j++; }
    else if (lcs[i + 1][j] >= lcs[i][j + 1]) out.push({ op: "-", text: x[i++] });
    else out.push({ op: "+", text: y[j++] });
  }
  while (i < n) out.push({ op: "-", text: x[i++] });
  while (j < m) out.push({ op: "+", text: y[j++] });
  return out;
}

export function diffBlock(a, b) {
  const lines = lineDiff(a, b).map((d) => el("span", {
    cls: d.op === "+" ? "add" : d.op === "-" ? "del" : "same",
    text: d.op + " " + d.text,
  }));
  return el("pre", { cls: "diff", "data-testid": "line-diff" }, lines);
}
