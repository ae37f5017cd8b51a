#!/usr/bin/env bash
# Per-case assertion throughput over a family of workload shapes
# (bench/assertion_shapes.py): N cases (default 5,000) × 5 assertions with
# each case's own values, answered by the fixture backend. For each shape:
# the workload is generated with SEED (default: a new one, printed), run
# once to warm the compiled-component cache, then RUNS times (default 5)
# timed as a whole process with peak RSS; the first timed run's verdicts
# are checked against the plain reference implementation. Exits non-zero
# when a verdict differs. Needs a release build:
#   cargo build --release -p cautilus && bench/eval-assertion-shapes.sh [N] [SEED] [shape...]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5000}
seed=${2:-$(date +%s)}
shift $(( $# > 2 ? 2 : $# ))
bin=${CAUTILUS_BIN:-target/release/cautilus}
runs=${RUNS:-5}
shapes=("$@")
[ ${#shapes[@]} -gt 0 ] || read -r -a shapes <<< "$(python3 bench/assertion_shapes.py shapes)"
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
echo "seed $seed, $n cases × 5 assertions, $runs timed runs per shape, $bin"
printf '%-8s %10s %10s %10s %10s  %s\n' shape "wall med" "wall min" "cpu med" "rss max" verdicts
status=0
for shape in "${shapes[@]}"; do
  dir="$work/$shape"
  mkdir -p "$dir"
  python3 bench/assertion_shapes.py gen "$shape" "$n" "$seed" "$dir"
  run() {
    "$bin" eval test --fixture "$dir/suite.fixture.json" --fixture-results "$dir/canned.json" \
      --workspace "$dir" --output-dir "$dir/$1" > /dev/null 2>&1 || true
  }
  run warm
  : > "$dir/times"
  for i in $(seq "$runs"); do
    /usr/bin/time -a -o "$dir/times" -f "%e %U %S %M" "$bin" eval test --fixture "$dir/suite.fixture.json" \
      --fixture-results "$dir/canned.json" --workspace "$dir" --output-dir "$dir/run$i" > /dev/null 2>&1 || true
  done
  verdicts=$(python3 bench/assertion_shapes.py check "$dir" "$dir/run1" | tail -1) || status=1
  python3 - "$dir/times" "$shape" "$verdicts" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l[:1].isdigit()]  # not "Command exited with non-zero status"
wall = [r[0] for r in rows]; cpu = [r[1] + r[2] for r in rows]; rss = max(r[3] for r in rows) / 1024
print(f"{sys.argv[2]:<8} {statistics.median(wall):9.3f}s {min(wall):9.3f}s {statistics.median(cpu):9.3f}s {rss:7.0f} MiB  {sys.argv[3]}")
PY
  rm -rf "$dir"/run* "$dir"/warm
done
exit $status
