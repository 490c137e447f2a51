#!/bin/sh
# tools/bench_engines.sh - what a warm process saves, and the engines against one process, over
# the same files (whole commands timed from outside, outputs in a temp folder).
#   sh tools/bench_engines.sh [build/tessera] [FILES] [OPS]        (defaults: 240 files, below)
# Rows: one process over the folder; the per-file cost of a fresh process per file, per batch of
# 16 (xargs -n 16), one warm `--files-from - --jsonl` process fed everything, and fed one path
# at a time waiting for each record (a worker's round trip); then, where they are installed, a
# 4-task Slurm job array (tools/slurm_check.sh) and 2 Ray actors (tools/ray_convert.py).
# TESSERA_BENCH_FRESH=K runs the fresh-process-per-file row over the first K files only,
# TESSERA_BENCH_BATCHED=M the xargs row over the first M,
# TESSERA_BENCH_ENGINES=0 leaves Slurm and Ray out. TESSERA_BENCH_GPUS=2 runs the rows above on
# GPU 0 alone and adds: one process with --devices all, and 2 warm processes
# (CUDA_VISIBLE_DEVICES=0 and 1) each fed half of the list, as two GPU actors would be.
# Prints a Markdown table; TESSERA_BENCH_OUT=FILE also writes it there.
TESSERA=$(cd "$(dirname "${1:-build/tessera}")" && pwd)/$(basename "${1:-build/tessera}")
MKIMAGE=$(dirname "$TESSERA")/mkimage
N=${2:-240}
OPS=${3:-gauss:3,equalize,rotate:90}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d /tmp/tessera-bench-engines.XXXXXX)
trap 'rm -rf "$T"' EXIT
PY=$HERE/../.deps/venv/bin/python; [ -x "$PY" ] || PY=python3
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
out=$T/table.md

# the corpus: N JPEGs of 800x600 (noise: every file costs the same to decode), in 4 folders,
# made CPUS at a time
mkdir -p "$T/in/d0" "$T/in/d1" "$T/in/d2" "$T/in/d3"
CPUS=$(nproc)
seq 0 $((N - 1)) | xargs -P "$CPUS" -I{} sh -c '"$1" 800 600 3 8 $((1000 + $2)) "$3/d$(($2 % 4))/p$2.jpg" >/dev/null' sh "$MKIMAGE" {} "$T/in" ||
    { echo "mkimage failed" >&2; exit 1; }
(cd "$T/in" && find . -type f | LC_ALL=C sort | sed 's|^\./||') >"$T/list"
# the fresh-process rows take the first FRESH files (on a GPU host each start costs ~1 s)
FRESH=${TESSERA_BENCH_FRESH:-$N}
head -n "$FRESH" "$T/list" >"$T/list_fresh"
BATCHED=${TESSERA_BENCH_BATCHED:-$N}
head -n "$BATCHED" "$T/list" >"$T/list_batched"
# with 2 GPUs the one-GPU rows run on GPU 0 alone; the GPU rows at the end use both
BASE=""
[ "${TESSERA_BENCH_GPUS:-0}" -ge 2 ] && BASE="CUDA_VISIBLE_DEVICES=0"
LOAD0=$(cut -d' ' -f1 /proc/loadavg)
BACKEND=${TESSERA_BENCH_BACKEND:-auto}
{
echo "| run | files | wall s | files/s | ms per file | over the warm process, ms per file |"
echo "|---|--:|--:|--:|--:|--:|"
} >"$out"
# row TEXT FILES WALL: the warm process's ms per file ($warm_ms) is the reference
row() {
    awk -v t="$1" -v n="$2" -v w="$3" -v ref="${warm_ms:-}" 'BEGIN {
        ms = w * 1000 / n
        printf "| %s | %d | %.2f | %.1f | %.1f | %s |\n", t, n, w, n / w, ms,
               ref == "" ? "-" : sprintf("%+.1f", ms - ref) }' >>"$out"
}
run() { rm -rf "$T/o"; mkdir -p "$T/o"; }
# warm LIST [env...]: one `--files-from` process over LIST, its wall time in $wall
warm() {
    list=$1; shift
    run; t0=$(now)
    (cd "$T/in" && env $BASE "$@" "$TESSERA" --headless -q --backend "$BACKEND" --files-from - --jsonl -o "$T/o" \
        --ops "$OPS" <"$list" >"$T/rec.jsonl") || echo "warm process: some failed" >&2
    t1=$(now); wall=$(secs "$t0" "$t1")
    n_ok=$(grep -c '"status": "ok"' "$T/rec.jsonl")
    [ "$n_ok" = "$(wc -l <"$list")" ] || echo "warm process: $n_ok of $(wc -l <"$list") ok" >&2
}

warm "$T/list"
warm_wall=$wall
warm_ms=$(awk -v w="$wall" -v n="$N" 'BEGIN { printf "%.3f", w * 1000 / n }')

run; t0=$(now)
env $BASE "$TESSERA" --headless -q -r --backend "$BACKEND" -o "$T/o" --ops "$OPS" "$T/in" || echo "one process failed" >&2
t1=$(now); row "one process over the folder" "$N" "$(secs "$t0" "$t1")"
row "one warm process, \`--files-from - --jsonl\`, fed the whole list" "$N" "$warm_wall"

run; t0=$(now)
(cd "$T/in" && env $BASE "$PY" - "$TESSERA" "$T/o" "$OPS" "$BACKEND" "$T/list" <<'PY') || echo "round trips failed" >&2
import json, subprocess, sys
tessera, out, ops, backend, names = sys.argv[1:6]
p = subprocess.Popen([tessera, "--headless", "-q", "--backend", backend, "--files-from", "-",
                      "--jsonl", "-o", out, "--ops", ops], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE)
for line in open(names):
    p.stdin.write(line.encode()); p.stdin.flush()
    rec = json.loads(p.stdout.readline())
    assert rec["status"] == "ok", rec
p.stdin.close(); p.wait()
PY
t1=$(now); row "one warm process, one path at a time (a line in, its record out)" "$N" "$(secs "$t0" "$t1")"

run; t0=$(now)
(cd "$T/in" && env $BASE xargs -n 16 "$TESSERA" --headless -q --backend "$BACKEND" -o "$T/o" --ops "$OPS" <"$T/list_batched") || echo "per batch failed" >&2
t1=$(now); row "a fresh process per 16 files (xargs -n 16)" "$BATCHED" "$(secs "$t0" "$t1")"

run; t0=$(now)
(cd "$T/in" && while read -r f; do env $BASE "$TESSERA" --headless -q --backend "$BACKEND" -o "$T/o" --ops "$OPS" "$f" || exit 1; done <"$T/list_fresh") ||
    echo "per file failed" >&2
t1=$(now); row "a fresh process per file" "$FRESH" "$(secs "$t0" "$t1")"

if [ "${TESSERA_BENCH_GPUS:-0}" -ge 2 ]; then
    run; t0=$(now)
    BASE=""
    run; t0=$(now)
    "$TESSERA" --headless -q -r --devices all -o "$T/o" --ops "$OPS" "$T/in"
    t1=$(now); row "one process, \`--devices all\` (2 GPUs)" "$N" "$(secs "$t0" "$t1")"
    awk 'NR % 2 == 1' "$T/list" >"$T/list0"; awk 'NR % 2 == 0' "$T/list" >"$T/list1"
    run; t0=$(now)
    for g in 0 1; do
        (cd "$T/in" && CUDA_VISIBLE_DEVICES=$g "$TESSERA" --headless -q -j $((CPUS / 2)) --files-from - --jsonl \
            -o "$T/o" --ops "$OPS" <"$T/list$g" >"$T/rec$g.jsonl") &
    done
    wait
    t1=$(now); row "2 warm processes, one per GPU (-j $((CPUS / 2)) each), half the list each" "$N" "$(secs "$t0" "$t1")"
fi

if [ "${TESSERA_BENCH_ENGINES:-1}" = 1 ] && command -v sbatch >/dev/null 2>&1; then
    TESSERA_SLURM_INPUT="$T/in" TESSERA_SLURM_OPS="$OPS" sh "$HERE/slurm_check.sh" "$TESSERA" >"$T/slurm.log" 2>&1 ||
        { echo "the Slurm check failed:" >&2; grep -v '^ok' "$T/slurm.log" >&2; }
    line=$(grep '^# ' "$T/slurm.log" | tail -1)
    s_all=$(echo "$line" | sed -n 's/.* \([0-9.]*\) s from sbatch.*/\1/p')
    s_run=$(echo "$line" | sed -n 's/.* \([0-9.]*\) s from the first task.*/\1/p')
    [ -n "$s_all" ] && row "Slurm array of 4 tasks (1 CPU, -j 1 each), sbatch to the last task's end" "$N" "$s_all"
    [ -n "$s_run" ] && row "the same, the first task's start to the last task's end" "$N" "$s_run"
fi
if [ "${TESSERA_BENCH_ENGINES:-1}" = 1 ] && "$PY" -c 'import ray.data' 2>/dev/null; then
    run
    line=$("$PY" "$HERE/ray_convert.py" --tessera "$TESSERA" -o "$T/o" --ops "$OPS" --actors 2 \
        --backend cpu "$T/in" 2>&1 | grep 'ray_convert:.*files' | tail -1)
    r_all=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) s (.*/\1/p')
    r_map=$(echo "$line" | sed -n 's/.*conversion \([0-9.]*\) s.*/\1/p')
    [ -n "$r_all" ] && row "Ray Data, 2 actors (CPU backend, 1 CPU each), Ray's start included" "$N" "$r_all"
    [ -n "$r_map" ] && row "the same, the dataset's execution alone" "$N" "$r_map"
fi
[ "${TESSERA_BENCH_GPUS:-0}" -ge 2 ] && echo "# $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1) x $(nvidia-smi -L | wc -l); the rows before '--devices all' ran with CUDA_VISIBLE_DEVICES=0"
echo "# $N JPEGs 800x600, --ops $OPS, backend $BACKEND, $CPUS CPUs, $(date -u '+%Y-%m-%d %H:%M UTC'), load average $LOAD0 before, $(cut -d' ' -f1 /proc/loadavg) after"
cat "$out"
[ -n "${TESSERA_BENCH_OUT:-}" ] && cp "$out" "$TESSERA_BENCH_OUT"
[ -f "$T/slurm.log" ] && grep -q "0 failed" "$T/slurm.log" && echo "(the Slurm rows' check passed: the union of the 4 shards equals the one-process run)"
exit 0
