#!/bin/sh
# tools/nvjpeg_check.sh - the nvJPEG module (app/gpu_jpeg*.c) on a GPU machine in one call.
# Usage: sh tools/nvjpeg_check.sh OUTDIR [steps...]; steps: build test sanitize bench batch
# (default: all five; with the device's 10-minute limit per command, run "build test bench", then
# "sanitize", then "batch": build outputs stay between calls). Logs in OUTDIR: build.log, tests.log, sanitize.log, bench.log and, for
# `batch`, bench_batch.log, results.txt, bench_batch.md, nvjpeg_bench.csv (8 files at most).
# Carried inputs (ignored paths): .carry/stb (stb headers), .carry/jpeg (libjpeg-turbo headers and
# libjpeg.so.62, used only where the system has no jpeglib.h), .carry/corpus (the two corpora of
# tools/bench_batch_corpus.py). nvJPEG comes from the machine's CUDA toolkit.
set -u
OUT=${1:?usage: nvjpeg_check.sh OUTDIR [steps...]}; shift
STEPS=${*:-build test sanitize bench batch}
mkdir -p "$OUT"
J=$(nproc)
STB=${STB_INC:-$PWD/.carry/stb}
[ -f /usr/include/stb/stb_image.h ] && [ ! -d "$STB" ] && STB=/usr/include/stb
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
set -- STB_INC="$STB"
if [ ! -f /usr/include/jpeglib.h ]; then
    JP=$PWD/.carry/jpeg
    set -- "$@" CFLAGS="-O2 -g -isystem $JP/include" \
        JPEG_LIBS="-L$JP/lib -ljpeg -Wl,-rpath,$JP/lib"
fi
{
    log "device"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    nvcc --version | tail -2
    ls -l /usr/local/cuda/include/nvjpeg.h /usr/local/cuda/lib64/libnvjpeg.so* 2>&1
} >"$OUT/tests.log" 2>&1
if has build; then
    log "build" | tee "$OUT/build.log"
    make -j"$J" "$@" all build/nvjpeg_bench >>"$OUT/build.log" 2>&1 ||
        { echo "BUILD FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    tail -3 "$OUT/build.log"
fi
if has test; then
    log "gpu_jpeg tests" | tee -a "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 300 build/test_unit gpu_jpeg >>"$OUT/tests.log" 2>&1
    echo "test_unit gpu_jpeg exit $?" >>"$OUT/tests.log"
    log "all unit tests" >>"$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 300 build/test_unit >"$OUT/unit_all.tmp" 2>&1
    echo "test_unit exit $?" >>"$OUT/unit_all.tmp"
    grep -E "^(FAIL|fail)|passed, " "$OUT/unit_all.tmp" >>"$OUT/tests.log"; rm -f "$OUT/unit_all.tmp"
    grep -E "^(FAIL|fail|# nvJPEG|# encode|# .* -> CPU)|exit|passed, " "$OUT/tests.log"
fi
if has sanitize; then
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    for tool in memcheck racecheck; do
        log "compute-sanitizer $tool" | tee -a "$OUT/sanitize.log"
        TESSERA_REQUIRE_GPU=1 TESSERA_SMALL_ONLY=1 timeout 240 "$CS" --tool "$tool" --error-exitcode 9 \
            build/test_unit gpu_jpeg >>"$OUT/sanitize.log" 2>&1
        echo "$tool exit $?" | tee -a "$OUT/sanitize.log"
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed, " "$OUT/sanitize.log"
fi
if has bench; then
    log "nvjpeg_bench" | tee "$OUT/bench.log"
    for c in camera shipped; do
        build/nvjpeg_bench --threads "$J" --batch 16 --repeat 5 --check --name "$c" \
            ".carry/corpus/$c" >>"$OUT/bench.log" 2>&1
        echo "nvjpeg_bench $c exit $?" >>"$OUT/bench.log"
    done
    grep -vE '^  ' "$OUT/bench.log"
fi
if has batch; then
    log "bench-batch" | tee -a "$OUT/bench.log"
    BUILD=build sh tools/bench_batch.sh "$OUT" .carry/corpus >/dev/null 2>&1
    echo "bench_batch exit $?"
    cat "$OUT/bench_batch.md" 2>/dev/null
fi
