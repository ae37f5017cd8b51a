#!/usr/bin/env python3
"""Evidence at scale (issue 37, point 5): a project holding N runs of M
cells, on disk as `cautilus eval test` writes them, and `cautilus serve`
timed over it. Used by bench/evidence-scale.sh; standard library only.

  evidence_scale.py generate BIN PROJECT N M SUITES
  evidence_scale.py time BIN PROJECT SAMPLES

`generate` writes SUITES fixtures of M cases (app/prompt, two assertions
each, one with a threshold), makes three real runs of each with the
fixture backend (`--provider fixture`, canned answers from
`--fixture-results` that fail different cases in each), promotes the first
run of every suite as its baseline, then copies the real run directories
to N ids (timestamps one minute apart, the suites interleaved; the times in
each copy's run.json shifted to match), so the on-disk shape is the real
one. The copies' other files are hard links to the real runs' (COPY=1:
copies), so the records take the space of the real runs only, and are in
the page cache once read: cold disk reads are not measured. `time` starts `cautilus serve --port 0`, times the first page (the
suites page's requests, then a suite's history page's), then every route
SAMPLES times over random runs and cases, and prints p50/p95/max per route,
the first (cold) request of each, and the server's peak RSS.
"""

import datetime
import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request


def fixture(suite, m):
    return {
        "schemaVersion": "cautilus.evaluation_input.v1",
        "surface": "app",
        "preset": "prompt",
        "suiteId": suite,
        "provider": "fixture",
        "model": "m1",
        "assertions": [{"type": "contains", "value": "widget", "name": "mentions-widget"}],
        "cases": [
            {
                "caseId": f"case-{i:05d}",
                "input": f"Describe item {i} of {suite}.",
                "assertions": [
                    {"type": "levenshtein", "value": f"Item {i} is a widget.", "threshold": 0.7}
                ],
            }
            for i in range(m)
        ],
    }


def answers(m, variant):
    """Canned answers: run `variant` fails every (7 + variant)th case."""
    out = {}
    for i in range(m):
        bad = i % (7 + variant) == 0
        text = f"Something else entirely, {i}." if bad else f"Item {i} is a widget."
        out[f"case-{i:05d}"] = {
            "finalText": text,
            "costUsd": round(0.001 * ((i + variant) % 5), 6),
            "durationMs": 100 + (i * (variant + 3)) % 400,
        }
    return out


def generate(binary, project, n, m, suites, links=True):
    if os.path.exists(project):
        shutil.rmtree(project)
    os.makedirs(f"{project}/evals")
    with open(f"{project}/cautilus.toml", "w") as f:
        f.write('dir = "records"\n\n[defaults]\nprovider = "fixture"\n')
    runs_dir = f"{project}/records/runs"
    names = [f"suite-{k}" for k in range(suites)]
    real = []  # (suite, run directory name)
    for suite in names:
        with open(f"{project}/evals/{suite}.fixture.json", "w") as f:
            json.dump(fixture(suite, m), f, indent=1)
        for variant in range(3):
            canned = f"{project}/canned-{suite}-{variant}.json"
            with open(canned, "w") as f:
                json.dump(answers(m, variant), f)
            before = set(os.listdir(runs_dir)) if os.path.isdir(runs_dir) else set()
            done = subprocess.run(
                [binary, "eval", "test", "--fixture", f"evals/{suite}.fixture.json",
                 "--fixture-results", canned, "--quiet"],
                cwd=project, capture_output=True, text=True)
            if done.returncode not in (0, 1):
                sys.exit(f"eval test failed: {done.stderr}")
            (new,) = set(os.listdir(runs_dir)) - before
            real.append((suite, new))
            print(f"real run {suite} #{variant}: {new}", file=sys.stderr)
        first = next(r for s, r in real if s == suite)
        done = subprocess.run([binary, "eval", "promote", f"records/runs/{first}"],
                              cwd=project, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"promote failed: {done.stderr}")
    # Copies: N ids one minute apart, ending now, suites interleaved.
    rng = random.Random(37)
    end = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    start = end - datetime.timedelta(minutes=n + 1)
    copies = 0
    for k in range(n):
        suite, source = real[rng.randrange(len(real))]
        at = start + datetime.timedelta(minutes=k, milliseconds=rng.randrange(1000))
        rid = at.strftime("%Y%m%dT%H%M%S") + f"{at.microsecond // 1000:03d}Z-{rng.randrange(16**4):04x}"
        target = f"{runs_dir}/{rid}"
        # Hard links (a thousand copies of 3 MB runs would take 3 GB): the
        # same bytes under other names; run.json is written anew.
        shutil.copytree(f"{runs_dir}/{source}", target,
                        copy_function=os.link if links else shutil.copy2)
        state = f"{target}/run.json"
        with open(state) as f:
            run = json.load(f)
        os.unlink(state)
        run["startedAt"] = at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"
        ended = at + datetime.timedelta(seconds=5)
        run["endedAt"] = ended.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ended.microsecond // 1000:03d}Z"
        with open(state, "w") as f:
            json.dump(run, f, indent=2)
        copies += 1
    # The real runs stay too (the promoted ones are real records).
    print(f"{copies} copies + {len(real)} real runs of {m} cells, {suites} suites", file=sys.stderr)


def quantile(values, q):
    s = sorted(values)
    if not s:
        return float("nan")
    at = q * (len(s) - 1)
    lo = int(at)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (at - lo)


class Server:
    def __init__(self, binary, project):
        self.proc = subprocess.Popen([binary, "serve", "--port", "0"], cwd=project,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True)
        self.url = self.proc.stdout.readline().strip().rstrip("/")
        self.peak = 0

    def rss(self):
        """VmHWM: the peak resident set so far, in KiB."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        return 0

    def get(self, route, **params):
        qs = urllib.parse.urlencode({k: v for k, v in params.items() if v is not None})
        url = f"{self.url}/api/{route}" + (f"?{qs}" if qs else "")
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=600) as r:
            body = r.read()
        ms = (time.perf_counter() - t) * 1000
        return ms, json.loads(body)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def time_routes(binary, project, samples):
    rng = random.Random(5)
    server = Server(binary, project)
    try:
        # The first page: the suites page (suites.js: the manifest, then 50
        # runs), then a suite's history page, as the app asks (history.js
        # asks its two at once; here one after the other, so this is an
        # upper bound).
        t = time.perf_counter()
        a, manifest = server.get("suites")
        b, page = server.get("runs", limit=50)
        suites_page = (time.perf_counter() - t) * 1000
        suites = sorted({r["suiteId"] for r in page["runs"]}) or ["suite-0"]
        t = time.perf_counter()
        c, _ = server.get("progress", suite=suites[0], limit=100)
        d, _ = server.get("runs", suite=suites[0], limit=50)
        history_page = (time.perf_counter() - t) * 1000
        # Every run id (paging /api/runs) and each run's cases.
        ids = []
        before = None
        while True:
            _, p = server.get("runs", limit=200, before=before)
            ids += [(r["id"], r["suiteId"]) for r in p["runs"]]
            before = p.get("next")
            if not before:
                break
        _, cases = server.get("cases", run=ids[0][0], limit=1000)
        case_ids = [c["caseId"] for c in cases["cases"]]
        by_suite = {}
        for rid, sid in ids:
            by_suite.setdefault(sid, []).append(rid)

        def run():
            return rng.choice(ids)[0]

        def pair():
            sid = rng.choice(sorted(by_suite))
            return rng.choice(by_suite[sid]), rng.choice(by_suite[sid])

        routes = {
            "suites": lambda: server.get("suites"),
            "runs (all, 200)": lambda: server.get("runs", limit=200),
            "runs (suite, 50)": lambda: server.get("runs", suite=rng.choice(suites), limit=50),
            "runs (suite, 50, before)": lambda: server.get(
                "runs", suite=rng.choice(suites), limit=50, before=run()),
            "progress (suite, 100)": lambda: server.get("progress", suite=rng.choice(suites), limit=100),
            "progress (suite, 200)": lambda: server.get("progress", suite=rng.choice(suites)),
            "run": lambda: server.get("run", run=run()),
            "cases (1000)": lambda: server.get("cases", run=run(), limit=1000),
            "cases (failed)": lambda: server.get("cases", run=run(), status="failed"),
            "cell": lambda: server.get("cell", run=run(), case=rng.choice(case_ids)),
            "source": lambda: server.get("source", run=run(), case=rng.choice(case_ids)),
            "compare": lambda: server.get("compare", **dict(zip("ab", pair()))),
            "outputs": lambda: server.get("outputs", **dict(zip("ab", pair())), case=rng.choice(case_ids)),
            "live": lambda: server.get("live"),
        }
        rows = []
        for name, call in routes.items():
            cold, _ = call()
            times = [call()[0] for _ in range(samples)]
            rows.append((name, quantile(times, 0.5), quantile(times, 0.95), max(times), cold))
        # The same run asked again (a second look at a run just opened).
        rid = run()
        server.get("run", run=rid)
        again = [server.get("cases", run=rid, limit=100)[0] for _ in range(samples)]
        rows.append(("cases (same run again)", quantile(again, 0.5), quantile(again, 0.95),
                     max(again), again[0]))
        peak = server.rss()
    finally:
        server.stop()
    # A second start: the index the first one saved (when it does) is read
    # back and checked.
    server = Server(binary, project)
    try:
        t = time.perf_counter()
        a2, _ = server.get("suites")
        b2, _ = server.get("runs", limit=50)
        again_suites = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        c2, _ = server.get("progress", suite=suites[0], limit=100)
        d2, _ = server.get("runs", suite=suites[0], limit=50)
        again_history = (time.perf_counter() - t) * 1000
    finally:
        server.stop()
    n_runs = len(ids)
    print(f"runs: {n_runs}, cells per run: {len(case_ids)}, suites: {len(suites)}, samples per route: {samples}")
    print(f"first page: suites page {suites_page:.0f} ms (suites {a:.0f} + runs {b:.0f}), "
          f"history page {history_page:.0f} ms (progress {c:.0f} + runs {d:.0f})")
    print(f"first page, second start: suites page {again_suites:.0f} ms (suites {a2:.0f} + runs {b2:.0f}), "
          f"history page {again_history:.0f} ms (progress {c2:.0f} + runs {d2:.0f})")
    print(f"{'route':<28} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8} {'first ms':>9}")
    for name, p50, p95, mx, cold in rows:
        print(f"{name:<28} {p50:8.1f} {p95:8.1f} {mx:8.1f} {cold:9.1f}")
    print(f"peak RSS: {peak / 1024:.0f} MiB")


def main():
    cmd = sys.argv[1]
    if cmd == "generate":
        generate(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]),
                 os.environ.get("COPY") != "1")
    elif cmd == "time":
        time_routes(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
