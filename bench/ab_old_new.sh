#!/bin/bash
# Usage: git worktree add /tmp/old <commit> (and generate its protos), then
#   LABEL=x SERVEFLAGS="..." [NEW=/path/to/tree] bench/ab_old_new.sh <schedsvc-load args>
# A/B: old tree (aa399a1) vs new tree (HEAD), alternating, fresh server per round.
PY=${PY:-/work/main/.venv/bin/python}
LOAD=/work/main/.venv/bin/schedsvc-load
run() { # $1 tree, $2 port, $3... load args
  tree=$1; port=$2; shift 2
  PYTHONPATH=$tree/service $PY -c "import sys; from schedsvc.cli import main; sys.exit(main())" serve --address 127.0.0.1:$port --config /work/main/bench/pct100.yaml --seed 1 $SERVEFLAGS >/dev/null 2>&1 &
  pid=$!; sleep 2.5
  $LOAD "$@" --target 127.0.0.1:$port --json /tmp/ab.json --no-progress >/dev/null 2>&1
  $PY /work/main/bench/ab_read.py
  kill $pid; wait $pid 2>/dev/null
}
for r in 1 2 3; do
  for side in old new; do
    tree=/tmp/old; [ $side = new ] && tree=${NEW:-/work/main}
    printf "%s %s %s: " "$LABEL" $r $side; run $tree $((50600+r)) "$@"; echo
  done
done
