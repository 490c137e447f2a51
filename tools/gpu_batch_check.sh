#!/bin/sh
# tools/gpu_batch_check.sh - the batch converter's GPU path (nvJPEG codec, device-resident chain,
# --devices) on a GPU machine in one call.
# Usage: sh tools/gpu_batch_check.sh OUTDIR [steps...]; steps: build test nomem batch compare
# multi sanitize (default: all). Within the device's 10-minute limit per command: run "build test"
# first, then "batch compare multi sanitize" (build outputs stay between calls).
# Logs in OUTDIR (8 files at most): build.log, tests.log, batch.log (every batch's summary, decode
# path counts, memory peaks), compare.log (GPU against CPU), report_camera.json,
# report_shipped.json (the GPU JPEG->JPEG reports), sanitize.log, summary.txt.
# Environment: JOBS (nproc), OPS (gauss:5,equalize,rotate:90), CORPUS (.carry/corpus),
# GPU_BACKEND (gpu; auto for a dry run of the script on a machine without one).
# Carried inputs (ignored paths): .carry/stb, .carry/jpeg (libjpeg-turbo headers and library, used
# only where the system has no jpeglib.h), .carry/corpus/{camera,shipped}.
set -u
OUT=${1:?usage: gpu_batch_check.sh OUTDIR [steps...]}; shift
STEPS=${*:-build test nomem batch compare multi sanitize}
mkdir -p "$OUT"
J=${JOBS:-$(nproc)}
STB=${STB_INC:-$PWD/.carry/stb}
[ -f /usr/include/stb/stb_image.h ] && [ ! -d "$STB" ] && STB=/usr/include/stb
CORPUS=${CORPUS:-$PWD/.carry/corpus}
OPS=${OPS:-gauss:5,equalize,rotate:90}
GPU=${GPU_BACKEND:-gpu} # auto: a dry run of the steps on a machine without a GPU
W=$(mktemp -d /tmp/gpubatch.XXXXXX)
trap 'rm -rf "$W"' EXIT
has() { case " $STEPS " in *" $1 "*) return 0;; esac; return 1; }
log() { echo "== $(date -u +%H:%M:%S) $*"; }
PY=python3
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import numpy; import PIL' 2>/dev/null || "$p" -c 'import numpy, cv2' 2>/dev/null; then
        PY=$p; break
    fi
done
set -- GENCODE="-gencode arch=compute_90,code=sm_90" STB_INC="$STB"
if [ ! -f /usr/include/jpeglib.h ]; then
    JP=$PWD/.carry/jpeg
    set -- "$@" CFLAGS="-O2 -g -isystem $JP/include" \
        JPEG_LIBS="-L$JP/lib -ljpeg -Wl,-rpath,$JP/lib"
fi

if has build; then
    {
        log "device"
        nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader
        nvcc --version | tail -2
        log "build: make -j$J $*"
    } >"$OUT/build.log" 2>&1
    make -j"$J" "$@" all >>"$OUT/build.log" 2>&1 ||
        { echo "BUILD FAILED"; tail -30 "$OUT/build.log"; exit 1; }
    tail -2 "$OUT/build.log"
fi
T=${TESSERA:-build/tessera}
[ -x "$T" ] || { echo "no $T: run the build step first"; exit 1; }

if has test; then
    log "unit tests: gpu_jpeg" | tee "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 300 build/test_unit gpu_jpeg >>"$OUT/tests.log" 2>&1
    echo "test_unit gpu_jpeg exit $?" | tee -a "$OUT/tests.log"
    log "unit tests: pipeline_dev" | tee -a "$OUT/tests.log"
    TESSERA_REQUIRE_GPU=1 timeout 300 build/test_unit pipeline_dev >>"$OUT/tests.log" 2>&1
    echo "test_unit pipeline_dev exit $?" | tee -a "$OUT/tests.log"
    log "cli tests (GPU sections run here)" | tee -a "$OUT/tests.log"
    timeout 400 sh tests/cli.sh "$T" >>"$OUT/tests.log" 2>&1
    echo "cli.sh exit $?" | tee -a "$OUT/tests.log"
    grep -E "^(bad|FAIL)|JPEG|nvJPEG|GPU|passed, " "$OUT/tests.log" | grep -v "^ok .*CPU" | tail -40
fi

# count_paths REPORT: decode path counts, failures, per-device images of a --report file
count_paths() {
    "$PY" - "$1" <<'PY' 2>&1
import json, sys, collections
r = json.load(open(sys.argv[1]))
paths = collections.Counter(i.get("decode_path", "failed") for i in r["images"])
st = collections.defaultdict(float)
ok = [i for i in r["images"] if "stages_ms" in i]
for i in ok:
    for k, v in i["stages_ms"].items():
        st[k] += v
per = ", ".join("%s %.2f" % (k, v / max(len(ok), 1)) for k, v in st.items())
print("  decode paths: %s" % dict(paths))
print("  mean stage ms: %s" % per)
print("  devices: %s" % ", ".join("%d:%d images %.1f/s" % (d["device"], d["images"], d["images_per_s"]) for d in r["devices"]))
PY
}

# one_batch NAME DIR FORMAT BACKEND [EXTRA...]: a timed batch into $W/NAME with its report
one_batch() {
    name=$1 dir=$2 fmt=$3 be=$4; shift 4
    rm -rf "${W:?}/$name"; mkdir -p "$W/$name"
    nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$W/$name.smi" 2>/dev/null &
    smi=$!
    if [ -x /usr/bin/time ]; then
        /usr/bin/time -f "host peak RSS %M KiB" -o "$W/$name.time" \
            "$T" --headless -j "$J" --backend "$be" -o "$W/$name" --format "$fmt" --quality 90 \
            --ops "$OPS" --report "$W/$name.json" "$@" "$dir" 2>"$W/$name.err"
    else
        "$T" --headless -j "$J" --backend "$be" -o "$W/$name" --format "$fmt" --quality 90 \
            --ops "$OPS" --report "$W/$name.json" "$@" "$dir" 2>"$W/$name.err"
    fi
    rc=$?
    kill $smi 2>/dev/null; wait $smi 2>/dev/null
    echo "-- $name ($be, $fmt, $(ls "$dir" | wc -l) files${*:+, $*}): exit $rc"
    grep -v "^tessera: .*written to" "$W/$name.err" | head -5
    grep "written to" "$W/$name.err"
    cat "$W/$name.time" 2>/dev/null
    [ -s "$W/$name.smi" ] && echo "  GPU memory used peak $(sort -n "$W/$name.smi" | tail -1) MiB (whole device, sampled)"
    count_paths "$W/$name.json"
}

if has nomem; then
    # nvJPEG's encoder out of device memory (TESSERA_TEST_GPU_ENCODE_NOMEM): =once, the retry after
    # the pool's buffers go back to CUDA encodes every image on the GPU; =1, the CPU encoder takes
    # each one with a notice. Either way every image is written, the exit is 0 and the files
    # are JPEGs of the input's size (rotate:90 swaps it).
    log "encoder out of device memory" | tee "$OUT/nomem.log"
    n_in=$(ls "$CORPUS/camera" | wc -l)
    for mode in once 1; do
        rm -rf "$W/nomem"; mkdir -p "$W/nomem"
        TESSERA_TEST_GPU_ENCODE_NOMEM=$mode "$T" --headless -j "$J" --backend "$GPU" -o "$W/nomem" \
            --format jpg --ops "$OPS" "$CORPUS/camera" >"$W/nomem.out" 2>&1
        rc=$?
        n_out=$(ls "$W/nomem" | wc -l)
        n_cpu=$(grep -c "encoded on the CPU" "$W/nomem.out")
        "$PY" - "$CORPUS/camera" "$W/nomem" >"$W/nomem.py" 2>&1 <<'PY'
import os, sys
from PIL import Image
src, dst = sys.argv[1:3]
bad = 0
for f in sorted(os.listdir(src)):
    w, h = Image.open(os.path.join(src, f)).size
    o = Image.open(os.path.join(dst, os.path.splitext(f)[0] + ".jpg"))
    if o.format != "JPEG" or o.size != (h, w):
        bad += 1
print("bad outputs", bad)
PY
        want_cpu=0; [ $mode = 1 ] && want_cpu=$n_in
        verdict=ok
        [ $rc = 0 ] && [ "$n_out" = "$n_in" ] && [ "$n_cpu" = "$want_cpu" ] && grep -q "bad outputs 0" "$W/nomem.py" || verdict=FAIL
        echo "$verdict nomem=$mode: exit $rc, $n_out of $n_in written, $n_cpu encoded on the CPU (want $want_cpu), $(tail -1 "$W/nomem.py")" | tee -a "$OUT/nomem.log"
    done
fi

if has batch; then
    log "batches: --ops $OPS, -j $J" | tee "$OUT/batch.log"
    for c in camera shipped; do
        [ -d "$CORPUS/$c" ] || { echo "no $CORPUS/$c" | tee -a "$OUT/batch.log"; continue; }
        {
            # first run warms the page cache and the CUDA context's lazy loading
            "$T" --headless -q -j "$J" -o "$W/warm" --force --format jpg --ops "$OPS" "$CORPUS/$c" 2>/dev/null
            one_batch "${c}_gpu_jpg" "$CORPUS/$c" jpg "$GPU"
            one_batch "${c}_gpu_png" "$CORPUS/$c" png "$GPU"
            one_batch "${c}_cpu_jpg" "$CORPUS/$c" jpg cpu
            one_batch "${c}_cpu_png" "$CORPUS/$c" png cpu
            (export TESSERA_NVJPEG_LIB=/nonexistent; one_batch "${c}_gpu_nonvjpeg_jpg" "$CORPUS/$c" jpg "$GPU")
            # decodes alone (no ops): the largest difference between nvJPEG's and the CPU's decode
            "$T" --headless -q -j "$J" --backend "$GPU" -o "$W/${c}_dec_gpu" --format png "$CORPUS/$c" 2>"$W/${c}_dec_gpu.err"
            "$T" --headless -q -j "$J" --backend cpu -o "$W/${c}_dec_cpu" --format png "$CORPUS/$c" 2>"$W/${c}_dec_cpu.err"
        } >>"$OUT/batch.log" 2>&1
        cp "$W/${c}_gpu_jpg.json" "$OUT/report_$c.json" 2>/dev/null
    done
    grep -E "^--|written to|decode paths|peak|nvJPEG" "$OUT/batch.log"
fi

if has compare; then
    log "GPU against CPU" | tee "$OUT/compare.log"
    for c in camera shipped; do
        [ -d "$W/${c}_cpu_jpg" ] || { echo "$c: run the batch step in the same call first" | tee -a "$OUT/compare.log"; continue; }
        "$PY" - "$c" "$W" <<'PY' 2>&1 | tee -a "$OUT/compare.log"
import os, sys, math
import numpy as np
try:
    from PIL import Image
    def load(p):
        im = Image.open(p)
        return np.asarray(im if im.mode in ("L", "RGB") else im.convert("RGB"), dtype=np.float64)
except ImportError:
    import cv2
    def load(p): return cv2.imread(p, cv2.IMREAD_UNCHANGED).astype(np.float64)
c, w = sys.argv[1], sys.argv[2]
def pairs(a, b):
    for f in sorted(os.listdir(os.path.join(w, a))):
        pb = os.path.join(w, b, f)
        if os.path.exists(pb):
            yield f, load(os.path.join(w, a, f)), load(pb)
def psnr(x, y):
    mse = np.mean((x - y) ** 2)
    return 99.0 if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)
for kind in ("jpg", "png"):
    worst, n, wf = 99.0, 0, "-"
    for f, x, y in pairs("%s_gpu_%s" % (c, kind), "%s_cpu_%s" % (c, kind)):
        if x.shape != y.shape:
            print("%s %s: %s shape %s vs %s" % (c, kind, f, x.shape, y.shape)); worst = -1; continue
        p = psnr(x, y); n += 1
        if p < worst: worst, wf = p, f
    print("%s jpg->%s (%d images): lowest PSNR GPU vs CPU %.2f dB (%s) %s" % (c, kind, n, worst, wf, "OK" if n and worst >= 40 else "BELOW 40 dB" if n else "NO PAIRS"))
dmax, dmean, n = 0, 0.0, 0
for f, x, y in pairs("%s_dec_gpu" % c, "%s_dec_cpu" % c):
    if x.shape != y.shape:
        print("decode %s: shape %s vs %s" % (f, x.shape, y.shape)); continue
    d = np.abs(x - y); n += 1
    if d.max() > dmax: dmax, df = int(d.max()), f
    dmean = max(dmean, float(d.mean()))
print("%s decodes (%d images): largest pixel difference nvJPEG vs CPU decoder %d%s, largest mean %.3f" % (c, n, dmax, " (%s)" % df if dmax else "", dmean))
PY
    done
fi

if has multi; then
    NG=$(nvidia-smi -L 2>/dev/null | wc -l)
    log "multi-GPU: $NG device(s)" | tee -a "$OUT/batch.log"
    if [ "$NG" -gt 1 ] && [ -d "$CORPUS/camera" ]; then
        # the corpus four times over, so every device has work
        mkdir -p "$W/big"
        for k in 1 2 3 4; do for f in "$CORPUS/camera"/*; do ln -sf "$f" "$W/big/$k-$(basename "$f")"; done; done
        { one_batch multi_1 "$W/big" jpg gpu --devices 0
          one_batch multi_all "$W/big" jpg gpu --devices all; } >>"$OUT/batch.log" 2>&1
        grep -A8 -E "^-- multi" "$OUT/batch.log" | grep -E "^--|written|devices:"
    else
        echo "one GPU: --devices all equals device 0 (scaling not measurable here)" | tee -a "$OUT/batch.log"
    fi
fi

if has sanitize; then
    CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
    # small files keep the sanitizers' run short: baseline colour and gray (mkimage writes
    # baseline JPEGs), odd sizes, a truncated one that nvJPEG refuses
    mkdir -p "$W/san_in"
    build/mkimage 321 243 3 8 1 "$W/san_in/a.jpg" && build/mkimage 97 33 1 8 2 "$W/san_in/b.jpg" &&
        build/mkimage 1 1 3 8 3 "$W/san_in/c.jpg" && build/mkimage 640 480 3 8 4 "$W/san_in/d.jpg" ||
        echo "mkimage failed"
    head -c 600 "$W/san_in/d.jpg" >"$W/san_in/e_trunc.jpg"
    : >"$OUT/sanitize.log"
    for tool in memcheck racecheck; do
        log "compute-sanitizer $tool: a 5-file batch, JPEG->JPEG and ->PNG" | tee -a "$OUT/sanitize.log"
        for fmt in jpg png; do
            rm -rf "$W/san_out"; mkdir -p "$W/san_out"
            timeout 120 "$CS" --tool "$tool" --error-exitcode 9 "$T" --headless -q -j 2 \
                -o "$W/san_out" --format $fmt --ops "$OPS" "$W/san_in" >>"$OUT/sanitize.log" 2>&1
            echo "$tool $fmt exit $? (1: the truncated file's failure, expected; 9: sanitizer errors)" | tee -a "$OUT/sanitize.log"
        done
    done
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize.log" | sort | uniq -c
fi

{
    date -u
    grep -E "exit|passed, " "$OUT/tests.log" 2>/dev/null
    grep -E "^--|written to|decode paths|peak" "$OUT/batch.log" 2>/dev/null
    cat "$OUT/compare.log" 2>/dev/null
    grep -E "exit" "$OUT/sanitize.log" 2>/dev/null
} >"$OUT/summary.txt"
echo "summary in $OUT/summary.txt"
