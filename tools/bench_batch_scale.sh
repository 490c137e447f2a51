#!/bin/bash
# tools/bench_batch_scale.sh - the batch converter as a user times it, at both ends of the batch
# length and on every GPU of a host (issue 31): whole process wall clock from outside, tessera's
# own steady clock (--report's seconds), host CPU per image (the process's user + system time),
# against OpenCV with 16 threads (tools/bench_batch_cv2.py) in the same run.
#   one GPU: CUDA_VISIBLE_DEVICES=0 taskset -c 0-15 for every system, -j 16;
#   every GPU: all cores, --devices 0 against --devices all, and one --shard process per GPU.
# Each tessera row runs once per way host threads wait for the GPU (TESSERA_CUDA_SYNC: SYNCS,
# default "spin block": spin is CUDA's default, block tessera's).
# Usage: bash tools/bench_batch_scale.sh OUTDIR [CORPUS]   (CORPUS default .carry/corpus)
# Environment: TESSERA (build/tessera), PYTHON (python3), ONE ("camera:120 camera:600
# shipped:120 shipped:600"), MULTI (4800: camera images for the every-GPU rows; 0: none),
# SYNCS ("spin block"), OPENCV (1; 0: no OpenCV rows), TORCH (0; 1: torchvision's GPU rows beside
# OpenCV's), THUMB (0; N: thumbnail:256 of N camera photos, tessera against libvips' thumbnail with
# 16 threads, tools/bench_batch_vips.py: pyvips importable).
# Writes OUTDIR/scale.md (the table), OUTDIR/scale.log (every command's output), timings.txt.
set -u
OUT=${1:?usage: bench_batch_scale.sh OUTDIR [CORPUS]}
CORPUS=${2:-.carry/corpus}
TESSERA=${TESSERA:-build/tessera}
PYTHON=${PYTHON:-python3}
ONE=${ONE:-camera:120 camera:600 shipped:120 shipped:600}
MULTI=${MULTI:-4800}
SYNCS=${SYNCS:-spin block}
OPENCV=${OPENCV:-1}
TORCH=${TORCH:-0}
THUMB=${THUMB:-0}
OPS=gauss:5,equalize,rotate:90
mkdir -p "$OUT"
LOG=$OUT/scale.log
MD=$OUT/scale.md
W=$(mktemp -d /tmp/tessera-scale.XXXXXX) || exit 1
trap 'rm -rf "$W"' EXIT INT TERM
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
{
    echo "bench_batch_scale: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $NGPU GPUs"
    nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader
    grep -m1 'model name' /proc/cpuinfo
} >"$LOG" 2>&1
cat "$LOG"

# CORPUS/NAME's files copied until N (names kept apart), then read once into the page cache
make_set() { # NAME N DIR
    mkdir -p "$3"
    local k=0 f
    while [ "$k" -lt "$2" ]; do
        for f in "$CORPUS/$1"/*; do
            [ "$k" -lt "$2" ] || break
            cp "$f" "$3/$(printf %06d $k)_$(basename "$f")"
            k=$((k + 1))
        done
    done
    cat "$3"/* >/dev/null
}

# tessera ROW N PREFIX SYNC ARGS...: one run timed from outside; a table row
TIMEFORMAT='%R %U %S'
tessera_row() {
    local row=$1 n=$2 pre=$3 sync=$4
    shift 4
    rm -rf "$W/out"
    local t
    t=$( { time env TESSERA_CUDA_SYNC="$sync" $pre "$TESSERA" --headless -q --force -o "$W/out" \
        --ops "$OPS" --format jpg --quality 90 --report "$W/r.json" --timings "$@" \
        >"$W/timings.txt" 2>>"$LOG"; } 2>&1 | tail -1)
    echo "== $row sync=$sync: $t (real user sys)" >>"$LOG"
    { echo "== $row sync=$sync"; grep -v "^/" "$W/timings.txt"; } >>"$OUT/timings.txt"
    "$PYTHON" - "$W/r.json" "$n" "$row" "$sync" "$t" <<'PY' >>"$MD"
import json, sys
r = json.load(open(sys.argv[1]))
n, row, sync = int(sys.argv[2]), sys.argv[3], sys.argv[4]
real, user, sys_ = (float(x) for x in sys.argv[5].split())
ok = sum(1 for i in r["images"] if i.get("ok"))
dev = " + ".join("%.0f" % d["images_per_s"] for d in r["devices"])
print(f"| {row} | tessera ({sync}) | {ok}/{n} | {real:.2f} | {n / real:.1f} | {n / r['seconds']:.1f} ({dev}) "
      f"| {(user + sys_) * 1000 / n:.1f} | {r['host_cpu_ms'] / n:.1f} |")
PY
}

peer_row() { # ROW N DIR NAME SCRIPT ARGS...: a peer's timed loop, one GPU and 16 cores
    local row=$1 n=$2 dir=$3 name=$4 script=$5
    shift 5
    rm -rf "$W/peerout"
    local line
    line=$(CUDA_VISIBLE_DEVICES=0 taskset -c 0-15 "$PYTHON" "$script" "$@" -o "$W/peerout" "$dir" \
        2>>"$LOG" | grep '^RESULT')
    echo "$line" >>"$LOG"
    local ips
    ips=$(echo "$line" | sed -n 's/.*images_per_s=\([0-9.]*\).*/\1/p')
    echo "| $row | $name (timed loop) | $n | - | ${ips:-?} | - | - | - |" >>"$MD"
}
opencv_row() { # ROW N DIR
    peer_row "$1" "$2" "$3" opencv-16 tools/bench_batch_cv2.py --threads 16 --format jpg --quality 90
}

{
    echo "| batch | system | images | whole s | whole images/s | steady images/s (per device) | host CPU ms/image (process) | host CPU ms/image (work) |"
    echo "|---|---|--:|--:|--:|--:|--:|--:|"
} >"$MD"
for spec in $ONE; do
    c=${spec%%:*}; n=${spec##*:}
    d="$W/in_${c}_$n"
    make_set "$c" "$n" "$d"
    [ "$OPENCV" = 1 ] && opencv_row "$c $n, 1 GPU" "$n" "$d"
    [ "$TORCH" = 1 ] && peer_row "$c $n, 1 GPU" "$n" "$d" torchvision tools/bench_batch_torch.py \
        --format jpg --quality 90
    for s in $SYNCS; do
        tessera_row "$c $n, 1 GPU" "$n" "env CUDA_VISIBLE_DEVICES=0 taskset -c 0-15" "$s" -j 16 "$d"
    done
    rm -rf "$d"
done
if [ "$THUMB" -gt 0 ]; then
    d="$W/in_thumb"
    make_set camera "$THUMB" "$d"
    peer_row "thumbnail:256 of camera $THUMB, 1 GPU" "$THUMB" "$d" libvips-16 \
        tools/bench_batch_vips.py --threads 16 --size 256 --quality 90
    for s in $SYNCS; do
        OPS=thumbnail:256 tessera_row "thumbnail:256 of camera $THUMB, 1 GPU" "$THUMB" \
            "env CUDA_VISIBLE_DEVICES=0 taskset -c 0-15" "$s" -j 16 "$d"
    done
    rm -rf "$d"
fi
if [ "$MULTI" -gt 0 ] && [ "$NGPU" -ge 2 ]; then
    d="$W/in_multi"
    make_set camera "$MULTI" "$d"
    J=$(nproc)
    [ "$J" -gt 64 ] && J=64
    for s in $SYNCS; do
        tessera_row "camera $MULTI, --devices 0" "$MULTI" "" "$s" -j "$J" --devices 0 "$d"
        tessera_row "camera $MULTI, --devices all" "$MULTI" "" "$s" -j "$J" --devices all "$d"
        # one process per GPU, each with its share of the cores
        rm -rf "$W/out"
        half=$((J / 2))
        t=$( { time (
            TESSERA_CUDA_SYNC=$s CUDA_VISIBLE_DEVICES=0 taskset -c 0-$((half - 1)) "$TESSERA" --headless -q --force \
                -o "$W/out" --ops "$OPS" --format jpg -j "$half" --shard 0/2 "$d" 2>>"$LOG" &
            TESSERA_CUDA_SYNC=$s CUDA_VISIBLE_DEVICES=1 taskset -c $half-$((J - 1)) "$TESSERA" --headless -q --force \
                -o "$W/out" --ops "$OPS" --format jpg -j "$half" --shard 1/2 "$d" 2>>"$LOG" &
            wait); } 2>&1 | tail -1)
        echo "== 2 x --shard sync=$s: $t (real user sys)" >>"$LOG"
        "$PYTHON" -c 'import sys
n, got, s = int(sys.argv[1]), sys.argv[2], sys.argv[3]
r, u, y = (float(x) for x in sys.argv[4].split())
print(f"| camera {n}, 2 x --shard | tessera ({s}) | {got}/{n} | {r:.2f} | {n / r:.1f} | - | {(u + y) * 1000 / n:.1f} | - |")' \
            "$MULTI" "$(ls "$W/out" | wc -l)" "$s" "$t" >>"$MD"
    done
fi
cat "$MD"
