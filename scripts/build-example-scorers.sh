#!/usr/bin/env bash
# Builds the example scorer components written in Python and JavaScript:
#
#   templates/scorer-python      as python-keywords -> OUT_DIR/python-keywords.wasm  (componentize-py)
#   templates/scorer-javascript  as js-keywords     -> OUT_DIR/js-keywords.wasm      (componentize-js)
#
# The examples are the templates `cautilus plugin new scorer --lang …`
# writes, instantiated here (`{{name}}` replaced), so they never drift.
#
# Usage: scripts/build-example-scorers.sh OUT_DIR
#
# It installs nothing. Point it at the tools with:
#   CAUTILUS_COMPONENTIZE_PY  the componentize-py executable
#                             (pip install componentize-py==0.25.1)
#   CAUTILUS_JS_TOOLS         a node_modules directory holding
#                             @bytecodealliance/componentize-js (and, for the
#                             QuickJS backend, @bytecodealliance/jco)
#                             (npm install @bytecodealliance/componentize-js@0.23.0 @bytecodealliance/jco@1.35.0)
#   CAUTILUS_JS_BACKEND       optional: `starlingmonkey` (default, componentize-js)
#                             or `quickjs` (jco componentize --backend qjs)
#
# Each example is built in a scratch copy with the repository's wit/, so
# nothing (wit/, __pycache__, .wasm) is written into the repository.
set -euo pipefail

die() {
  echo "build-example-scorers: $*" >&2
  exit 2
}

[ $# -eq 1 ] || die "usage: scripts/build-example-scorers.sh OUT_DIR"
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

# --- the tools ---------------------------------------------------------------

py_tool=${CAUTILUS_COMPONENTIZE_PY:-}
[ -n "$py_tool" ] || die "CAUTILUS_COMPONENTIZE_PY is not set: point it at the componentize-py executable (python3 -m venv DIR && DIR/bin/pip install componentize-py==0.25.1; then CAUTILUS_COMPONENTIZE_PY=DIR/bin/componentize-py)"
if [ "${py_tool#*/}" = "$py_tool" ]; then # a bare name: look it up on PATH
  py_tool=$(command -v "$py_tool") || die "CAUTILUS_COMPONENTIZE_PY=$CAUTILUS_COMPONENTIZE_PY is not on PATH"
fi
[ -x "$py_tool" ] || die "CAUTILUS_COMPONENTIZE_PY=$py_tool is not an executable file"

js_tools=${CAUTILUS_JS_TOOLS:-}
[ -n "$js_tools" ] || die "CAUTILUS_JS_TOOLS is not set: point it at a node_modules directory holding @bytecodealliance/componentize-js (npm install @bytecodealliance/componentize-js@0.23.0 @bytecodealliance/jco@1.35.0 in DIR; then CAUTILUS_JS_TOOLS=DIR/node_modules)"
[ -d "$js_tools" ] || die "CAUTILUS_JS_TOOLS=$js_tools is not a directory"
js_tools=$(cd "$js_tools" && pwd)
command -v node >/dev/null || die "node is not on PATH (componentize-js and jco run on Node.js >= 18)"

js_backend=${CAUTILUS_JS_BACKEND:-starlingmonkey}
case "$js_backend" in
  starlingmonkey)
    js_cli=$js_tools/@bytecodealliance/componentize-js/src/cli.js
    [ -f "$js_cli" ] || die "CAUTILUS_JS_TOOLS=$js_tools has no @bytecodealliance/componentize-js (expected $js_cli)"
    js_version="componentize-js $(node -p "require('$js_tools/@bytecodealliance/componentize-js/package.json').version")"
    ;;
  quickjs)
    js_cli=$js_tools/@bytecodealliance/jco/dist/jco.js
    [ -f "$js_cli" ] || die "CAUTILUS_JS_TOOLS=$js_tools has no @bytecodealliance/jco (needed by CAUTILUS_JS_BACKEND=quickjs)"
    js_version="jco $(node -p "require('$js_tools/@bytecodealliance/jco/package.json').version") (QuickJS backend)"
    ;;
  *) die "CAUTILUS_JS_BACKEND=$js_backend: expected starlingmonkey or quickjs" ;;
esac

# --- the builds --------------------------------------------------------------

mkdir -p "$1" || die "cannot create the output directory $1"
out=$(cd "$1" && pwd)

scratch=$(mktemp -d "${TMPDIR:-/tmp}/cautilus-example-scorers.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# Instantiates template $2 as example $1 (`{{name}}` → $1), with the
# repository's wit/, in the scratch directory.
stage() {
  local name=$1 src=$repo/templates/$2 file
  [ -d "$src" ] || die "missing $src"
  mkdir -p "$scratch/$name"
  for file in "$src"/* "$src"/.gitignore; do
    [ -f "$file" ] && sed "s/{{name}}/$name/g" "$file" > "$scratch/$name/$(basename "$file")"
  done
  cp -r "$repo/wit" "$scratch/$name/wit"
}

# timed_build NAME TOOL-LABEL COMMAND...: runs COMMAND in NAME's scratch copy,
# then prints how long it took and the size of OUT_DIR/NAME.wasm.
timed_build() {
  local name=$1 tool=$2
  shift 2
  local start end
  start=$(date +%s%N)
  if ! (cd "$scratch/$name" && "$@") >"$scratch/$name.log" 2>&1; then
    cat "$scratch/$name.log" >&2
    die "building $name with $tool failed (output above)"
  fi
  end=$(date +%s%N)
  [ -s "$out/$name.wasm" ] || die "building $name with $tool wrote no $out/$name.wasm"
  awk -v name="$name" -v tool="$tool" -v ns=$((end - start)) -v size="$(wc -c <"$out/$name.wasm")" \
    -v path="$out/$name.wasm" 'BEGIN { printf "%-16s %-42s %6.1f s  %9d bytes  %s\n", name, tool, ns / 1e9, size, path }'
}

py_version=$("$py_tool" --version 2>/dev/null || echo "componentize-py (version unknown)")

stage python-keywords scorer-python
timed_build python-keywords "$py_version" \
  "$py_tool" -d wit -w scorer componentize app -o "$out/python-keywords.wasm"

stage js-keywords scorer-javascript
if [ "$js_backend" = starlingmonkey ]; then
  timed_build js-keywords "$js_version" \
    node "$js_cli" scorer.js --wit wit --world-name scorer --disable http fetch-event --out "$out/js-keywords.wasm"
else
  timed_build js-keywords "$js_version" \
    node "$js_cli" componentize scorer.js --wit wit --world-name scorer --backend qjs \
    --backend-qjs-disable-async --out "$out/js-keywords.wasm"
fi

echo "try: cautilus score --scorer $out/python-keywords.wasm --output 'refund for order 42' --config '{\"keywords\": [\"refund\", \"order\"]}'"
