#!/usr/bin/env python3
"""bench_clahe_cv2.py - OpenCV's CPU CLAHE, the baseline of the clahe rows of the benchmark.

Usage: python3 tools/bench_clahe_cv2.py [THREADS]   (default: every core)
Times cv2.createCLAHE(40, (8, 8)).apply() on a uniform random gray8 and gray16 image at 1080p,
4K and 8K (the benchmark's data), median of 10 runs after a warm-up, and prints markdown rows.
"""
import sys
import time

import cv2
import numpy as np

threads = int(sys.argv[1]) if len(sys.argv) > 1 else cv2.getNumberOfCPUs()
cv2.setNumThreads(threads)
rng = np.random.default_rng(36)
clahe = cv2.createCLAHE(clipLimit=40.0, tileGridSize=(8, 8))
print(f"# OpenCV {cv2.__version__}, {cv2.getNumThreads()} threads")
print("| size | format | OpenCV CLAHE ms (median of 10) |")
print("|---|---|--:|")
for (w, h) in ((1920, 1080), (3840, 2160), (7680, 4320)):
    for dt, name in ((np.uint8, "gray8"), (np.uint16, "gray16")):
        a = rng.integers(0, np.iinfo(dt).max + 1, (h, w), dtype=dt)
        clahe.apply(a)
        ts = []
        for _ in range(10):
            t = time.perf_counter()
            clahe.apply(a)
            ts.append((time.perf_counter() - t) * 1e3)
        print(f"| {w}x{h} | {name} | {sorted(ts)[len(ts) // 2]:.3f} |")
