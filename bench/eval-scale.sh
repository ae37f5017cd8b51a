#!/usr/bin/env bash
# Scale check for `cautilus eval test`: an app/prompt fixture with N cases
# (default 10,000) answered by the fixture backend, timed as a whole process
# (start-up included) with wall, CPU and peak RSS. FORMAT `json` (default)
# writes the cases inline in a JSON fixture (at most 64 MiB, about 500,000
# such cases); `jsonl` writes them one per line to a case file the fixture
# names (any size). Needs a release build:
#   cargo build --release -p cautilus && bench/eval-scale.sh [N] [json|jsonl]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
format=${2:-json}
bin=${CAUTILUS_BIN:-target/release/cautilus}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$n" "$format" "$work" <<'PY'
import json, sys
n, fmt, work = int(sys.argv[1]), sys.argv[2], sys.argv[3]
suite = {"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
         "suiteId": "scale", "provider": "anthropic", "model": "claude-sonnet-4-6",
         "system": "Answer briefly."}
def case(i):
    return {"caseId": f"case-{i:07d}", "input": f"Question {i}: describe item {i} in one sentence.",
            "expected": {"finalText": f"item {i}"}}
if fmt == "jsonl":
    with open(f"{work}/cases.jsonl", "w") as out:
        for i in range(n):
            out.write(json.dumps(case(i)) + "\n")
    suite["cases"] = "./cases.jsonl"
else:
    suite["cases"] = [case(i) for i in range(n)]
json.dump(suite, open(f"{work}/scale.fixture.json", "w"))
PY

# Warm the compiled-component cache once (a first run on a machine compiles).
"$bin" eval test --provider fixture --fixture "$work/scale.fixture.json" --workspace "$work" --output-dir "$work/warm" > /dev/null
rm -rf "$work/warm"
for run in 1 2 3; do
  /usr/bin/time -f "run $run: wall %e s, cpu %U+%S s, peak RSS %M KiB" \
    "$bin" eval test --provider fixture --fixture "$work/scale.fixture.json" --workspace "$work" --output-dir "$work/run$run" > /dev/null
  rm -rf "$work/run$run"
done
