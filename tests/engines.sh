#!/bin/sh
# tests/engines.sh - `make engines-check`: tessera under the engines people run it on: a real
# one-node Slurm job array (tools/slurm_check.sh) and a local Ray Data with two actors
# (tests/ray_check.py, with the venv that `make engines-deps` makes, else python3). Each part
# skips where its engine is missing. Ends with "N passed, N failed, N skipped" over all parts.
BUILD=${1:-build}
PY=.deps/venv/bin/python; [ -x "$PY" ] || PY=$(command -v python3 || echo python3)
p=0 f=0 s=0 status=0
for suite in "sh tools/slurm_check.sh $BUILD/tessera" "$PY tests/ray_check.py $BUILD/tessera"; do
    echo "== $suite"
    log=$(mktemp)
    $suite 2>&1 | tee "$log"
    line=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' "$log" | tail -1)
    rm -f "$log"
    if [ -z "$line" ]; then echo "FAIL: $suite ended without a summary"; f=$((f + 1)); status=1; continue; fi
    set -- $line
    p=$((p + $1)); f=$((f + $2)); s=$((s + $3)); [ "$2" = 0 ] || status=1
done
echo "$p passed, $f failed, $s skipped"
exit $status
