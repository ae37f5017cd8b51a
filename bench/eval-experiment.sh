#!/usr/bin/env bash
# Scale check for an experiment: an app/prompt suite of N cases (default
# 50,000) from a JSONL case file, two variants (a baseline and a
# candidate), one trial, a suite-level `contains` assertion and a gate,
# answered by the fixture backend: 2·N cells, compared pairwise, written to
# experiment.json. Timed as a whole process with wall, CPU and peak RSS.
#   cargo build --release -p cautilus && bench/eval-experiment.sh [N] [TRIALS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50000}
trials=${2:-1}
bin=${CAUTILUS_BIN:-target/release/cautilus}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

python3 - "$n" "$trials" "$work" <<'PY'
import json, sys
n, trials, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
suite = {"schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
         "suiteId": "experiment-scale", "provider": "openai", "system": "Answer briefly.",
         "trials": trials, "baseline": "current",
         "variants": {"current": {"model": "small-v1"}, "candidate": {"model": "small-v2"}},
         "assertions": [{"type": "contains"}],
         "gates": {"passRate": {"min": 0.5}},
         "cases": "./cases.jsonl"}
with open(f"{work}/cases.jsonl", "w") as out:
    for i in range(n):
        out.write(json.dumps({"caseId": f"case-{i:07d}",
                              "input": f"Question {i}: describe item {i} in one sentence.",
                              "expected": {"finalText": f"item {i}"}}) + "\n")
json.dump(suite, open(f"{work}/experiment.fixture.json", "w"))
PY

args=(eval test --fixture "$work/experiment.fixture.json" --workspace "$work" --provider fixture)
"$bin" "${args[@]}" --output-dir "$work/warm" > /dev/null
rm -rf "$work/warm"
for run in 1 2 3; do
  /usr/bin/time -f "run $run: wall %e s, cpu %U+%S s, peak RSS %M KiB" \
    "$bin" "${args[@]}" --output-dir "$work/run$run" > /dev/null
  cells=$(python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print(len(r['cells']), r['passed'])" "$work/run$run/experiment.json")
  echo "  cells, passed: $cells"
  rm -rf "$work/run$run"
done
