// Drives the `cautilus serve` app in headless Chromium (playwright-core)
// and prints, as JSON, what a person would see. Takes screenshots.
//
// node serve-check.cjs history '<json: {url, suite, a, b, run, shots}>'
//   the suite's history (charts, baseline overlay), the comparison of runs
//   a and b picked with the checkboxes, then run `run`'s failing case opened
//   from its page (status filter "failed"): its evidence and source lines.
// node serve-check.cjs live '<json: {url, run, shots, release}>'
//   the live view of run `run` as it goes: the first finished case seen
//   (then the file `release` is created: the test's slow program waits for
//   it before its last case ends), then the end.
// playwright-core is found through NODE_PATH.
const { chromium } = require("playwright-core");
const path = require("node:path");

(async () => {

const [mode, json] = process.argv.slice(2);
const args = JSON.parse(json);
const origin = new URL(args.url).origin;
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const out = { consoleErrors: [], pageErrors: [], foreignRequests: [], dialogs: [], apiCalls: 0 };
const ready = (page) => page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
const go = async (page, hash) => {
  await page.evaluate(() => { document.body.dataset.ready = "false"; });
  await page.evaluate((h) => { location.hash = h; }, hash);
  await ready(page);
};
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => out.pageErrors.push(String(e)));
  page.on("request", (r) => {
    const url = r.url();
    if (url.startsWith("data:")) return;
    if (new URL(url).origin !== origin) out.foreignRequests.push(url);
    else if (new URL(url).pathname.startsWith("/api/")) out.apiCalls++;
  });
  page.on("dialog", async (d) => { out.dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(args.url);
  await ready(page);
  out.suites = await page.$$eval("[data-testid=suites] tbody tr", (rs) => rs.map((r) => r.dataset.suite));

  if (mode === "history") {
    await page.evaluate(() => { document.body.dataset.ready = "false"; });
    await page.click(`[data-testid=suites] tr[data-suite="${args.suite}"] a`);
    await ready(page);
    out.historyHash = await page.evaluate(() => location.hash);
    out.charts = await page.$$eval(".chart", (cs) => cs.map((c) => ({
      id: c.dataset.testid,
      series: Array.from(c.querySelectorAll("path[data-testid=series]")).map((p) => p.getAttribute("d")),
      baseline: Array.from(c.querySelectorAll("path[data-testid=baseline]")).map((p) => p.getAttribute("d")),
      dots: c.querySelectorAll("circle").length,
    })));
    out.baselineLegend = await page.textContent("[data-testid=baseline-legend]");
    out.runRows = await page.$$eval("[data-testid=runs] tbody tr", (rs) => rs.map((r) => r.dataset.run));
    await page.screenshot({ path: path.join(args.shots, "serve-history.png"), fullPage: true });
    await page.check(`input[data-run="${args.a}"]`);
    await page.check(`input[data-run="${args.b}"]`);
    await page.evaluate(() => { document.body.dataset.ready = "false"; });
    await page.click("[data-testid=compare]");
    await ready(page);
    out.compareHash = await page.evaluate(() => location.hash);
    out.tally = await page.textContent("[data-testid=tally]");
    out.sections = await page.$$eval("h2", (hs) => hs.map((h) => h.textContent));
    out.changed = await page.$$eval("[data-testid=changed] .case-change", (cs) => cs.map((c) => ({
      caseId: c.dataset.case,
      change: c.dataset.change,
      columns: c.querySelectorAll("[data-testid=outputs] > div").length,
      a: (c.querySelector("[data-testid=output-a]") || {}).textContent,
      b: (c.querySelector("[data-testid=output-b]") || {}).textContent,
      diff: (c.querySelector("[data-testid=line-diff]") || {}).textContent,
    })));
    out.compareInjected = await page.$$eval("#app img, #app script, #app iframe", (n) => n.length);
    await page.screenshot({ path: path.join(args.shots, "serve-compare.png"), fullPage: true });

    await go(page, "#/run/" + encodeURIComponent(args.run));
    out.runCounts = await page.textContent("[data-testid=counts]");
    await page.evaluate(() => { document.body.dataset.ready = "false"; });
    await page.selectOption("[data-testid=status-filter]", "failed");
    await ready(page);
    out.failedRows = await page.$$eval("tr.case-row", (rs) => rs.map((r) => r.dataset.case + ":" + r.dataset.status));
    await page.evaluate(() => { document.body.dataset.ready = "false"; });
    await page.click("tr.case-row a");
    await ready(page);
    out.cellHash = await page.evaluate(() => location.hash);
    out.cellStatus = await page.textContent("[data-testid=cell-status]");
    out.ledger = await page.$$eval("[data-testid=ledger] tbody tr", (rs) => rs.map((r) => Array.from(r.children).map((c) => c.textContent)));
    out.output = await page.textContent("[data-testid=output]");
    out.repro = await page.textContent("[data-testid=repro]");
    out.baseline = await page.textContent("[data-testid=baseline]");
    out.sources = await page.$$eval(".source-block", (bs) => bs.map((b) => ({
      status: b.dataset.status,
      head: b.querySelector("h3").textContent,
      marked: Array.from(b.querySelectorAll("[data-testid=marked-line]")).map((l) => ({ line: l.dataset.line, text: l.textContent, cls: l.className })),
      lines: b.querySelectorAll(".line").length,
    })));
    out.cellInjected = await page.$$eval("#app img, #app script, #app iframe", (n) => n.length);
    await page.screenshot({ path: path.join(args.shots, "serve-cell.png"), fullPage: true });
  } else if (mode === "live") {
    await go(page, "#/live/" + encodeURIComponent(args.run));
    await page.waitForSelector("tr.live-case", { timeout: 60000 });
    out.first = {
      status: await page.textContent("[data-testid=live-status]"),
      progress: await page.textContent("[data-testid=live-progress]"),
      cases: await page.$$eval("tr.live-case", (rs) => rs.map((r) => r.dataset.case + ":" + r.dataset.status)),
    };
    await page.screenshot({ path: path.join(args.shots, "serve-live.png"), fullPage: true });
    require("node:fs").writeFileSync(args.release, "");
    await page.waitForSelector("[data-testid=live-finished]", { timeout: 120000 });
    out.end = {
      status: await page.textContent("[data-testid=live-status]"),
      progress: await page.textContent("[data-testid=live-progress]"),
    };
  }
  out.pwned = await page.evaluate(() => window.__pwned === true);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
