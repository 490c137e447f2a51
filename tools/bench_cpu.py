#!/usr/bin/env python3
"""bench_cpu.py - `make bench-cpu`: every CPU variant of tessera (the reference and the fast
rows) against OpenCV's call with the same threads, per op and for the chain, on one photo
scaled to SIZE megapixels (RGB, 8-bit).

Usage: bench_cpu.py BENCH_BINARY PHOTO OUT.md [--threads N] [--mp 16] [--repeats 7] [--rounds 3]

For each op: the median of REPEATS runs (one warm-up first) of each tessera variant
(tools/bench_cpu.c, host clock around ts_pipeline_run) and of the OpenCV call (cv2.setNumThreads(N),
perf_counter around the call), the input megapixels per second, and the ratios: OpenCV's time
over the fast variant's (> 1: tessera faster) and the reference's over the fast variant's.
OpenCV counterparts: GaussianBlur, filter2D (box, sharpen, emboss), Sobel magnitude (two 16-bit
Sobels, magnitude in float, rounded to 8 bits), equalizeHist of luma through YCrCb, rotate,
transpose, flip; resize with INTER_AREA for reductions and INTER_LANCZOS4 otherwise. Borders:
BORDER_REPLICATE, as tessera.
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import tempfile
import time

import cv2
import numpy as np

REP = cv2.BORDER_REPLICATE


def sobel_mag(im):
    gx = cv2.Sobel(im, cv2.CV_16S, 1, 0, ksize=3, borderType=REP)
    gy = cv2.Sobel(im, cv2.CV_16S, 0, 1, ksize=3, borderType=REP)
    m = cv2.magnitude(gx.astype(np.float32), gy.astype(np.float32))
    return cv2.convertScaleAbs(m)


def equalize_luma(im):
    ycc = cv2.cvtColor(im, cv2.COLOR_RGB2YCrCb)
    ycc[:, :, 0] = cv2.equalizeHist(ycc[:, :, 0])
    return cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)


def resize_to(im, pct, interp):
    h, w = im.shape[:2]
    return cv2.resize(im, (max(1, round(w * pct / 100)), max(1, round(h * pct / 100))),
                      interpolation=interp)


K_SHARPEN = np.array([[0, -1, 0], [-1, 5, -1], [0, -1, 0]], np.float32)
K_EMBOSS = np.array([[-2, -1, 0], [-1, 1, 1], [0, 1, 2]], np.float32)
K_BOX = np.ones((3, 3), np.float32) / 9

# op, OpenCV's call (as shown), the call
OPS = [
    ("gauss:3", "GaussianBlur 3x3", lambda im: cv2.GaussianBlur(im, (3, 3), 0, borderType=REP)),
    ("gauss:5", "GaussianBlur 5x5", lambda im: cv2.GaussianBlur(im, (5, 5), 0, borderType=REP)),
    ("gauss:7", "GaussianBlur 7x7", lambda im: cv2.GaussianBlur(im, (7, 7), 0, borderType=REP)),
    ("box:3", "filter2D box 3x3", lambda im: cv2.filter2D(im, -1, K_BOX, borderType=REP)),
    ("sharpen", "filter2D sharpen", lambda im: cv2.filter2D(im, -1, K_SHARPEN, borderType=REP)),
    ("emboss", "filter2D emboss", lambda im: cv2.filter2D(im, -1, K_EMBOSS, borderType=REP)),
    ("edge", "Sobel x, y + magnitude", sobel_mag),
    ("equalize", "equalizeHist of Y (YCrCb)", equalize_luma),
    ("rotate:90", "rotate 90 clockwise", lambda im: cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE)),
    ("rotate:180", "rotate 180", lambda im: cv2.rotate(im, cv2.ROTATE_180)),
    ("rotate:270", "rotate 90 counter-clockwise",
     lambda im: cv2.rotate(im, cv2.ROTATE_90_COUNTERCLOCKWISE)),
    ("transpose", "transpose", cv2.transpose),
    ("flip", "flip(0)", lambda im: cv2.flip(im, 0)),
    ("flop", "flip(1)", lambda im: cv2.flip(im, 1)),
    ("resize:50%:box", "resize 50% INTER_AREA", lambda im: resize_to(im, 50, cv2.INTER_AREA)),
    ("resize:50%", "resize 50% INTER_AREA", lambda im: resize_to(im, 50, cv2.INTER_AREA)),
    ("resize:25%", "resize 25% INTER_AREA", lambda im: resize_to(im, 25, cv2.INTER_AREA)),
    ("resize:150%", "resize 150% INTER_LANCZOS4",
     lambda im: resize_to(im, 150, cv2.INTER_LANCZOS4)),
]
CHAINS = [
    ("gauss:5,equalize,rotate:90", "GaussianBlur 5x5, equalize Y, rotate",
     lambda im: cv2.rotate(equalize_luma(cv2.GaussianBlur(im, (5, 5), 0, borderType=REP)),
                           cv2.ROTATE_90_CLOCKWISE)),
]


def time_cv(fn, im, reps, clock):
    fn(im)
    t = []
    for _ in range(reps):
        t0 = clock()
        fn(im)
        t.append((clock() - t0) * 1e3)
    return statistics.median(t)


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def os_name():
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def isa():
    try:
        with open("/proc/cpuinfo") as f:
            flags = next(l for l in f if l.startswith("flags")).split()
    except (OSError, StopIteration):
        return "?"
    return "AVX-512" if "avx512bw" in flags else "AVX2" if "avx2" in flags else "SSE2"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("photo")
    ap.add_argument("out")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--mp", type=float, default=16)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", default="", help="comma-free list of ops separated by spaces")
    a = ap.parse_args()
    cv2.setNumThreads(a.threads)
    photo = cv2.imread(a.photo, cv2.IMREAD_COLOR)
    if photo is None:
        raise SystemExit(f"bench_cpu: cannot read {a.photo}")
    h0, w0 = photo.shape[:2]
    s = (a.mp * 1e6 / (w0 * h0)) ** 0.5
    w, h = int(round(w0 * s)), int(round(h0 * s))
    im = cv2.cvtColor(cv2.resize(photo, (w, h), interpolation=cv2.INTER_CUBIC), cv2.COLOR_BGR2RGB)
    im = np.ascontiguousarray(im)
    mp = w * h / 1e6
    ops = OPS + CHAINS
    if a.ops:
        keep = a.ops.split()
        ops = [o for o in ops if o[0] in keep]
    # one thread: each side's thread CPU time (the machine may be shared); else wall time
    clock = time.thread_time if a.threads == 1 else time.perf_counter
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    rows = []
    with tempfile.TemporaryDirectory() as d:
        ppm = os.path.join(d, "in.ppm")
        with open(ppm, "wb") as f:
            f.write(b"P6 %d %d 255\n" % (w, h))
            f.write(im.tobytes())
        for op, cvname, fn in ops:
            # A/B rounds back to back: tessera's variants, then OpenCV, ROUNDS times; the median
            # of each side's per-round medians
            tms, cvs = {}, []
            for rnd in range(a.rounds):
                out = subprocess.run([a.bench, ppm, str(a.threads), str(a.repeats), op] +
                                     (["--no-ref"] if rnd else []),
                                     check=True, capture_output=True, text=True).stdout
                for line in out.splitlines():
                    _, var, med, _ = line.split("\t")
                    tms.setdefault(var, []).append(float(med))
                cvs.append(time_cv(fn, im, a.repeats, clock))
            cv_ms = statistics.median(cvs)
            ref_ms = statistics.median(tms["cpu"]) if "cpu" in tms else None
            for var, l in tms.items():
                ms = statistics.median(l)
                ratio_ref = ref_ms / ms if ref_ms else float("nan")
                rows.append(f"| `{op}` | {var} | {ms:.1f} | {mp / ms * 1e3:.0f} | {cvname} | "
                            f"{cv_ms:.1f} | {cv_ms / ms:.2f}x | {ratio_ref:.1f}x |")
                print(rows[-1], flush=True)
    head = [
        f"# CPU variants vs OpenCV {cv2.__version__}: {w}x{h} RGB 8-bit ({mp:.1f} MP), "
        f"{a.threads} thread{'s' if a.threads > 1 else ''}",
        "",
        f"Machine: {cpu_name()} ({os.cpu_count()} cores, {isa()}), {os_name()}; {date}. "
        f"Input: {os.path.basename(a.photo)} scaled to {mp:.1f} MP.",
        f"Command: `python3 tools/bench_cpu.py {a.bench} PHOTO OUT --threads {a.threads} "
        f"--mp {a.mp:g} --repeats {a.repeats} --rounds {a.rounds}`: per op, {a.rounds} rounds "
        f"back to back (tessera's variants, then OpenCV), each the median of {a.repeats} runs "
        "after a warm-up (the reference: 3 runs, first round only); the median of the rounds. "
        + ("Clock: each side's thread CPU time (user + system), so that other processes on the "
           "machine do not count. " if a.threads == 1 else "Clock: wall time. ") +
        "A chain's `auto` row is the CPU pipeline with the fast rows and fusion, `cpu` the "
        "reference op by op.",
        "vs OpenCV: OpenCV's time over the variant's (> 1: tessera faster); vs ref: the "
        "reference's time over the variant's.",
        "",
        "| op | variant | ms | MP/s | OpenCV call | OpenCV ms | vs OpenCV | vs ref |",
        "| --- | --- | ---: | ---: | --- | ---: | ---: | ---: |",
    ]
    with open(a.out, "w") as f:
        f.write("\n".join(head + rows) + "\n")
    print(f"bench_cpu: wrote {a.out}")


if __name__ == "__main__":
    main()
