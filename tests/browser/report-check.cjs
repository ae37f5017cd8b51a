// Opens a cautilus HTML report in headless Chromium (playwright-core) and
// prints, as JSON, what a person would see: the header, the case rows, the
// effect of the search box and the status filter, the first matching case's
// details, console errors, requests that left the file, and whether any
// script injected through a case ran. Takes a screenshot.
//
// node report-check.cjs <report.html> <screenshot.png> <search-text> [case-id[:status] to open]
// playwright-core is found through NODE_PATH (the tests point it at the
// directory .ci/run installs it in).
const { chromium } = require("playwright-core");
const { pathToFileURL } = require("node:url");

(async () => {

const [html, screenshot, query, openCase] = process.argv.slice(2);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const out = { consoleErrors: [], pageErrors: [], requests: [], dialogs: [] };
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("console", (m) => { if (m.type() === "error") out.consoleErrors.push(m.text()); });
  page.on("pageerror", (e) => out.pageErrors.push(String(e)));
  page.on("request", (r) => { if (!r.url().startsWith("file:")) out.requests.push(r.url()); });
  page.on("dialog", async (d) => { out.dialogs.push(d.message()); await d.dismiss(); });
  await page.goto(pathToFileURL(html).href);
  await page.waitForSelector("body[data-ready=true]", { timeout: 20000 });
  const rows = () => page.$$eval("tr.case-row", (rs) => rs.map((r) => ({ id: r.dataset.case, status: r.dataset.status })));
  out.title = await page.title();
  out.heading = await page.textContent("h1");
  out.verdict = await page.textContent("[data-testid=verdict]");
  out.counts = await page.textContent("[data-testid=counts]");
  out.sections = await page.$$eval("h2", (hs) => hs.map((h) => h.textContent));
  out.charts = await page.$$eval(".chart", (cs) => cs.map((c) => c.dataset.testid));
  out.variantChanges = await page.$$eval("[data-testid=variant-changes]", (cs) => cs.map((c) => Array.from(c.children).map((d) => d.textContent)));
  out.rows = await rows();
  out.shown = await page.textContent("[data-testid=shown]");
  await page.fill("[data-testid=search]", query);
  out.searchRows = await rows();
  out.searchShown = await page.textContent("[data-testid=shown]");
  await page.fill("[data-testid=search]", "");
  await page.selectOption("[data-testid=status-filter]", "failed");
  out.failedRows = await rows();
  await page.selectOption("[data-testid=status-filter]", "all");
  if (openCase) {
    const [id, status] = openCase.split(":");
    await page.fill("[data-testid=search]", id);
    await page.click(`tr.case-row[data-case="${id}"]` + (status ? `[data-status="${status}"]` : ""));
    const detail = await page.$("[data-testid=case-detail]");
    out.detail = {
      text: detail ? await detail.innerText() : null,
      answer: await page.textContent("[data-testid=case-detail] [data-testid=answer]").catch(() => null),
      expected: await page.textContent("[data-testid=case-detail] [data-testid=expected]").catch(() => null),
      diff: await page.textContent("[data-testid=case-detail] [data-testid=snapshot-diff]").catch(() => null),
      injectedElements: await page.$$eval("[data-testid=case-detail] img, [data-testid=case-detail] script, [data-testid=case-detail] b", (n) => n.length),
    };
  }
  out.pwned = await page.evaluate(() => window.__pwned === true);
  await page.screenshot({ path: screenshot, fullPage: true });
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
