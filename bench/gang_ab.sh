#!/bin/bash
# In-process A/B of a 1000-pod gang on 5000 nodes (bench/gang_inproc.py), two source trees
# alternated on one machine, each run its own process:
#   git worktree add /tmp/old <commit> && (cd /tmp/old && make gen), then
#   [OLD=/tmp/old] [NEW=/work/main] [ROUNDS=3] [GANGS=8] bench/gang_ab.sh [--nofit]
# Prints, per run, the tree and the gangs' times sorted (ms), then each tree's median of all.
PY=${PY:-/work/main/.venv/bin/python}
OLD=${OLD:-/tmp/old}
NEW=${NEW:-/work/main}
declare -A all
for r in $(seq 1 "${ROUNDS:-3}"); do
  sides="old new"; [ $((r % 2)) = 0 ] && sides="new old"
  for side in $sides; do
    tree=$OLD; [ "$side" = new ] && tree=$NEW
    ms=$(cd "$tree" && PYTHONPATH=$tree/service:$tree/clients $PY bench/gang_inproc.py "${GANGS:-8}" "$@" \
      | awk '/ ms$/ {print $(NF-1)}' | sort -n | tr '\n' ' ')
    echo "round $r $side: $ms"
    all[$side]="${all[$side]} $ms"
  done
done
for side in old new; do
  echo "$side median: $(echo "${all[$side]}" | tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END {print (NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2)}') ms"
done
