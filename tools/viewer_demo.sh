#!/bin/sh
# tools/viewer_demo.sh [IMAGE] - on the GPU machine, one call: the viewer's README figures.
# Each figure is one line on stdout starting with its label (DEVICE, DEMO, DEMO_FPS, LIVE_FPS,
# IDLE_CPU, FIRST_PAINT); the same lines go to $OUT/figures.txt. Files under OUT (default
# out/viewer-demo), seven at most:
#   viewer-gpu.png   tessera --demo on IMAGE, after the last rung: the README's screenshot
#                    (docs/viewer-gpu.png)
#   demo.log         its stderr: every rung's time and speedup, the frame summary
#   demo-talk.log    --demo as in a talk (each rung 1.5 s on screen): its frame summary
#   live.png         the panel HUD with gauss:5,equalize,rotate:90 in live mode, speedups measured
#   live.log         its frame summary (600 frames, 10 s at 60 Hz)
#   firstpaint.log   every first-paint run's line
#   figures.txt      the labelled lines
# SDL's offscreen driver with the software renderer, a 1920x1080 window. Needs a CUDA build
# (BIN, default build/tessera); every run has a timeout, and a failed one says so on its line.
# The 24 MP JPEG of the first-paint figures is IMAGE resized to 6000x4000 by tessera itself (no
# Python needed), written to a temp dir and removed.
set -u
IMG=${1:-assets/seeding_by_Clements_Engelhardt.jpg}
BIN=${BIN:-build/tessera}
OUT=${OUT:-out/viewer-demo}
RUNS=${RUNS:-5}
mkdir -p "$OUT"
export SDL_VIDEODRIVER=offscreen SDL_RENDER_DRIVER=software
TMP=$(mktemp -d /tmp/viewer-demo.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
: >"$OUT/figures.txt"
say() { echo "$*" | tee -a "$OUT/figures.txt"; }

say "DEVICE: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1); $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPU cores"
"$BIN" --version 2>&1 | grep -q CUDA || say "WARNING: $BIN was built without CUDA"

# --demo with --screenshot: the rungs follow each other at once, then the window is saved
timeout 300 "$BIN" -g 1920x1080 --demo --frames 1 --screenshot "$OUT/viewer-gpu.png" "$IMG" \
    >"$TMP/out" 2>"$OUT/demo.log"
rc=$?
say "DEMO: exit $rc, screenshot $([ -s "$OUT/viewer-gpu.png" ] && echo "$OUT/viewer-gpu.png" || echo missing)"
grep "^tessera: demo:" "$OUT/demo.log" | sed 's/^tessera: demo: /DEMO: /' | tee -a "$OUT/figures.txt"
# the demo's frame rate as a talk shows it: each rung on screen for 1.5 s (--frames without
# --screenshot keeps that pace and ends after the last rung with the frame summary)
timeout 300 "$BIN" -g 1920x1080 --demo --frames 1 "$IMG" >"$TMP/out" 2>"$OUT/demo-talk.log"
rc=$?
say "DEMO_FPS: --demo at a talk's pace, exit $rc: $(grep -m1 'tessera: viewer: [0-9]* frames:' "$OUT/demo-talk.log" | sed 's/^tessera: viewer: //')"

# the frame rate of the viewer at work: the chain in live mode, speedups measured at once (B)
timeout 120 "$BIN" -g 1920x1080 --ops gauss:5,equalize,rotate:90 --keys B --frames 600 \
    --screenshot "$OUT/live.png" "$IMG" >"$TMP/out" 2>"$OUT/live.log"
rc=$?
say "LIVE_FPS: gauss:5,equalize,rotate:90 on $(basename "$IMG"), exit $rc: $(grep -m1 'tessera: viewer: [0-9]* frames:' "$OUT/live.log" | sed 's/^tessera: viewer: //')"

# idle: the viewer's CPU time over 5 s at rest (no ops), after 3 s of start-up. Under a real X
# server (Xvfb) where there is one: SDL's offscreen driver has no event source to sleep on, so
# its event wait polls every few ms (a few % of a core), which is SDL's, not the viewer's.
idle_how="SDL offscreen driver (SDL polls its events: not the viewer's own figure)"
if command -v Xvfb >/dev/null 2>&1; then
    Xvfb :77 -screen 0 1920x1200x24 >/dev/null 2>&1 &
    xpid=$!
    sleep 1
    DISPLAY=:77 SDL_VIDEODRIVER=x11 "$BIN" -g 1920x1080 -q "$IMG" >/dev/null 2>&1 &
    idle_how="Xvfb"
else
    "$BIN" -g 1920x1080 -q "$IMG" >/dev/null 2>&1 &
fi
pid=$!
sleep 3
if kill -0 $pid 2>/dev/null; then
    t0=$(awk '{print $14 + $15}' /proc/$pid/stat)
    sleep 5
    t1=$(awk '{print $14 + $15}' /proc/$pid/stat)
    hz=$(getconf CLK_TCK)
    say "IDLE_CPU: $(awk -v d=$((t1 - t0)) -v hz="$hz" 'BEGIN { printf "%.1f%% of a core", 100 * d / (5 * hz) }') over 5 s at rest, no ops ($((t1 - t0)) ticks of $((5 * hz))), $idle_how"
    kill $pid 2>/dev/null
else
    say "IDLE_CPU: the viewer exited during start-up"
fi
wait $pid 2>/dev/null
[ -n "${xpid:-}" ] && kill $xpid 2>/dev/null

# first paint of a 24 MP JPEG: from the viewer's start to its first frame, with the reduced-size
# preview (the default) and without (TESSERA_VIEWER_PREVIEW=0), CPU and GPU backends, RUNS runs
# each, the median and every run
BIG="$TMP/photo-24mp.jpg"
if ! timeout 120 "$BIN" --headless -q --backend cpu --ops resize:6000x4000 --format jpg --quality 90 \
    -o "$BIG" "$IMG" >"$TMP/out" 2>&1; then
    say "FIRST_PAINT: could not make the 24 MP JPEG: $(head -c 300 "$TMP/out")"
    exit 1
fi
: >"$OUT/firstpaint.log"
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
for backend in cpu gpu; do
    for preview in 1 0; do
        : >"$TMP/first"
        : >"$TMP/full"
        i=0
        while [ $i -lt "$RUNS" ]; do
            TESSERA_VIEWER_PREVIEW=$preview timeout 60 "$BIN" --backend $backend -g 1920x1080 \
                --frames 1 "$BIG" >"$TMP/out" 2>"$TMP/err"
            rc=$?
            line=$(grep -m1 "first paint" "$TMP/err")
            echo "$backend preview=$preview: ${line:-exit $rc: $(head -c 200 "$TMP/err")}" >>"$OUT/firstpaint.log"
            echo "$line" | sed -n 's/.*first paint \([0-9]*\) ms.*/\1/p' >>"$TMP/first"
            echo "$line" | sed -n 's/.*the full image at \([0-9]*\) ms.*/\1/p' >>"$TMP/full"
            i=$((i + 1))
        done
        what=$([ $preview = 1 ] && echo "with the preview" || echo "full decode first")
        full=""
        [ $preview = 1 ] && full="; the full image at median $(median <"$TMP/full") ms"
        say "FIRST_PAINT: $backend backend, 24 MP JPEG, $what: median $(median <"$TMP/first") ms after start (runs: $(tr '\n' ' ' <"$TMP/first"| sed 's/ $//'))$full"
    done
done
grep -m1 "preview (" "$OUT/firstpaint.log" | sed 's/^/FIRST_PAINT: e.g. /' | tee -a "$OUT/figures.txt"
