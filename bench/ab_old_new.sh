#!/bin/bash
# A/B of two source trees, alternating, a fresh server per round:
#   git worktree add /tmp/old <commit> (and generate its protos into /tmp/old/service/schedsvc/v1), then
#   (server flags such as --feature-gates go in SERVEFLAGS: schedsvc-load ignores them with --target)
#   LABEL=x [CONFIG=bench/pct100.yaml] [SERVEFLAGS="..."] [OLD=/tmp/old] [NEW=/work/main] \
#     bench/ab_old_new.sh <schedsvc-load args>
# CONFIG empty ("CONFIG=") runs the server with kube's defaults (adaptive percentageOfNodesToScore).
PY=${PY:-/work/main/.venv/bin/python}
LOAD=${LOAD:-/work/main/.venv/bin/schedsvc-load}
CONFIG=${CONFIG-/work/main/bench/pct100.yaml}
OLD=${OLD:-/tmp/old}
run() { # $1 tree, $2 port, $3... load args
  tree=$1; port=$2; shift 2
  cfg=(); [ -n "$CONFIG" ] && cfg=(--config "$CONFIG")
  PYTHONPATH=$tree/service $PY -c "import sys; from schedsvc.cli import main; sys.exit(main())" serve --address 127.0.0.1:$port "${cfg[@]}" --seed 1 $SERVEFLAGS >/dev/null 2>&1 &
  pid=$!; sleep 2.5
  $LOAD "$@" --target 127.0.0.1:$port --json /tmp/ab.json --no-progress >/dev/null 2>&1
  $PY "$(dirname "$0")/ab_read.py"
  kill $pid; wait $pid 2>/dev/null
}
for r in 1 2 3; do
  sides="old new"; [ $((r % 2)) = 0 ] && sides="new old"
  for side in $sides; do
    tree=$OLD; [ $side = new ] && tree=${NEW:-/work/main}
    printf "%s %s %s: " "$LABEL" $r $side; run $tree $((50600 + 2 * r + $([ $side = new ] && echo 1 || echo 0))) "$@" | tr -d '\n'; echo
  done
done
