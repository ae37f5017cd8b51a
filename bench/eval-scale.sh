#!/usr/bin/env bash
# Scale check for `cautilus eval test`: an app/prompt fixture with N cases
# (default 10,000) answered by the fixture backend, timed as a whole process
# (start-up included) with peak RSS. Needs a release build:
#   cargo build --release -p cautilus && bench/eval-scale.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
bin=${CAUTILUS_BIN:-target/release/cautilus}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$n" > "$work/scale.fixture.json" <<'PY'
import json, sys
n = int(sys.argv[1])
cases = [{"caseId": f"case-{i:05d}", "input": f"Question {i}: describe item {i} in one sentence.",
          "expected": {"finalText": f"item {i}"}} for i in range(n)]
print(json.dumps({"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
                  "suiteId": "scale", "provider": "anthropic", "model": "claude-sonnet-4-6",
                  "system": "Answer briefly.", "cases": cases}))
PY

# Warm the compiled-component cache once (a first run on a machine compiles).
"$bin" eval test --fixture "$work/scale.fixture.json" --workspace "$work" --output-dir "$work/warm" > /dev/null
for run in 1 2 3; do
  /usr/bin/time -f "run $run: wall %e s, peak RSS %M KiB" \
    "$bin" eval test --fixture "$work/scale.fixture.json" --workspace "$work" --output-dir "$work/run$run" > /dev/null
done
