#!/bin/sh
# tools/viewer_demo.sh [IMAGE] - on the GPU machine: the viewer's README figures. Writes, under
# OUT (default out/viewer-demo):
#   demo.png / demo.log       tessera --demo on IMAGE: every rung's time and speedup, frame stats
#   viewer.png / viewer.log   the panel HUD with gauss:5,equalize,rotate:90 and measured speedups
#   idle.txt                  the viewer's CPU over 5 s at rest (no ops), from /proc/PID/stat
#   device.txt                nvidia-smi's GPU name and the date
# SDL's offscreen driver with the software renderer, a 1920x1080 window. Needs a CUDA build
# (make BUILD=...); BIN overrides the binary.
set -u
IMG=${1:-assets/seeding_by_Clements_Engelhardt.jpg}
BIN=${BIN:-build/tessera}
OUT=${OUT:-out/viewer-demo}
mkdir -p "$OUT"
export SDL_VIDEODRIVER=offscreen SDL_RENDER_DRIVER=software
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u; } >"$OUT/device.txt" 2>&1
"$BIN" --version | grep -q CUDA || echo "tools/viewer_demo.sh: $BIN was built without CUDA" >&2
# --frames 1 with --demo: until the last rung is measured, then the frame summary
"$BIN" -g 1920x1080 --demo --frames 1 --screenshot "$OUT/demo.png" "$IMG" >"$OUT/demo.log" 2>&1
echo "demo: exit $?"
# B measures the speedups at once; 600 frames (10 s at 60 Hz) of live mode for the figures
"$BIN" -g 1920x1080 --ops gauss:5,equalize,rotate:90 --keys B --frames 600 \
    --screenshot "$OUT/viewer.png" "$IMG" >"$OUT/viewer.log" 2>&1
echo "viewer: exit $?"
"$BIN" -g 1920x1080 -q "$IMG" &
pid=$!
sleep 3
t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
sleep 5
t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
kill $pid
wait $pid 2>/dev/null
echo "idle: $((t1 - t0)) ticks of $((5 * $(getconf CLK_TCK))) in 5 s" | tee "$OUT/idle.txt"
cat "$OUT/device.txt" "$OUT/demo.log" "$OUT/viewer.log"
