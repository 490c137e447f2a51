#!/bin/sh
# tools/gpu_check.sh - everything a GPU machine must confirm, in one call (the device is lent by
# the minute): build, the GPU tests (also with the pre-sm_90 fallback forced), the CLI and the
# unit suite on the GPU, compute-sanitizer at the odd sizes, the benchmark, bank conflicts (ncu).
# Usage: sh tools/gpu_check.sh OUTDIR [steps...]; steps: build test fallback cli sanitize bench
# bench-full profile viewer (default: build test fallback cli bench). Logs go to OUTDIR.
set -u
OUT=${1:?outdir}; shift
STEPS=${*:-build test fallback cli bench}
mkdir -p "$OUT"
STB=${STB_INC:-$PWD/.carry/stb}
J=$(nproc)
log() { echo "== $(date -u +%H:%M:%S) $*"; }
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
{
log "device"; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv
nvcc --version | tail -2
} >"$OUT/tests.log" 2>&1
if has build; then
    log "build" | tee -a "$OUT/build.log"
    make -j"$J" STB_INC="$STB" all >>"$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    make -j"$J" STB_INC="$STB" build/bench >>"$OUT/build.log" 2>&1 || echo "bench build failed (see build.log)"
    make STB_INC="$STB" bench-info 2>&1 | tee -a "$OUT/build.log"
fi
if has test; then
    log "GPU tests" | tee -a "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 240 build/test_unit >>"$OUT/tests.log" 2>&1
    echo "test_unit exit $?" >>"$OUT/tests.log"
    grep -E "^(FAIL|# GPU)" "$OUT/tests.log" | head -40; tail -1 "$OUT/tests.log"
fi
if has fallback; then
    log "forced pre-sm_90 fallback (TESSERA_MAX_CC=80)" | tee -a "$OUT/tests.log"
    TESSERA_MAX_CC=80 TESSERA_REQUIRE_GPU=1 timeout 120 build/test_unit gpu_hist gpu_equalize hist_ >>"$OUT/tests.log" 2>&1
    echo "fallback exit $?" >>"$OUT/tests.log"
    tail -2 "$OUT/tests.log"
fi
if has viewer; then
    # The viewer built where SDL2 exists (carried with its libraries), on the GPU backend.
    log "viewer (offscreen, GPU backend)" | tee -a "$OUT/tests.log"
    export LD_LIBRARY_PATH=$PWD/.carry/lib SDL_VIDEODRIVER=offscreen SDL_RENDER_DRIVER=software
    V=.carry/tessera-sdl
    TESSERA_GEOMETRY=1920x1080 timeout 120 $V --backend gpu --ops gauss:5,equalize,rotate:90 \
        --frames 600 --screenshot "$OUT/viewer_gpu_4k.png" .carry/seeding_3840x2160.jpg >>"$OUT/tests.log" 2>&1
    echo "viewer exit $?" >>"$OUT/tests.log"
    TESSERA_GEOMETRY=1600x900 timeout 60 $V --backend gpu --ops gauss:5,equalize --keys B --frames 120 \
        --screenshot "$OUT/viewer_gpu_hud.png" assets/astronaut.png >>"$OUT/tests.log" 2>&1
    echo "viewer exit $?" >>"$OUT/tests.log"
    unset LD_LIBRARY_PATH SDL_VIDEODRIVER SDL_RENDER_DRIVER
    tail -6 "$OUT/tests.log"
fi
if has cli; then
    log "CLI suite and GPU demo" | tee -a "$OUT/tests.log"
    timeout 120 sh tests/cli.sh build/tessera >>"$OUT/tests.log" 2>&1
    grep -E "^FAIL" "$OUT/tests.log" | head; tail -1 "$OUT/tests.log"
    mkdir -p /tmp/demo
    build/tessera --headless --force --timings -o /tmp/demo --ops "gauss:5,equalize,rotate:90" assets 2>&1 | tee -a "$OUT/tests.log" | tail -4
fi
if has bench; then
    log "bench --quick" | tee -a "$OUT/tests.log"
    timeout 240 make STB_INC="$STB" RESULTS="$OUT" bench-quick >>"$OUT/tests.log" 2>&1
    echo "bench exit $?" >>"$OUT/tests.log"
    sed -n "/== .*bench/,\$p" "$OUT/tests.log" | grep -v "^ok" | tail -60
fi
if has sanitize; then
    for tool in memcheck racecheck synccheck; do
        log "compute-sanitizer $tool" | tee -a "$OUT/tests.log"
        TESSERA_SMALL_ONLY=1 TESSERA_REQUIRE_GPU=1 timeout 500 compute-sanitizer --tool $tool \
            --error-exitcode 9 build/test_unit ${SANITIZE_FILTER:-gpu_} >>"$OUT/tests.log" 2>&1
        echo "$tool exit $?" | tee -a "$OUT/tests.log"
        grep -E "ERROR SUMMARY|passed, " "$OUT/tests.log" | tail -2
    done
fi
if has profile; then
    for v in shared padded opt; do
        log "ncu transpose $v" | tee -a "$OUT/tests.log"
        timeout 200 make STB_INC="$STB" profile OP=transpose VARIANT=$v FORMAT=rgba8 >>"$OUT/tests.log" 2>&1
    done
    grep -E "bank_conflicts|Kernel|dram__throughput" "$OUT/tests.log" | head -40
fi
if has bench-full; then
    log "bench (full)" | tee -a "$OUT/tests.log"
    timeout 590 make STB_INC="$STB" RESULTS="$OUT" bench >>"$OUT/tests.log" 2>&1
    echo "bench exit $?" >>"$OUT/tests.log"
    sed -n "/== .*bench/,\$p" "$OUT/tests.log" | grep -v "^ok" | tail -60
fi
log "done"
