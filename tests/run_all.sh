#!/bin/sh
# make test: runs every suite (unit + GPU tests in build/test_unit, the CLI end to end, the
# viewer), then sums their "N passed, N failed, N skipped" lines into the final one.
BUILD=${1:-build}
total_p=0 total_f=0 total_s=0 status=0
run_suite() {
    name=$1; shift
    echo "== $name"
    log=$(mktemp)
    "$@" 2>&1 | tee "$log"
    rc=$(tail -n 100 "$log" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed, \([0-9]*\) skipped$/\1 \2 \3/p' | tail -1)
    if [ -z "$rc" ]; then
        echo "FAIL $name: the suite ended without a summary line"
        total_f=$((total_f + 1)); status=1
    else
        set -- $rc
        total_p=$((total_p + $1)); total_f=$((total_f + $2)); total_s=$((total_s + $3))
        [ "$2" = 0 ] || status=1
    fi
    rm -f "$log"
}
run_suite layout sh tests/layout.sh
run_suite unit "$BUILD/test_unit"
run_suite cli sh tests/cli.sh "$BUILD/tessera"
run_suite stream sh tests/stream.sh "$BUILD/tessera"
run_suite docs sh tests/docs.sh "$BUILD/tessera"
[ -f tests/viewer.sh ] && run_suite viewer sh tests/viewer.sh "$BUILD/tessera"
# resize against Pillow (Debian's python3-pil is seen by /usr/bin/python3); skips without it
PY=/usr/bin/python3; [ -x "$PY" ] || PY=$(command -v python3 || echo false)
run_suite resize-pillow sh -c '"$1" tests/resize_pillow.py "$2" 2>&1 || [ "$1" != false ] ||
    { echo "# resize_pillow: skipped: no python3"; echo "0 passed, 0 failed, 1 skipped"; }' sh "$PY" "$BUILD/tessera"
# clahe against OpenCV (Debian's python3-opencv); skips without it
run_suite clahe-cv2 sh -c '"$1" tests/clahe_cv2.py "$2" 2>&1 || [ "$1" != false ] ||
    { echo "# clahe_cv2: skipped: no python3"; echo "0 passed, 0 failed, 1 skipped"; }' sh "$PY" "$BUILD/tessera"
[ -f tests/photos.sh ] && run_suite photos sh tests/photos.sh "$BUILD/tessera"
echo "$total_p passed, $total_f failed, $total_s skipped"
exit $status
