#!/bin/sh
# tools/gpu_check.sh - everything a GPU machine must confirm, in one call (the device is lent by
# the minute): build, the GPU tests (also with the pre-sm_90 fallback forced), the CLI and the
# unit suite on the GPU, compute-sanitizer at the odd sizes, the benchmark, bank conflicts (ncu).
# Usage: sh tools/gpu_check.sh OUTDIR [steps...]; steps: build test test-conv fallback cli sanitize
# bench bench-full conv-sweep conv-k profile profile-conv sass-conv ptx-jit viewer racecheck
# sanitize-conv (default: build test fallback cli bench). Logs go to OUTDIR (the device tool brings back 8 files: the steps keep to a few).
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
    make -j"$J" STB_INC="$STB" NVFLAGS="-O3 -lineinfo" all >>"$OUT/build.log" 2>&1 || { echo "BUILD FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    make -j"$J" STB_INC="$STB" NVFLAGS="-O3 -lineinfo" build/bench >>"$OUT/build.log" 2>&1 || echo "bench build failed (see build.log)"
    make STB_INC="$STB" bench-info 2>&1 | tee -a "$OUT/build.log"
fi
if has test; then
    log "GPU tests" | tee -a "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 240 build/test_unit >>"$OUT/tests.log" 2>&1
    echo "test_unit exit $?" >>"$OUT/tests.log"
    grep -E "^(FAIL|# GPU)" "$OUT/tests.log" | head -40; tail -1 "$OUT/tests.log"
fi
if has test-conv; then
    log "GPU conv tests" | tee -a "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 240 build/test_unit gpu_conv conv_ >>"$OUT/tests.log" 2>&1
    echo "test_unit conv exit $?" >>"$OUT/tests.log"
    grep -E "^(FAIL|# conv)" "$OUT/tests.log" | head -40; tail -1 "$OUT/tests.log"
fi
if has conv-sweep; then
    # The 3x3..7x7 row kernels at 8K RGB8 with their strip heights (job->param), and the baselines.
    log "conv sweep" | tee -a "$OUT/tests.log"
    timeout 200 build/bench --op gauss:3,sharpen,gauss:5,gauss:7 --size 8k --format rgb8,rgba8,gray8 \
        --variant ${SWEEP_VARIANTS:-roll,roll/8,roll/32,pipe,pipe/8,pipe/16,pipe/64,mma,mma/16,mma/64,npp,cudnn} \
        --runs 20 --md "$OUT/conv-sweep.md" >>"$OUT/tests.log" 2>&1
    echo "conv sweep exit $?" | tee -a "$OUT/tests.log"
    grep -E "^\| (gauss|sharpen)" "$OUT/conv-sweep.md" | awk -F'|' '{print $2,$3,$5,$6,$10}' | tail -60
fi
if has conv-k; then
    # K = 1 and K = 31 at 8K RGB8 against cuDNN and NPP (no naive: at K = 31 it alone takes minutes).
    log "conv K=1, K=31" | tee -a "$OUT/tests.log"
    timeout ${CONVK_TIMEOUT:-400} build/bench --op ${CONVK_OPS:-box:1,gauss:31,box:31} --size 8k \
        --format rgb8 --variant ${CONVK_VARIANTS:-roll,pipe,tiled,sep,cudnn,npp} --runs ${CONVK_RUNS:-10} \
        --md "$OUT/conv-k.md" --csv "$OUT/conv-k.csv" >>"$OUT/tests.log" 2>&1
    echo "conv K exit $?" | tee -a "$OUT/tests.log"
    grep -E "^\| (gauss|box)" "$OUT/conv-k.md" | awk -F'|' '{print $2,$3,$5,$6,$10,$13}' | tail -30
fi
if has sass-conv; then
    # The SASS of the 8-bit RGB 3x3 conv kernels, and an opcode count per kernel (SASS_KERNELS: a
    # grep -E pattern on the mangled names).
    log "SASS of conv kernels" | tee -a "$OUT/tests.log"
    cuobjdump -sass build/bench 2>/dev/null | awk -v pat="${SASS_KERNELS:-conv_mma_kernelILi3ELi3ELi1ELi0ELi4ELb1E}" \
        '/Function :/ {on = ($0 ~ pat)} on' >"$OUT/sass.txt"
    grep -E "^ +/\*[0-9a-f]+\*/" "$OUT/sass.txt" | awk '{print $2 == "@P0" || $2 ~ /^@/ ? $3 : $2}' |
        sed 's/\..*//; s/;//' | sort | uniq -c | sort -rn | head -30 | tee -a "$OUT/tests.log"
fi
if has profile-conv; then
    # ncu on conv variants at 8K RGB8 gauss:3 (PROFILE_CONV: variants): speed of light, warp
    # states, instruction mix; the third launch (the first is the check at 1080p, the second the
    # warm-up).
    for v in ${PROFILE_CONV:-mmapipe}; do
        log "ncu conv $v" | tee -a "$OUT/ncu.log"
        timeout 120 ncu --section SpeedOfLight --section WarpStateStats --section InstructionStats \
            --section Occupancy --section LaunchStats --print-details all -k regex:${PROFILE_KERNEL:-conv_} --launch-skip 2 -c 1 \
            build/bench --op ${PROFILE_OP:-gauss:3} --size 8k --format rgb8 --variant $v --runs 1 \
            >>"$OUT/ncu.log" 2>&1
        echo "ncu exit $?" | tee -a "$OUT/ncu.log"
    done
    grep -E "Duration|DRAM Throughput|Issue Slots|Issued Ipc|Executed Instructions |Registers Per|Achieved Occupancy|Stall|Warp Cycles Per Issued" "$OUT/ncu.log" | head -60
fi
if has ptx-jit; then
    # The compute_80 PTX compiled by the driver, as an Ampere or Ada GPU gets it: the sm_80 paths
    # of the conv variants (mma.sync, cp.async rings) against the CPU reference. Conv only: forced
    # JIT also drops the sm_90 code of the cluster histogram, which an sm_90 GPU never runs as PTX.
    log "conv tests on the JIT-compiled compute_80 PTX" | tee -a "$OUT/tests.log"
    CUDA_FORCE_PTX_JIT=1 TESSERA_REQUIRE_GPU=1 TESSERA_TEST_VARIANTS=${JIT_VARIANTS:-roll,pipe,mma,mmapipe,tiled} \
        timeout 400 build/test_unit gpu_conv_small gpu_conv_1080p gpu_conv_strip_paths >"$OUT/jit.log" 2>&1
    echo "ptx-jit exit $?" | tee -a "$OUT/tests.log"
    grep -E "^(FAIL|# conv)|passed, " "$OUT/jit.log" | tee -a "$OUT/tests.log"
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
    # Every variant at the small odd sizes (TESSERA_SMALL_ONLY): memcheck over all GPU tests,
    # racecheck and synccheck over the kernels that share memory between threads (conv's racecheck:
    # the sanitize-conv step, one process per variant; in one process it runs past any limit).
    for spec in "memcheck:${MEMCHECK_FILTER:-gpu_}" "racecheck:${RACECHECK_FILTER:-gpu_hist gpu_equalize_small gpu_geom_every}" \
                "synccheck:${SYNCCHECK_FILTER:-gpu_hist_random gpu_hist_cluster gpu_geom_every gpu_conv_small}"; do
        tool=${spec%%:*}; filter=${spec#*:}
        log "compute-sanitizer $tool ($filter)" | tee -a "$OUT/tests.log"
        TESSERA_SMALL_ONLY=1 TESSERA_REQUIRE_GPU=1 timeout ${SANITIZE_TIMEOUT:-170} compute-sanitizer --tool $tool \
            --error-exitcode 9 build/test_unit $filter >"$OUT/$tool.log" 2>&1
        echo "$tool exit $?" | tee -a "$OUT/tests.log"
        grep -E "ERROR SUMMARY|RACECHECK SUMMARY|passed, |^FAIL" "$OUT/$tool.log" | tail -4 | tee -a "$OUT/tests.log"
        grep -c "^ok" "$OUT/$tool.log" | sed "s/^/$tool: tests ok: /" | tee -a "$OUT/tests.log"
    done
fi
if has racecheck; then
    # racecheck is slow: one run per kernel family, each with its own limit, smallest first (conv:
    # the sanitize-conv step).
    for spec in "80:gpu_hist_cluster_sizes" "100:gpu_hist_random gpu_hist_skewed gpu_hist_opt_slices gpu_equalize_small" \
                "100:gpu_geom_every"; do
        lim=${spec%%:*}; filter=${spec#*:}
        log "racecheck ($filter)" | tee -a "$OUT/tests.log"
        TESSERA_SMALL_ONLY=1 TESSERA_REQUIRE_GPU=1 timeout $lim compute-sanitizer --tool racecheck \
            --error-exitcode 9 build/test_unit $filter >>"$OUT/racecheck.log" 2>&1
        echo "racecheck exit $? ($filter)" | tee -a "$OUT/tests.log"
        grep -E "RACECHECK SUMMARY|ERROR SUMMARY|passed, |^FAIL" "$OUT/racecheck.log" | tail -2 | tee -a "$OUT/tests.log"
    done
fi
if has sanitize-conv; then
    # One compute-sanitizer process per conv variant and tool, side by side (TESSERA_TEST_VARIANTS),
    # each on the quick set: 1x1, 33x17, 4097x3, one filter per K and accumulation path, every
    # format. CONV_VARIANTS (default: every GPU conv variant), CONV_TOOLS (default: racecheck).
    log "compute-sanitizer on conv, one process per variant and tool" | tee -a "$OUT/tests.log"
    vs=${CONV_VARIANTS:-$(build/tessera --list 2>/dev/null | sed -n '/^conv:/,/^$/p' | awk '$2 ~ /^sm_/ {print $1}')}
    for tool in ${CONV_TOOLS:-racecheck}; do
        for v in $vs; do
            TESSERA_TEST_VARIANTS=$v TESSERA_SANITIZE_QUICK=1 TESSERA_SMALL_ONLY=1 TESSERA_REQUIRE_GPU=1 \
                timeout ${RACE_CONV_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 9 \
                build/test_unit gpu_conv_small >/tmp/cs-conv-$tool-$v.log 2>&1 &
        done
    done
    wait
    for tool in ${CONV_TOOLS:-racecheck}; do
        for v in $vs; do
            f=/tmp/cs-conv-$tool-$v.log
            echo "== $tool conv $v" >>"$OUT/sanitize-conv.log"
            cat $f >>"$OUT/sanitize-conv.log"
            printf '%s %s: %s / %s / %s\n' "$tool" "$v" "$(grep -E '(RACECHECK|ERROR) SUMMARY' $f | tail -1)" \
                "$(grep -E '^# conv' $f | tail -1)" "$(tail -1 $f)" | tee -a "$OUT/tests.log"
        done
    done
fi
if has profile; then
    for v in naive shared padded opt; do
        log "ncu transpose $v" | tee -a "$OUT/ncu.log"
        timeout 100 make STB_INC="$STB" profile OP=transpose VARIANT=$v FORMAT=rgba8 >>"$OUT/ncu.log" 2>&1
    done
    grep -E "==PROF==|bank_conflicts|geom_|dram__throughput|warps_active|Error|ERR" "$OUT/ncu.log" | head -60
fi
if has bench-full; then
    log "make bench (full)" | tee -a "$OUT/tests.log"
    t0=$(date +%s)
    timeout 590 make STB_INC="$STB" RESULTS="$OUT" bench >"$OUT/bench.log" 2>&1
    echo "bench exit $? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/tests.log"
    sed -n "/^## Headline/,/^## Notes/p" "$OUT"/*.md | head -40
fi
log "done"
