#!/usr/bin/env bash
# Evidence at scale (issue 37, point 5): N runs (default 1,000) of M cells
# (default 1,000) of SUITES suites (default 4, each with a promoted
# baseline), on disk as `cautilus eval test` writes them (real runs through
# the fixture backend, copied to N ids), then `cautilus serve --port 0`
# timed route by route: p50/p95/max over SAMPLES requests each (random runs
# and cases), the first (cold) request of each, the first page, the peak
# RSS. Needs a release build:
#   cargo build --release -p cautilus && bench/evidence-scale.sh [N] [M] [SUITES] [SAMPLES]
# PROJECT=dir keeps the generated project there (and reuses it when it
# already holds records: delete it to regenerate); by default a temporary
# directory, removed at the end. The copies are hard links (COPY=1: real
# copies, about 3 MB a 1,000-cell run).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000}
m=${2:-1000}
suites=${3:-4}
samples=${4:-30}
bin=$(realpath "${CAUTILUS_BIN:-target/release/cautilus}")
if [ -n "${PROJECT:-}" ]; then
  project=$PROJECT
else
  project=$(mktemp -d)/project
  trap 'rm -rf "$(dirname "$project")"' EXIT
fi
if [ ! -d "$project/records/runs" ]; then
  COPY=${COPY:-0} python3 bench/evidence_scale.py generate "$bin" "$project" "$n" "$m" "$suites"
fi
python3 bench/evidence_scale.py time "$bin" "$project" "$samples"
