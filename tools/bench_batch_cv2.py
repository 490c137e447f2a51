#!/usr/bin/env python3
"""bench_batch_cv2.py - OpenCV's side of `make bench-batch`: every file of the input directories
read, decoded, run through gauss:5 (GaussianBlur 5x5, sigma 1.1 as tessera's), equalize (luma:
equalizeHist of YCrCb's Y, as tessera's default) and rotate:90 (clockwise), encoded (JPEG quality Q
or PNG at OpenCV's default level) and written, in a thread pool over every core (one OpenCV thread
per task, so the pool is the parallelism). Times: wall clock of the whole batch after one untimed
image; per-stage sums divided by the image count. The last line is the RESULT line the driver
(tools/bench_batch.sh) collects.

Usage: bench_batch_cv2.py [--threads N] [--format jpg|png] [--quality Q] [--corpus NAME]
                          [--chain NAME] -o OUTDIR DIR...
"""
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np

from bench_batch_common import add_stages, images, parser, summary, totals, write_out


def main():
    ap = parser("--threads", os.cpu_count())
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cv2.setNumThreads(1)
    files = images(a.dirs)
    if not files:
        sys.exit("bench_batch_cv2: no images")
    lock = threading.Lock()
    tot = totals()
    params = [cv2.IMWRITE_JPEG_QUALITY, a.quality] if a.format == "jpg" else []

    def one(path):
        t0 = time.perf_counter()
        buf = np.fromfile(path, np.uint8)
        t1 = time.perf_counter()
        img = cv2.imdecode(buf, cv2.IMREAD_COLOR)
        t2 = time.perf_counter()
        img = cv2.GaussianBlur(img, (5, 5), 0, borderType=cv2.BORDER_REPLICATE)
        ycc = cv2.cvtColor(img, cv2.COLOR_BGR2YCrCb)
        ycc[:, :, 0] = cv2.equalizeHist(ycc[:, :, 0])
        img = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR)
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
        t3 = time.perf_counter()
        ok, enc = cv2.imencode("." + a.format, img, params)
        t4 = time.perf_counter()
        write_out(a.out, path, a.format, enc.tobytes())
        t5 = time.perf_counter()
        with lock:
            add_stages(tot, (t0, t1, t2, t3, t4, t5))
            tot["mp"] += img.shape[0] * img.shape[1] / 1e6
        return ok

    one(files[0])  # untimed: first-use costs
    for k in tot:
        tot[k] = 0.0
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=a.threads) as pool:
        ok = all(pool.map(one, files))
    wall = time.perf_counter() - t0
    n = len(files)
    out_mib, rss, stages = summary(a.out, tot, n)
    print(f"RESULT system=opencv-{cv2.__version__} corpus={a.corpus} chain={a.chain or a.format} "
          f"threads={a.threads} images={n} seconds={wall:.3f} images_per_s={n / wall:.2f} "
          f"mp_per_s={tot['mp'] / wall:.1f} {stages} decode_paths=cpu:{n} host_peak_mib={rss:.0f} "
          f"gpu_peak_mib=0 out_mib={out_mib:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
