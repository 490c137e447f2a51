#!/usr/bin/python3
"""resize_pillow.py - tessera's resize against Pillow, an independent oracle.

Usage: /usr/bin/python3 tests/resize_pillow.py BUILD/tessera [cpu|gpu|auto]

Writes random 8-bit images (L, LA, RGB, RGBA) of odd sizes, runs `tessera --headless --backend cpu
--ops resize:WxH:FILTER` on them (the CPU backend unless told) and compares with Image.resize((W, H), FILTER) (Pillow resamples
LA and RGBA premultiplied, as tessera does). Pass: every sample within +-1 (colour only where
alpha >= 16: unpremultiplying amplifies rounding below that); the largest difference seen is
printed, the aim is 0. thumbnail:N and crop are checked against their Pillow equivalents.
The interp filter (no antialiasing) has no Pillow equivalent: where OpenCV is importable (cv2),
L and RGB are compared with cv2.resize(INTER_LINEAR), which samples the same two taps an axis
with 11-bit weights and rounds once: within +-1.
Ends with "N passed, N failed, N skipped" like the other suites; skips when Pillow is absent.
"""
import os
import subprocess
import sys
import tempfile

try:
    import numpy as np
    from PIL import Image
except ImportError as e:  # the suite counts as skipped, with the reason
    print(f"# resize_pillow: skipped: {e} (Debian: apt-get install python3-pil python3-numpy)")
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

FILTERS = {"box": Image.BOX, "triangle": Image.BILINEAR, "cubic": Image.BICUBIC,
           "lanczos3": Image.LANCZOS}
MODES = {"L": 1, "LA": 2, "RGB": 3, "RGBA": 4}
# (input w, h) -> (output w, h): odd sizes, reduce and enlarge on each axis, up to 16x both ways
CASES = [((1, 1), (3, 2)), ((1, 17), (1, 5)), ((17, 1), (40, 1)), ((33, 17), (16, 9)),
         ((33, 17), (99, 50)), ((131, 97), (40, 30)), ((131, 97), (131, 20)),
         ((131, 97), (20, 97)), ((64, 48), (1, 1)), ((257, 3), (16, 3)), ((7, 5), (112, 80)),
         ((320, 200), (20, 13)), ((100, 100), (37, 161)), ((4097, 3), (256, 2))]

passed = failed = 0
worst = {}


def report(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")


BACKEND = "cpu"


def run(tessera, src, ops, dst):
    r = subprocess.run([tessera, "--headless", "-q", "--force", "--backend", BACKEND, "--ops", ops,
                        "-o", dst, src], capture_output=True, text=True)
    if r.returncode != 0:
        return f"tessera failed ({r.returncode}): {r.stderr.strip()}"
    return None


def compare(mode, got, want):
    """Largest difference over the samples that count, and whether it passes (+-1)."""
    g = np.asarray(got, dtype=np.int32).reshape(want.size[1], want.size[0], -1)
    w = np.asarray(want, dtype=np.int32).reshape(g.shape)
    d = np.abs(g - w)
    if mode in ("LA", "RGBA"):
        mask = w[..., -1:] >= 16
        color = np.where(mask, d[..., :-1], 0)
        m = max(int(color.max(initial=0)), int(d[..., -1].max(initial=0)))
    else:
        m = int(d.max(initial=0))
    return m, m <= 1


def check_cv2(tessera, tmp, rng):
    """interp against OpenCV's INTER_LINEAR (L, RGB: OpenCV does not premultiply alpha)."""
    try:
        import cv2
    except ImportError:
        print("# resize_pillow: interp against OpenCV skipped: no cv2")
        return
    for mode, ch in (("L", 1), ("RGB", 3)):
        for (iw, ih), (ow, oh) in CASES + [((7680 // 8, 4320 // 8), (3840 // 8, 2160 // 8)),
                                          ((7680 // 8, 4320 // 8), (1920 // 8, 1080 // 8))]:
            a = rng.integers(0, 256, (ih, iw, ch), dtype=np.uint8)
            im = Image.fromarray(a[..., 0] if ch == 1 else a, mode)
            src = os.path.join(tmp, "cv_in.png")
            im.save(src)
            dst = os.path.join(tmp, "cv_out.png")
            what = f"{mode} {iw}x{ih} -> {ow}x{oh} interp against cv2 INTER_LINEAR"
            err = run(tessera, src, f"resize:{ow}x{oh}:interp", dst)
            if err:
                report(False, f"{what}: {err}")
                continue
            want = cv2.resize(a[..., 0] if ch == 1 else a, (ow, oh), interpolation=cv2.INTER_LINEAR)
            got = np.asarray(Image.open(dst), dtype=np.int32).reshape(want.shape)
            m = int(np.abs(got - want.astype(np.int32)).max(initial=0))
            worst["interp (cv2)"] = max(worst.get("interp (cv2)", 0), m)
            report(m <= 1, f"{what}: max difference {m}")


def main():
    global BACKEND
    if len(sys.argv) not in (2, 3) or (len(sys.argv) == 3 and sys.argv[2] not in ("cpu", "gpu", "auto")):
        print(__doc__)
        return 2
    tessera = os.path.abspath(sys.argv[1])
    BACKEND = sys.argv[2] if len(sys.argv) == 3 else "cpu"
    rng = np.random.default_rng(int(os.environ.get("TESSERA_SEED", "19")))
    with tempfile.TemporaryDirectory() as tmp:
        for mode, ch in MODES.items():
            for (iw, ih), (ow, oh) in CASES:
                a = rng.integers(0, 256, (ih, iw, ch), dtype=np.uint8)
                if ch in (2, 4):  # some transparent and faint pixels, where premultiplying bites
                    a[..., -1][rng.random((ih, iw)) < 0.2] = 0
                    a[..., -1][rng.random((ih, iw)) < 0.1] = 255
                im = Image.fromarray(a[..., 0] if ch == 1 else a, mode)
                src = os.path.join(tmp, f"in_{mode}_{iw}x{ih}.png")
                im.save(src)
                for fname, flt in FILTERS.items():
                    dst = os.path.join(tmp, "out.png")
                    what = f"{mode} {iw}x{ih} -> {ow}x{oh} {fname}"
                    err = run(tessera, src, f"resize:{ow}x{oh}:{fname}", dst)
                    if err:
                        report(False, f"{what}: {err}")
                        continue
                    got = Image.open(dst)
                    if got.mode != mode or got.size != (ow, oh):
                        report(False, f"{what}: got {got.mode} {got.size}")
                        continue
                    m, ok = compare(mode, got, im.resize((ow, oh), flt))
                    worst[fname] = max(worst.get(fname, 0), m)
                    report(ok, f"{what}: max difference {m}")
        # thumbnail:N is resize of the long side to N keeping the aspect, never enlarging
        rgb = Image.fromarray(rng.integers(0, 256, (90, 160, 3), dtype=np.uint8), "RGB")
        src = os.path.join(tmp, "t.png")
        rgb.save(src)
        for n, size in ((64, (64, 36)), (100, (100, 56)), (200, (160, 90)), (91, (91, 51))):
            dst = os.path.join(tmp, "t_out.png")
            err = run(tessera, src, f"thumbnail:{n}", dst)
            want = rgb.resize(size, Image.LANCZOS) if size != rgb.size else rgb
            got = None if err else Image.open(dst)
            ok = got is not None and got.size == want.size and compare("RGB", got, want)[1]
            report(ok, f"thumbnail:{n} of 160x90: {err or (got.size if got else '')} want {size}")
        for box, pil_box in (("10x20+3+4", (3, 4, 13, 24)), ("500x500+150+80", (150, 80, 160, 90)),
                             ("20x20-5-5", (0, 0, 15, 15))):
            dst = os.path.join(tmp, "c_out.png")
            err = run(tessera, src, f"crop:{box}", dst)
            want = rgb.crop(pil_box)
            got = None if err else Image.open(dst)
            ok = got is not None and got.size == want.size and compare("RGB", got, want)[0] == 0
            report(ok, f"crop:{box}: {err or ''}")
        check_cv2(tessera, tmp, rng)
        err = run(tessera, src, "crop:10x10+160+0", os.path.join(tmp, "c_none.png"))
        report(err is not None and "outside" in err, f"crop outside the image must fail: {err}")
    print(f"# resize_pillow ({BACKEND}): largest difference from Pillow 9.4 (OpenCV) per filter: " +
          ", ".join(f"{k} {v}" for k, v in worst.items()))
    print(f"{passed} passed, {failed} failed, 0 skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
