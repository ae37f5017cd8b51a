#!/usr/bin/env bash
# cautilus against promptfoo on one shape of bench/assertion_shapes.py
# (default `literal`, N = 5,000 cases × 5 assertions, SEED default 42): the
# same generated suite as a promptfoo config (bench/promptfoo_shape.py), its
# echo provider answering each case with the case's canned answer, promptfoo's
# equals/contains/regex/levenshtein/is-json assertions. Both tools run in the
# same minutes, interleaved (RUNS rounds, default 3), timed as whole processes
# (wall, CPU user+sys, peak RSS); then the medians and their ratio, and the
# verdict counts of both (the script fails when they differ, or when either
# differs from the shapes bench's reference).
#
# Needs a release build of cautilus and promptfoo 0.123 under Node 22, e.g.:
#   npm install --prefix /tmp/node22 node@22
#   PATH=/tmp/node22/node_modules/node/bin:$PATH npm install --prefix /tmp/pf promptfoo@0.123
#   PROMPTFOO=/tmp/pf/node_modules/.bin/promptfoo NODE22=/tmp/node22/node_modules/node/bin \
#     bench/promptfoo-shape.sh [N] [SEED] [SHAPE]
# No network is used: telemetry and update checks are off, nothing is cached
# or written to promptfoo's database (its config dir is a temporary one).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5000}
seed=${2:-42}
shape=${3:-literal}
bin=${CAUTILUS_BIN:-target/release/cautilus}
promptfoo=${PROMPTFOO:?set PROMPTFOO to promptfoo 0.123\'s bin/promptfoo}
runs=${RUNS:-3}
[ -n "${NODE22:-}" ] && export PATH="$NODE22:$PATH"
node --version | grep -q '^v22\.' || { echo "promptfoo 0.123 needs Node 22 (node is $(node --version))" >&2; exit 2; }
export PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_DISABLE_SHARING=1
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
export PROMPTFOO_CONFIG_DIR="$work/promptfoo-home"

python3 bench/assertion_shapes.py gen "$shape" "$n" "$seed" "$work"
python3 bench/promptfoo_shape.py config "$work"
echo "shape $shape, seed $seed, $n cases × 5 assertions, $runs interleaved rounds"
echo "cautilus: $bin ($("$bin" --version))"
echo "promptfoo: $promptfoo ($("$promptfoo" --version 2>/dev/null | tail -1)), node $(node --version)"

ours=("$bin" eval test --fixture "$work/suite.fixture.json" --fixture-results "$work/canned.json"
      --workspace "$work")
# promptfoo exits 100 when a test fails (here every case: is-json is required).
theirs=("$promptfoo" eval -c "$work/promptfooconfig.json" --no-cache --no-write --no-table
        --no-progress-bar)
"${ours[@]}" --output-dir "$work/warm" > /dev/null 2>&1 || true
"${theirs[@]}" -o "$work/warm.json" > "$work/warm.log" 2>&1 || true
: > "$work/times"
for round in $(seq "$runs"); do
  # Alternate which goes first, so drift over the minutes hits both alike.
  order=(cautilus promptfoo)
  [ $((round % 2)) -eq 0 ] && order=(promptfoo cautilus)
  for tool in "${order[@]}"; do
    if [ "$tool" = cautilus ]; then
      /usr/bin/time -a -o "$work/times" -f "$tool %e %U %S %M" \
        "${ours[@]}" --output-dir "$work/run-cautilus-$round" > /dev/null 2>&1 || true
    else
      /usr/bin/time -a -o "$work/times" -f "$tool %e %U %S %M" \
        "${theirs[@]}" -o "$work/run-promptfoo-$round.json" > "$work/run-promptfoo-$round.log" 2>&1 || true
    fi
  done
done

python3 - "$work/times" <<'PY'
import statistics, sys
rows = {}
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) == 5 and f[0] in ("cautilus", "promptfoo"):
        rows.setdefault(f[0], []).append((float(f[1]), float(f[2]) + float(f[3]), int(f[4]) / 1024))
med = {}
for tool, v in rows.items():
    wall = statistics.median(r[0] for r in v); cpu = statistics.median(r[1] for r in v)
    med[tool] = (wall, cpu)
    print(f"{tool:9} wall {wall:7.2f} s (runs {', '.join(f'{r[0]:.2f}' for r in v)}), "
          f"cpu {cpu:7.2f} s, peak RSS {max(r[2] for r in v):.0f} MiB")
print(f"ratio promptfoo/cautilus: wall {med['promptfoo'][0] / med['cautilus'][0]:.0f}x, "
      f"cpu {med['promptfoo'][1] / med['cautilus'][1]:.0f}x")
PY

echo "verdicts (reference, then each tool):"
python3 bench/assertion_shapes.py check "$work" "$work/run-cautilus-1" | tail -1
a=$(python3 bench/promptfoo_shape.py ours "$work/run-cautilus-1")
b=$(python3 bench/promptfoo_shape.py theirs "$work/run-promptfoo-1.json")
echo "cautilus:  $a"
echo "promptfoo: $b"
[ "$a" = "$b" ] || { echo "the verdict counts differ" >&2; exit 1; }
