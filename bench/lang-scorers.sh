#!/usr/bin/env bash
# Per-call cost of a scorer written in Python, JavaScript or Rust: an
# app/prompt suite of N cases (default 20,000) answered by the fixture
# backend, each checked by one suite-level keyword assertion, scored by
# python-keywords (templates/scorer-python, componentize-py),
# js-keywords (templates/scorer-javascript, componentize-js) and the built-in Rust
# `contains-all`. Timed as whole processes (after a warm-up run that
# compiles each component into the cache) with peak RSS; the difference
# between a language's CPU and the Rust scorer's, divided by N, is its
# cost per call. Needs a release build and the toolchains of
# scripts/build-example-scorers.sh:
#   cargo build --release -p cautilus
#   CAUTILUS_COMPONENTIZE_PY=… CAUTILUS_JS_TOOLS=… bench/lang-scorers.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20000}
bin=${CAUTILUS_BIN:-target/release/cautilus}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

scripts/build-example-scorers.sh "$work" >&2

python3 - "$n" "$work" <<'PY'
import json, sys
n, work = int(sys.argv[1]), sys.argv[2]
cases, canned = [], {}
for i in range(n):
    answer = f"Your refund for order {i} is on its way" if i % 2 == 0 else f"Ticket {i} is closed"
    cases.append({"caseId": f"c{i:06d}", "input": f"where is order {i}"})
    canned[f"c{i:06d}"] = answer
for name, assertion in [
    ("python", {"type": "./python-keywords.wasm", "keywords": ["refund", "order"]}),
    ("javascript", {"type": "./js-keywords.wasm", "keywords": ["refund", "order"]}),
    ("rust", {"type": "contains-all", "value": ["refund", "order"]}),
]:
    suite = {"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
             "suiteId": f"lang-{name}", "provider": "fixture", "model": "canned",
             "assertions": [assertion], "cases": cases}
    json.dump(suite, open(f"{work}/{name}.fixture.json", "w"))
json.dump(canned, open(f"{work}/canned.json", "w"))
PY

for lang in rust python javascript; do
  run() {
    "$bin" eval test --fixture "$work/$1.fixture.json" --fixture-results "$work/canned.json" \
      --workspace "$work" --output-dir "$work/out-$1-$2" > /dev/null || true
  }
  start=$(date +%s%N)
  run "$lang" warm
  echo "$lang: warm-up run (compiles the component once per machine): $(( ($(date +%s%N) - start) / 1000000 )) ms"
  for i in 1 2 3; do
    /usr/bin/time -f "$lang run $i: wall %e s, cpu %U+%S s, peak RSS %M KiB" \
      bash -c "$(declare -f run); bin=$bin work=$work run $lang $i"
  done
done
