#!/bin/sh
# resize_gpu_check.sh - what the resize work needs from a GPU machine (run from the repo root):
# the GPU tests of the resize family (every variant bit-exact against the CPU reference), the
# Pillow suite, the benchmark rows (8K -> 4K and 8K -> 1080p RGB8, lanczos3 and triangle, with
# NPP's nppiResize and the copy floor) and torchvision's antialiased resize on the same device.
#   sh tools/resize_gpu_check.sh [BUILD]       (default build; results under tools/results/)
set -u
BUILD=${1:-build}
make -j"$(nproc)" BUILD="$BUILD" WERROR=1 all "$BUILD/bench" || exit 1
echo "== GPU resize tests (TESSERA_REQUIRE_GPU=1: fail instead of skipping)"
TESSERA_REQUIRE_GPU=1 "$BUILD/test_unit" resize || status=1
echo "== Pillow"
/usr/bin/python3 tests/resize_pillow.py "$BUILD/tessera" || status=1
/usr/bin/python3 tests/resize_pillow.py "$BUILD/tessera" gpu || status=1
slug=$("$BUILD/bench" --slug)-resize
mkdir -p tools/results
echo "== bench (8K input: resize:4k = 8K -> 4K, resize:1080p = 8K -> 1080p)"
"$BUILD/bench" --quick --op resize --format rgb8 --md "tools/results/$slug.md" \
    --csv "tools/results/$slug.csv" || status=1
echo "== torchvision"
${PYTHON:-python3} tools/bench_torch_resize.py --csv "tools/results/$slug.csv" || status=1
echo "== thumbnail:256 of 12 MP through the batch (images/s), OpenCV INTER_AREA beside it"
tmp=$(mktemp -d)
/usr/bin/python3 - "$tmp" <<'PY'
import sys, numpy as np
from PIL import Image
rng = np.random.default_rng(1)
for i in range(16):  # 4000x3000 JPEGs of smooth noise (JPEG-like content, not white noise)
    a = rng.integers(0, 256, (375, 500, 3), dtype=np.uint8)
    Image.fromarray(a).resize((4000, 3000), Image.BICUBIC).save(f"{sys.argv[1]}/img{i:02d}.jpg", quality=90)
PY
mkdir -p "$tmp/out"
/usr/bin/time -f "tessera batch thumbnail:256 of 16 x 12 MP: %e s" \
    "$BUILD/tessera" --headless -q --force -o "$tmp/out" --ops thumbnail:256 "$tmp"/img*.jpg || status=1
/usr/bin/python3 - "$tmp" <<'PY'
import sys, time, glob, cv2
files = sorted(glob.glob(sys.argv[1] + "/img*.jpg"))
t = time.time()
for f in files:
    im = cv2.imread(f)
    cv2.imwrite(f + ".cv.jpg", cv2.resize(im, (256, 192), interpolation=cv2.INTER_AREA))
print("opencv imread + INTER_AREA + imwrite of %d x 12 MP: %.2f s (%.1f images/s)" %
      (len(files), time.time() - t, len(files) / (time.time() - t)))
PY
command -v vips >/dev/null && /usr/bin/time -f "vips thumbnail of 16 x 12 MP: %e s" \
    sh -c "for f in $tmp/img*.jpg; do vips thumbnail \$f \$f.v.jpg 256; done"
rm -rf "$tmp"
exit ${status:-0}
