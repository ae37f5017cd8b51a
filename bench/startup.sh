#!/usr/bin/env bash
# Start-up of `cautilus` on a warm compiled cache: the README example
# (`eval test` of the bundled 2-case app/prompt fixture through the fixture
# backend), `eval validate` of it, and `--version`, each run RUNS times
# (default 50) as a whole process from an empty working directory, with its
# own HOME, CAUTILUS_HOME and cache. Prints the median and fastest wall
# time, the median CPU time (user + system) and the peak RSS. Needs a
# release build:
#   cargo build --release -p cautilus && bench/startup.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-50}
bin=$(realpath "${CAUTILUS_BIN:-target/release/cautilus}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp fixtures/eval/app/prompt/tagline.fixture.json "$work/"
export HOME="$work/home" CAUTILUS_HOME="$work/cautilus-home" CAUTILUS_CACHE_DIR="$work/cache"
cd "$work"
# The first run compiles the built-in components into the cache and keeps
# what they say about themselves; the timed runs start warm.
"$bin" eval test --fixture tagline.fixture.json --provider fixture > /dev/null 2>&1
python3 - "$runs" "$bin" <<'PY'
import os, statistics, subprocess, sys, time
runs, binary = int(sys.argv[1]), sys.argv[2]
commands = {
    "eval test (README example)": ["eval", "test", "--fixture", "tagline.fixture.json", "--provider", "fixture"],
    "eval validate": ["eval", "validate", "--fixture", "tagline.fixture.json"],
    "--version": ["--version"],
}
for name, args in commands.items():
    walls, cpus, rss = [], [], 0
    for _ in range(runs):
        started = time.perf_counter()
        child = subprocess.Popen([binary, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        walls.append(time.perf_counter() - started)
        cpus.append(usage.ru_utime + usage.ru_stime)
        rss = max(rss, usage.ru_maxrss)
        if status != 0:
            sys.exit(f"{name}: exit status {status}")
    print(f"{name:28} wall median {statistics.median(walls) * 1000:5.1f} ms (fastest {min(walls) * 1000:5.1f}), "
          f"CPU median {statistics.median(cpus) * 1000:5.1f} ms, peak RSS {rss / 1024:.0f} MiB")
PY
