#!/bin/sh
# tools/clahe_check.sh - the clahe family's device check in one call: the GPU tests of the family
# (and the whole unit suite's GPU part), compute-sanitizer (memcheck, racecheck, synccheck) on
# the clahe kernels at the small odd sizes, the benchmark's clahe rows with the cluster sweep,
# and OpenCV's CPU CLAHE on the same host as the baseline.
# Usage: sh tools/clahe_check.sh OUTDIR [steps...]; steps: test sanitize bench cv2 (default: all).
# Runs prebuilt binaries from build/ (test_unit, bench); LD_LIBRARY_PATH as the caller sets it.
set -u
OUT=${1:?outdir}; shift
STEPS=${*:-test sanitize bench cv2}
mkdir -p "$OUT"
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
{
log "device"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
} >"$OUT/device.log" 2>&1
cat "$OUT/device.log"
if has test; then
    log "GPU tests (clahe, then everything)" | tee "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 200 build/test_unit clahe >>"$OUT/tests.log" 2>&1
    echo "test_unit clahe exit $?" | tee -a "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 240 build/test_unit >>"$OUT/tests.log" 2>&1
    echo "test_unit exit $?" | tee -a "$OUT/tests.log"
    grep -E "^(FAIL|# clahe)" "$OUT/tests.log" | head -30
    grep -E "passed, .* failed" "$OUT/tests.log"
fi
if has sanitize; then
    # racecheck is slow on 1024-thread blocks full of shared atomics: the ladder's variants one
    # process each, the cluster sizes apart (TESSERA_SMALL_ONLY shrinks both tests)
    for tool in memcheck synccheck racecheck; do
        for sel in naive,shared,opt cluster; do
            log "compute-sanitizer $tool ($sel)" | tee -a "$OUT/sanitize.log"
            TESSERA_TEST_VARIANTS=$sel TESSERA_SMALL_ONLY=1 TESSERA_REQUIRE_GPU=1 timeout ${SAN_TIMEOUT:-150} \
                compute-sanitizer --tool $tool --error-exitcode 9 --print-limit 20 \
                build/test_unit gpu_clahe_matches_the_reference gpu_clahe_cluster_sizes >>"$OUT/sanitize.log" 2>&1
            echo "$tool $sel exit $?" | tee -a "$OUT/sanitize.log"
        done
    done
    grep -E "ERROR SUMMARY|exit|passed, " "$OUT/sanitize.log"
fi
if has bench; then
    log "bench clahe" | tee "$OUT/bench.log"
    timeout ${BENCH_TIMEOUT:-240} build/bench --op ${BENCH_OPS:-clahe,equalize:rgb} --size ${BENCH_SIZES:-8k,1080p} \
        --format ${BENCH_FORMATS:-gray8,gray16,rgb8,rgb16} --sweep --runs 20 \
        --md "$OUT/bench.md" --csv "$OUT/bench.csv" >>"$OUT/bench.log" 2>&1
    echo "bench exit $?" | tee -a "$OUT/bench.log"
    grep -E "^\| (clahe|equalize)" "$OUT/bench.md" | head -80
fi
if has cv2; then
    log "OpenCV CPU CLAHE" | tee "$OUT/cv2.log"
    PY=/opt/torch/.venv/bin/python3; [ -x "$PY" ] || PY=python3
    timeout 120 "$PY" tools/bench_clahe_cv2.py 16 >>"$OUT/cv2.log" 2>&1
    echo "cv2 exit $?" >>"$OUT/cv2.log"
    nproc >>"$OUT/cv2.log"
    cat "$OUT/cv2.log"
fi
