#!/bin/bash
# A/B of two source trees, alternating, a fresh server per round:
#   git worktree add /tmp/old <commit> (and generate its protos into /tmp/old/service/schedsvc/v1), then
#   (server flags such as --feature-gates go in SERVEFLAGS: schedsvc-load ignores them with --target)
#   LABEL=x [CONFIG=bench/pct100.yaml] [SERVEFLAGS="..."] [OLD=/tmp/old] [NEW=/work/main] \
#     [METRICS=1] [ROUNDS=3] bench/ab_old_new.sh <schedsvc-load args>
# CONFIG empty ("CONFIG=") runs the server with kube's defaults (adaptive percentageOfNodesToScore).
# METRICS=1 serves Prometheus metrics (the Prometheus observer on) and prints, after pods/s, the
# server's cpu ticks over the load and its loop slices and rests.
PY=${PY:-/work/main/.venv/bin/python}
LOAD=${LOAD:-/work/main/.venv/bin/schedsvc-load}
CONFIG=${CONFIG-/work/main/bench/pct100.yaml}
OLD=${OLD:-/tmp/old}
run() { # $1 tree, $2 port, $3... load args
  tree=$1; port=$2; shift 2
  cfg=(); [ -n "$CONFIG" ] && cfg=(--config "$CONFIG")
  met=(); [ -n "$METRICS" ] && met=(--metrics-address "127.0.0.1:$((port + 1000))")
  PYTHONPATH=$tree/service $PY -c "import sys; from schedsvc.cli import main; sys.exit(main())" serve --address 127.0.0.1:$port "${cfg[@]}" "${met[@]}" --seed 1 $SERVEFLAGS >/dev/null 2>&1 &
  pid=$!; sleep 2.5
  c0=$(awk '{print $14+$15}' /proc/$pid/stat)
  $LOAD "$@" --target 127.0.0.1:$port --json /tmp/ab.json --no-progress >/dev/null 2>&1
  c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  $PY "$(dirname "$0")/ab_read.py"
  if [ -n "$METRICS" ]; then
    printf " cpu=%sticks " $((c1 - c0))
    $PY -c "import sys, urllib.request; print(' '.join(l for l in urllib.request.urlopen(sys.argv[1]).read().decode().splitlines() if l.startswith('schedsvc_loop_slice')))" "http://127.0.0.1:$((port + 1000))/metrics"
  fi
  kill $pid; wait $pid 2>/dev/null
}
for r in $(seq 1 "${ROUNDS:-3}"); do
  sides="old new"; [ $((r % 2)) = 0 ] && sides="new old"
  for side in $sides; do
    tree=$OLD; [ $side = new ] && tree=${NEW:-/work/main}
    printf "%s %s %s: " "$LABEL" $r $side; run $tree $((50600 + 2 * r + $([ $side = new ] && echo 1 || echo 0))) "$@" | tr -d '\n'; echo
  done
done
