#!/usr/bin/env bash
# Assertion throughput of `cautilus eval test`: an app/prompt suite of N
# cases (default 5,000), each a ~200-character input (about 30 % of them
# JSON objects), answered by the fixture backend (canned: the input echoed
# back), with five assertions per case (equals, contains, regex,
# levenshtein, is-json). MODE `suite` (default) gives the five once at
# suite level (one config each for all cases); `per-case` gives every case
# its own five with that case's values (equals/contains/regex on its text,
# levenshtein with max_distance), the way most suites are written: 25,000
# distinct configs at N=5,000. Timed as a whole process (start-up
# included) with peak RSS. Needs a release build:
#   cargo build --release -p cautilus && bench/eval-assertions.sh [N] [suite|per-case]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5000}
mode=${2:-suite}
bin=${CAUTILUS_BIN:-target/release/cautilus}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

python3 - "$n" "$work" "$mode" <<'PY'
import json, random, re, sys
n, work, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
random.seed(7)
words = "plugin sandbox fixture preset scorer provider judge record summary case".split()
cases, canned = [], {}
for i in range(n):
    if i % 10 < 3:
        text = json.dumps({"id": i, "title": f"item {i}", "tags": random.sample(words, 4),
                           "body": " ".join(random.choices(words, k=14))})
    else:
        text = f"item {i}: " + " ".join(random.choices(words, k=26))
    text = text[:200]
    case_id = f"case-{i:05d}"
    case = {"caseId": case_id, "input": text, "expected": {"finalText": text[:40]}}
    if mode == "per-case":
        case["assertions"] = [
            {"type": "equals", "value": text},
            {"type": "contains", "value": text[10:30]},
            {"type": "regex", "value": "^" + re.escape(text[:12])},
            {"type": "levenshtein", "value": text[:150], "max_distance": 60},
            {"type": "is-json", "required": False},
        ]
    cases.append(case)
    canned[case_id] = text
suite = {
    "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
    "suiteId": "assertion-throughput", "provider": "anthropic", "model": "claude-sonnet-4-6",
    "cases": cases,
}
if mode == "suite":
    suite["assertions"] = [
        {"type": "equals"},
        {"type": "contains"},
        {"type": "regex", "value": "item \\d+"},
        {"type": "levenshtein", "threshold": 0.3},
        {"type": "is-json", "required": False},
    ]
json.dump(suite, open(f"{work}/suite.fixture.json", "w"))
json.dump(canned, open(f"{work}/canned.json", "w"))
PY

run() {
  "$bin" eval test --fixture "$work/suite.fixture.json" --fixture-results "$work/canned.json" \
    --workspace "$work" --output-dir "$work/$1" > /dev/null || true
}
run warm   # a first run on a machine compiles the built-in components
for i in 1 2 3; do
  /usr/bin/time -f "run $i: wall %e s, cpu %U+%S s, peak RSS %M KiB" bash -c "$(declare -f run); bin=$bin work=$work run run$i"
done
