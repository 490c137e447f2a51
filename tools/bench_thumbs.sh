#!/bin/sh
# tools/bench_thumbs.sh - thumbnail mode (-t) on a folder of N 12 MP JPEGs, CPU backend, under
# Xvfb: the first screen, the whole grid with an empty cache, and the whole grid again from the
# cache. The JPEGs are made here (not committed): 20 different 4000x3000 crops of a bundled photo
# with a little noise, as a camera's q90 files, copied to N names; EXIF=1: each with a 160x120
# EXIF thumbnail (IFD1), as cameras write them.
# Usage: sh tools/bench_thumbs.sh [build/tessera] [N] [DIR]   (defaults: build/tessera 1000 a
# temporary folder, removed afterwards; TESSERA_GEOMETRY sets the window, default 800x600;
# BACKEND=gpu|cpu|auto, default cpu; without xvfb-run, e.g. on a GPU machine, SDL draws
# offscreen (SDL_VIDEODRIVER=offscreen); PY, default /usr/bin/python3, makes the JPEGs).
cd "$(dirname "$0")/.." || exit 1
TESSERA=${1:-build/tessera}
N=${2:-1000}
DIR=${3:-}
PY=${PY:-/usr/bin/python3}
BACKEND=${BACKEND:-cpu}
T=$(mktemp -d /tmp/tessera-thumbs.XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -n "$DIR" ] || DIR="$T/photos"
mkdir -p "$DIR"
if [ "$(ls "$DIR" | wc -l)" -lt "$N" ]; then
    "$PY" - "$DIR" "$N" assets/seeding_by_Clements_Engelhardt.jpg <<'PY' || exit 1
import os, shutil, sys
import numpy as np
from PIL import Image
out, n, src = sys.argv[1], int(sys.argv[2]), sys.argv[3]
im = Image.open(src).convert("RGB")
W, H = im.size
rng = np.random.default_rng(7)
made = []
for k in range(min(20, n)):
    cw = int(W * rng.uniform(0.6, 1.0))
    ch = cw * 3 // 4
    x, y = int(rng.integers(0, W - cw + 1)), int(rng.integers(0, max(1, H - ch) + 1))
    crop = im.crop((x, y, x + cw, y + ch)).resize((4000, 3000), Image.BICUBIC)
    a = np.asarray(crop).astype(np.int16)
    a = np.clip(a + rng.normal(0, 3, a.shape), 0, 255).astype(np.uint8)
    p = os.path.join(out, f"img{k:05d}.jpg")
    if os.environ.get("EXIF") == "1":
        import io, struct
        b = io.BytesIO()
        Image.fromarray(a).resize((160, 120), Image.BICUBIC).save(b, "JPEG", quality=85)
        t = b.getvalue()
        ifd1 = 8 + 2 + 12 + 4
        at = ifd1 + 2 + 3 * 12 + 4
        exif = (b"Exif\0\0II*\0" + struct.pack("<I", 8) + struct.pack("<HHHII", 1, 0x0112, 3, 1, 1) +
                struct.pack("<I", ifd1) + struct.pack("<H", 3) + struct.pack("<HHII", 0x0103, 3, 1, 6) +
                struct.pack("<HHII", 0x0201, 4, 1, at) + struct.pack("<HHII", 0x0202, 4, 1, len(t)) +
                struct.pack("<I", 0) + t)
        Image.fromarray(a).save(p, quality=90, exif=exif)
    else:
        Image.fromarray(a).save(p, quality=90)
    made.append(p)
for k in range(len(made), n):
    shutil.copyfile(made[k % len(made)], os.path.join(out, f"img{k:05d}.jpg"))
PY
fi
echo "$N JPEGs of 4000x3000, $(du -sm "$DIR" | cut -f1) MB in all; $(nproc) CPUs; backend $BACKEND; $(date -u '+%Y-%m-%d %H:%M UTC')"
if command -v xvfb-run >/dev/null; then
    DISPLAY_RUN="xvfb-run -a -s '-screen 0 1920x1080x24'"
else
    DISPLAY_RUN="env SDL_VIDEODRIVER=offscreen"
fi
TIMED="/usr/bin/time -f 'cpu %U s user + %S s sys, %e s wall'"
[ -x /usr/bin/time ] || TIMED=""
cat "$DIR"/* >/dev/null # the page cache: the files as a second look at a folder finds them
run() { # NAME: one run; its thumbnail line, its CPU time and the load average
    eval env XDG_CACHE_HOME="$T/cache" TESSERA_GEOMETRY="${TESSERA_GEOMETRY:-800x600}" \
        "$DISPLAY_RUN" "$TIMED" \
        "$TESSERA" --backend "$BACKEND" -t --frames 1 "$DIR" 2>"$T/log" >/dev/null
    echo "$1: $(grep "thumbnails of" "$T/log" | sed "s/^tessera: viewer: //"); $(grep "^cpu " "$T/log"); load $(cut -d' ' -f1-3 /proc/loadavg)"
}
run "empty cache"
run "from the cache"
