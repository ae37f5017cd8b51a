#!/usr/bin/env bash
# Provider concurrency of `cautilus eval test`: an app/prompt suite of N
# cases (default 500) through the built-in `openai` provider against a
# loopback OpenAI-compatible server that answers each request after
# DELAY_MS (default 50), with --concurrency C (default 64). The ideal wall
# time is N x DELAY / C (0.39 s at the defaults). Timed as a whole process
# (start-up, checking pass and records included) with peak RSS; the server
# (bench/slow_openai_server.rs) reports how many requests it held at once.
# PROVIDER=http sends the same cases through the built-in `http` provider
# instead (the suite's `http` field: an OpenAI-style body template, the
# answer at `$.choices[0].message.content`), to compare the two on one
# server.
# Needs release builds of both:
#   cargo build --release -p cautilus && cargo build --release -p cautilus-tests --example slow-openai-server
#   bench/provider-concurrency.sh [N] [C] [DELAY_MS]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-500}
concurrency=${2:-64}
delay=${3:-50}
bin=${CAUTILUS_BIN:-target/release/cautilus}
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT

provider=${PROVIDER:-openai}
python3 - "$n" "$work" "$provider" <<'PY'
import json, sys
n, work, provider = int(sys.argv[1]), sys.argv[2], sys.argv[3]
cases = [{"caseId": f"case-{i:04d}", "input": f"echo item {i}",
          "expected": {"finalText": f"echo item {i}"}} for i in range(n)]
suite = {
    "schemaVersion": "cautilus.evaluation_input.v1", "surface": "app", "preset": "prompt",
    "suiteId": "provider-concurrency", "provider": "openai", "model": "bench-model",
    "cases": cases,
}
if provider == "http":
    suite["provider"] = "http"
    suite["http"] = {
        "url": "http://127.0.0.1:${{ BENCH_PORT }}/v1/chat/completions",
        "body": {"model": "${model}", "messages": "${messages}"},
        "answer": "$.choices[0].message.content",
        "usage": {"inputTokens": "$.usage.prompt_tokens", "outputTokens": "$.usage.completion_tokens"},
    }
json.dump(suite, open(f"{work}/suite.fixture.json", "w"))
PY

# The server stops when this script's end closes its stdin.
server=${CAUTILUS_BENCH_SERVER:-target/release/examples/slow-openai-server}
exec 3> >(exec "$server" "$work/port" "$delay")
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")

run() {
  BENCH_PORT=$port OPENAI_BASE_URL="http://127.0.0.1:$port/v1" OPENAI_API_KEY=bench-key \
    "$bin" eval test --fixture "$work/suite.fixture.json" --provider "$provider" \
    --concurrency "$concurrency" --workspace "$work" --output-dir "$work/$1" > /dev/null || true
}
run warm   # a first run on a machine compiles the built-in components
for i in 1 2 3; do
  /usr/bin/time -f "run $i: wall %e s, cpu %U+%S s, peak RSS %M KiB" \
    bash -c "$(declare -f run); bin=$bin work=$work port=$port concurrency=$concurrency provider=$provider run run$i"
done
python3 - "$work/run1/eval-summary.json" <<'PY'
import json, sys
summary = json.load(open(sys.argv[1]))
print("run 1:", summary.get("recommendation"), summary.get("evaluationCounts"))
PY
exec 3>&-
sleep 0.2
