#!/usr/bin/env bash
# Refreshes templates/locks/{scorer,preset}.lock: the locked dependencies of
# the SDK that `plugin new` and `pack new|add` write into a new project's
# Cargo.lock. Run it after changing the SDK's dependencies or version
# (a unit test in engine/src/authoring/lockfile.rs fails until you do).
# Needs a built cautilus (debug is fine) and network access to crates.io.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
cautilus="${CAUTILUS:-$repo/target/debug/cautilus}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
strip_root() { # the lock without the scaffolded crate's own entry
  python3 - "$1" "$2" <<'PY'
import sys
text, root = open(sys.argv[1]).read(), sys.argv[2]
head, *blocks = text.split("\n[[package]]\n")
keep = [b for b in blocks if not b.startswith(f'name = "{root}"\n')]
sys.stdout.write(head + "".join("\n[[package]]\n" + b for b in keep))
PY
}
"$cautilus" pack new lockgen --path "$work/pack" >/dev/null
"$cautilus" pack add preset lockgen-preset --pack "$work/pack" >/dev/null
cd "$work/pack"
# a scorer-only lock, then a preset-only one
sed -i 's|^members = .*|members = ["scorers/lockgen-check"]|' Cargo.toml
rm -f Cargo.lock && cargo generate-lockfile --quiet
strip_root Cargo.lock lockgen-check > "$repo/templates/locks/scorer.lock"
sed -i 's|^members = .*|members = ["presets/lockgen-preset"]|' Cargo.toml
rm -f Cargo.lock && cargo generate-lockfile --quiet
strip_root Cargo.lock lockgen-preset > "$repo/templates/locks/preset.lock"
echo "wrote templates/locks/scorer.lock and templates/locks/preset.lock"
