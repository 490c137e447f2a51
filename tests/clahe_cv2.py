#!/usr/bin/python3
"""clahe_cv2.py - tessera's clahe against OpenCV's createCLAHE, an independent oracle.

Usage: /usr/bin/python3 tests/clahe_cv2.py BUILD/tessera [cpu|gpu|auto]

Runs `tessera --headless --backend cpu --ops clahe:CLIP:TXxTY` on the real images of assets/
(8 and 16-bit, gray and colour) and on random images of odd sizes, and compares with
cv2.createCLAHE(CLIP, (TX, TY)).apply(). Gray images are compared directly; for colour the plane
OpenCV equalizes is tessera's luma, y = (299R + 587G + 114B + 500) // 1000, and each colour sample
moves by the change of its luma as equalize does (the same integer rule here in numpy); alpha
must pass through. Pass: every sample equal (tessera follows OpenCV's scalar code and its float
rounding step by step, kernels/clahe.h); the largest difference seen is printed.
Ends with "N passed, N failed, N skipped" like the other suites; skips without cv2.
"""
import os
import subprocess
import sys
import tempfile

try:
    import cv2
    import numpy as np
except ImportError as e:
    print(f"# clahe_cv2: skipped: {e} (Debian: apt-get install python3-opencv)")
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = os.path.join(HERE, "..", "assets")
IMAGES = ["camera.png", "astronaut.png", "coffee_257x129.png", "chelsea_rgba.png",
          "microaneurysms.png", "seeding_16bit.png", "basn0g16.png", "basn2c16.png",
          "basn4a16.png", "clock_motion.png"]
PARAMS = [(40.0, 8, 8), (2.0, 8, 8), (0.0, 8, 8), (4.0, 3, 5), (40.0, 16, 16), (1.0, 1, 1)]
BACKEND = "cpu"
passed = failed = 0
worst = 0


def report(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL {what}")


def read(path):
    """An RGB(A)/gray array as tessera sees the file (cv2 reads BGR)."""
    a = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if a is None:
        return None
    if a.ndim == 3 and a.shape[2] == 3:
        a = a[..., ::-1]
    elif a.ndim == 3 and a.shape[2] == 4:
        a = a[..., [2, 1, 0, 3]]
    return np.ascontiguousarray(a)


def write(path, a):
    if a.ndim == 3 and a.shape[2] == 3:
        a = a[..., ::-1]
    elif a.ndim == 3 and a.shape[2] == 4:
        a = a[..., [2, 1, 0, 3]]
    cv2.imwrite(path, np.ascontiguousarray(a))


def expect(a, clip, tx, ty):
    """What tessera must give: cv2's CLAHE on the gray plane, or on the luma of colour."""
    clahe = cv2.createCLAHE(clipLimit=clip, tileGridSize=(tx, ty))
    if a.ndim == 2:
        return clahe.apply(a)
    maxv = 65535 if a.dtype == np.uint16 else 255
    if a.shape[2] == 2:
        out = a.copy()
        out[..., 0] = clahe.apply(np.ascontiguousarray(a[..., 0]))
        return out
    c = a[..., :3].astype(np.int64)
    s = 299 * c[..., 0] + 587 * c[..., 1] + 114 * c[..., 2]
    y = ((s + 500) // 1000).astype(a.dtype)
    ly = clahe.apply(np.ascontiguousarray(y)).astype(np.int64)
    d = 1000 * ly - s
    q = np.where(d >= 0, (d + 500) // 1000, -((-d + 500) // 1000))
    out = a.copy()
    out[..., :3] = np.clip(c + q[..., None], 0, maxv).astype(a.dtype)
    return out


def check(tessera, tmp, name, a):
    global worst
    src = os.path.join(tmp, "in.png")
    write(src, a)
    for clip, tx, ty in PARAMS:
        dst = os.path.join(tmp, "out.png")
        what = f"{name} {a.shape} {a.dtype} clahe:{clip:g}:{tx}x{ty}"
        r = subprocess.run([tessera, "--headless", "-q", "--force", "--backend", BACKEND, "--ops",
                            f"clahe:{clip:g}:{tx}x{ty}", "-o", dst, src],
                           capture_output=True, text=True)
        if r.returncode != 0:
            report(False, f"{what}: tessera failed ({r.returncode}): {r.stderr.strip()}")
            continue
        got = read(dst)
        want = expect(a, clip, tx, ty)
        if got is None or got.shape != want.shape or got.dtype != want.dtype:
            report(False, f"{what}: got {None if got is None else (got.shape, got.dtype)}")
            continue
        m = int(np.abs(got.astype(np.int64) - want.astype(np.int64)).max(initial=0))
        worst = max(worst, m)
        report(m == 0, f"{what}: max difference {m} ({int((got != want).sum())} samples)")


def main():
    global BACKEND
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    tessera = os.path.abspath(sys.argv[1])
    BACKEND = sys.argv[2] if len(sys.argv) == 3 else "cpu"
    rng = np.random.default_rng(int(os.environ.get("TESSERA_SEED", "36")))
    with tempfile.TemporaryDirectory() as tmp:
        for f in IMAGES:
            a = read(os.path.join(ASSETS, f))
            if a is None:
                print(f"# clahe_cv2: {f}: cv2 cannot read it, not compared")
                continue
            check(tessera, tmp, f, a)
        for (w, h) in ((1, 1), (1, 17), (33, 17), (4097, 3), (64, 48)):
            for dt, top in ((np.uint8, 256), (np.uint16, 65536)):
                check(tessera, tmp, f"random {w}x{h}", rng.integers(0, top, (h, w), dtype=dt))
                check(tessera, tmp, f"random rgb {w}x{h}",
                      rng.integers(0, top, (h, w, 3), dtype=dt))
    print(f"# clahe_cv2: largest difference {worst}")
    print(f"{passed} passed, {failed} failed, 0 skipped")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
