#!/bin/sh
# tools/bench_batch.sh - `make bench-batch`: batch conversion on a GPU machine, one process tree,
# same corpus, same chain (gauss:5, equalize, rotate:90), files in the page cache, every core:
#   OpenCV (tools/bench_batch_cv2.py, a thread pool over every core), torchvision on the GPU
#   (tools/bench_batch_torch.py, batched decode_jpeg on cuda) and tessera --headless --backend gpu;
#   chains JPEG->JPEG q90 on both corpora, JPEG->PNG and PNG->PNG on the camera corpus;
#   and the nvJPEG module alone (build/nvjpeg_bench: engine decode, decoupled decode, encode, and
#   the largest difference from libjpeg-turbo's decode of the corpus).
# The corpus (tools/bench_batch_corpus.py): CORPUS/shipped (Debian's lomiri-wallpapers-16.04
# photos, mostly progressive) and CORPUS/camera (re-encoded baseline 4:2:0 q92 with EXIF), each
# listed REPEAT times (copies under a temp directory) so a run lasts long enough to time.
# Usage: sh tools/bench_batch.sh OUTDIR [CORPUS]   (CORPUS default .carry/corpus)
# Environment: BUILD (build), PYTHON (python3), REPEAT (8), BATCH (16, torchvision's batch),
# SYSTEMS ("opencv torch tessera"), ROWS ("camera shipped jpg2png png2png"), JOBS (nproc),
# BACKEND (tessera's --backend: gpu), NVJPEG_BENCH (1: also the nvJPEG module alone).
# Writes OUTDIR/bench_batch.log (everything), results.txt (RESULT lines), bench_batch.md (table),
# nvjpeg_bench.csv, and bench_batch.png (tools/chart_batch.py) where matplotlib is installed.
set -u
OUT=${1:?usage: bench_batch.sh OUTDIR [CORPUS]}
CORPUS=${2:-.carry/corpus}
BUILD=${BUILD:-build}
PYTHON=${PYTHON:-python3}
REPEAT=${REPEAT:-8}
BATCH=${BATCH:-16}
SYSTEMS=${SYSTEMS:-opencv torch tessera}
ROWS=${ROWS:-camera shipped jpg2png png2png}
J=${JOBS:-$(nproc)}
OPS=gauss:5,equalize,rotate:90
mkdir -p "$OUT"
LOG=$OUT/bench_batch.log
RES=$OUT/results.txt
: >"$RES"
WORK=$(mktemp -d /tmp/tessera-bench-batch.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT INT TERM
log() { echo "== $(date -u +%H:%M:%S) $*" | tee -a "$LOG"; }
for c in shipped camera; do
    [ -d "$CORPUS/$c" ] || { echo "bench_batch: $CORPUS/$c missing: run tools/bench_batch_corpus.py" >&2; exit 1; }
done
STARTED=$(date -u '+%Y-%m-%d %H:%M UTC')
{
    echo "bench_batch: $STARTED, $J host threads, REPEAT=$REPEAT"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1
    nproc; grep -m1 'model name' /proc/cpuinfo
    $PYTHON -c 'import cv2; print("opencv", cv2.__version__)' 2>&1
    $PYTHON -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)' 2>&1
} >"$LOG" 2>&1
cat "$LOG"

# Inputs: each corpus REPEAT times (copies, so every system reads the same files).
replicate() { # SRC DST EXT
    mkdir -p "$2"
    k=1
    while [ "$k" -le "$REPEAT" ]; do
        for f in "$1"/*; do
            b=$(basename "$f"); cp "$f" "$2/${b%.*}_$k.$3"
        done
        k=$((k + 1))
    done
}
replicate "$CORPUS/shipped" "$WORK/in/shipped" jpg
replicate "$CORPUS/camera" "$WORK/in/camera" jpg
mkdir -p "$WORK/png1"
$PYTHON - "$CORPUS/camera" "$WORK/png1" <<'PY' >>"$LOG" 2>&1
import os, sys, cv2
src, dst = sys.argv[1], sys.argv[2]
for f in sorted(os.listdir(src)):
    im = cv2.imread(os.path.join(src, f), cv2.IMREAD_COLOR)
    cv2.imwrite(os.path.join(dst, os.path.splitext(f)[0] + ".png"), im)
print("png corpus:", len(os.listdir(dst)), "files")
PY
replicate "$WORK/png1" "$WORK/in/png" png
cat "$WORK"/in/*/* >/dev/null

# tessera, timed from outside (wall clock, children's peak RSS); its own summary line is kept.
run_tessera() { # CORPUS CHAIN FMT INDIR OUTDIR
    $PYTHON - "$BUILD/tessera" "$1" "$2" "$3" "$4" "$5" "$J" "$OPS" <<'PY'
import os, resource, subprocess, sys, time
exe, corpus, chain, fmt, indir, outdir, j, ops = sys.argv[1:9]
n = len(os.listdir(indir))
mp = 0.0
try:
    from PIL import Image
    for f in os.listdir(indir):
        w, h = Image.open(os.path.join(indir, f)).size
        mp += w * h / 1e6
except Exception:
    pass
report = outdir + ".report.json"
cmd = [exe, "--headless", "-j", j, "--backend", os.environ.get("BACKEND", "gpu"), "--ops", ops, "--format", fmt,
       "--quality", "90", "--force", "--report", report, "-o", outdir, indir]
print("+", " ".join(cmd), flush=True)
# GPU memory: device-wide memory.used sampled by nvidia-smi, peak minus the level before the run.
import threading
def used():
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits",
                            "-i", os.environ.get("TESSERA_DEVICE", "0")],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=5)
        return float(r.stdout.split()[0])
    except Exception:
        return None
base = used()
peak = [base]
done = threading.Event()
def poll():
    while not done.wait(0.1):
        u = used()
        if u is not None and peak[0] is not None and u > peak[0]:
            peak[0] = u
th = threading.Thread(target=poll, daemon=True)
th.start()
t0 = time.perf_counter()
p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
wall = time.perf_counter() - t0
done.set()
th.join()
gpu = f"{peak[0] - base:.0f}" if base is not None else "?"
print("\n".join(p.stdout.splitlines()[-8:]))
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
outs = [f for f in os.listdir(outdir) if not f.endswith(".tmp")]
size = sum(os.path.getsize(os.path.join(outdir, f)) for f in outs)
paths = "?"
stages = ""
work = "-"
try:
    import json, collections
    rep = json.load(open(report))
    items = rep.get("images", rep) if isinstance(rep, dict) else rep
    c = collections.Counter(str(i.get("decode_path", i.get("decode", "?"))) for i in items)
    paths = ",".join(f"{k}:{v}" for k, v in sorted(c.items()))
    # per-image stage means, as the other systems' columns (a merged CPU stage such as
    # read+decode goes to its first column)
    sums = collections.Counter()
    for i in items:
        for k, v in i.get("stages_ms", {}).items():
            sums[k.split("+")[0]] += v
    stages = " ".join(f"{k}_ms={sums[k] / max(len(items), 1):.1f}"
                      for k in ("read", "decode", "ops", "encode", "write") if k in sums)
    # tessera's own time from the first read to the last rename: the rate without the process's
    # start-up (CUDA context, nvJPEG handles) and exit
    if rep.get("seconds"):
        work = f"{n / rep['seconds']:.2f}"
except Exception:
    pass
print(f"RESULT system=tessera corpus={corpus} chain={chain} threads={j} images={n} "
      f"seconds={wall:.3f} images_per_s={n / wall:.2f} mp_per_s={mp / wall:.1f} "
      f"work_images_per_s={work} {stages} "
      f"decode_paths={paths} host_peak_mib={rss:.0f} gpu_peak_mib={gpu} out_mib={size / 2**20:.1f} "
      f"exit={p.returncode} outputs={len(outs)}")
PY
}

run() { # SYSTEM CORPUS CHAIN FMT INDIR
    o=$WORK/out/$1-$2-$3
    rm -rf "$o"; mkdir -p "$o"
    log "$1 $2 $3"
    case $1 in
    opencv) $PYTHON tools/bench_batch_cv2.py --threads "$J" --format "$4" --quality 90 \
                --corpus "$2" --chain "$3" -o "$o" "$5" ;;
    torch) $PYTHON tools/bench_batch_torch.py --batch "$BATCH" --format "$4" --quality 90 \
               --corpus "$2" --chain "$3" -o "$o" "$5" ;;
    tessera) run_tessera "$2" "$3" "$4" "$5" "$o" ;;
    esac >"$o.log" 2>&1
    cat "$o.log" >>"$LOG"
    grep '^RESULT' "$o.log" | tail -1 | tee -a "$RES"
    grep -q '^RESULT' "$o.log" || { echo "bench_batch: $1 $2 $3 failed:"; tail -5 "$o.log"; } | tee -a "$LOG"
    rm -rf "$o" "$o.log"
}

if [ "${NVJPEG_BENCH:-1}" = 1 ] && [ -x "$BUILD/nvjpeg_bench" ]; then
    for c in camera shipped; do
        log "nvjpeg_bench $c"
        "$BUILD/nvjpeg_bench" --threads "$J" --batch "$BATCH" --repeat 3 --check --name "$c" \
            --csv "$OUT/nvjpeg_bench.csv" "$CORPUS/$c" >>"$LOG" 2>&1 || echo "nvjpeg_bench $c failed" | tee -a "$LOG"
        grep -E '^(nvjpeg_bench|decode-|encode|check:|memory:)' "$LOG" | tail -9
    done
fi
for row in $ROWS; do
    case $row in
    camera) for s in $SYSTEMS; do run "$s" camera jpg2jpg jpg "$WORK/in/camera"; done ;;
    shipped) for s in $SYSTEMS; do run "$s" shipped jpg2jpg jpg "$WORK/in/shipped"; done ;;
    jpg2png) for s in $SYSTEMS; do run "$s" camera jpg2png png "$WORK/in/camera"; done ;;
    png2png) for s in $SYSTEMS; do run "$s" png png2png png "$WORK/in/png"; done ;;
    esac
done

# The table: images/s and the ratio to OpenCV on the same corpus and chain.
$PYTHON - "$RES" "$OUT/bench_batch.md" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    if line.startswith("RESULT "):
        rows.append(dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv))
base = {(r["corpus"], r["chain"]): float(r["images_per_s"]) for r in rows
        if r["system"].startswith("opencv")}
cols = ["corpus", "chain", "system", "images/s", "x OpenCV", "images/s without start-up", "MP/s",
        "read", "decode", "ops",
        "encode", "write", "decode paths", "host MiB", "GPU MiB", "out MiB"]
out = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
for r in rows:
    b = base.get((r["corpus"], r["chain"]))
    ips = float(r["images_per_s"])
    failed = r.get("exit", "0") != "0" or r.get("outputs", r["images"]) != r["images"]
    out.append("| " + " | ".join([r["corpus"], r["chain"], r["system"],
        f"failed (exit {r.get('exit')}, {r.get('outputs')} outputs)" if failed else f"{ips:.1f}",
        f"{ips / b:.2f}" if b and not failed else "-", r.get("work_images_per_s", "-"),
        r.get("mp_per_s", "-")] +
        [r.get(k + "_ms", "-") for k in ("read", "decode", "ops", "encode", "write")] +
        [r.get("decode_paths", "-"), r.get("host_peak_mib", "-"), r.get("gpu_peak_mib", "-"),
         r.get("out_mib", "-")]) + " |")
open(sys.argv[2], "w").write("\n".join(out) + "\n\nStage columns: ms per image, summed over "
    "threads (OpenCV), synchronized (torchvision) or from --report (tessera: a CPU codec's "
    "read+decode under read, encode+write under encode). images/s: the process's wall clock for "
    "tessera, the timed loop for the Python scripts; tessera without start-up: from its first "
    "read to its last output (--report's seconds).\n")
print("\n".join(out))
PY

# The chart (tools/chart_batch.py), only where matplotlib is importable: not a CI dependency.
if $PYTHON -c 'import matplotlib' 2>/dev/null; then
    $PYTHON tools/chart_batch.py "$OUT/bench_batch.md" -o "$OUT/bench_batch.png" \
        --title "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1), $J host threads, $STARTED" ||
        echo "bench_batch: chart failed" | tee -a "$LOG"
else
    echo "bench_batch: matplotlib not installed for $PYTHON: no chart" | tee -a "$LOG"
fi
