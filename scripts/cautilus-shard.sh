#!/usr/bin/env bash
# Runs shard K of N of a cautilus suite into its own run directory, for any
# engine that runs N copies of a job and then a merge (a Slurm job array, a
# Kubernetes Indexed Job, a CI matrix; docs/quality.md, "Sharding a large
# run"):
#
#   scripts/cautilus-shard.sh K N OUT_DIR [eval test arguments…]
#   scripts/cautilus-shard.sh "$SLURM_ARRAY_TASK_ID" 4 shards/$SLURM_ARRAY_TASK_ID --fixture evals/support.fixture.yaml
#
# then, once every shard is done:
#
#   cautilus eval merge shards/1 shards/2 shards/3 shards/4 --output-dir merged
#
# Run again on the same OUT_DIR (a requeued, restarted or retried job), it
# asks `cautilus eval state OUT_DIR` what is there:
#   none        starts the shard: eval test --shard K/N --output-dir OUT_DIR …
#   unfinished  continues it: eval test --resume OUT_DIR (the cases that
#               finished are kept, answers already received are not asked
#               again; the arguments are those the shard started with)
#   completed   does nothing.
#
# Exit status: 0 when the shard's records are written, whether its cells
# passed or not (cautilus exits 1 when a cell errored or, without declared
# gates, did not pass: the merge, whose exit status is the whole run's,
# decides); otherwise cautilus's own (2 the fixture or flags are invalid,
# 130/143 interrupted, …), so the scheduler sees the failure and may retry.
# A SIGTERM or SIGINT the script gets is passed on to cautilus, which stops
# between cases and writes what finished (a Kubernetes pod's main process
# is the only one signalled).
#
# CAUTILUS_BIN names the binary (default: `cautilus` on PATH).
set -eu

usage() {
  echo "usage: $0 K N OUT_DIR [eval test arguments…]" >&2
  exit 2
}
[ "$#" -ge 3 ] || usage
k=$1
n=$2
out=$3
shift 3
case $k$n in
  *[!0-9]*) usage ;;
esac
bin=${CAUTILUS_BIN:-cautilus}

state=$("$bin" eval state "$out")
case $state in
  completed)
    echo "cautilus-shard: shard $k/$n in $out completed earlier" >&2
    exit 0
    ;;
  unfinished)
    echo "cautilus-shard: continuing the unfinished shard $k/$n in $out" >&2
    set -- eval test --resume "$out"
    ;;
  none)
    set -- eval test --shard "$k/$n" --output-dir "$out" "$@"
    ;;
  *)
    echo "cautilus-shard: \`$bin eval state $out\` printed \"$state\"" >&2
    exit 2
    ;;
esac

# cautilus runs in the background so that a signal reaches this script's
# trap at once, is passed on, and the script waits for cautilus to write
# its records.
interrupted=0
child=
forward() {
  interrupted=1
  if [ -n "$child" ]; then kill -s "$1" "$child" 2>/dev/null || true; fi
}
trap 'forward TERM' TERM
trap 'forward INT' INT
"$bin" "$@" &
child=$!
status=0
wait "$child" || status=$?
# A trapped signal ends `wait` early (status > 128); wait again for
# cautilus's own status (127: the first wait had it already).
while [ "$interrupted" = 1 ]; do
  interrupted=0
  again=0
  wait "$child" || again=$?
  [ "$again" = 127 ] || status=$again
done
trap - TERM INT

case $status in
  0 | 1) exit 0 ;;
  *) exit "$status" ;;
esac
