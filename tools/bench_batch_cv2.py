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
import argparse
import os
import resource
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import cv2
import numpy as np


def images(dirs):
    out = []
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if f.lower().endswith((".jpg", ".jpeg", ".png")):
                out.append(os.path.join(d, f))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--format", default="jpg", choices=["jpg", "png"])
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--corpus", default="corpus")
    ap.add_argument("--chain", default="")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    cv2.setNumThreads(1)
    files = images(a.dirs)
    if not files:
        sys.exit("bench_batch_cv2: no images")
    lock = threading.Lock()
    tot = {"read": 0.0, "decode": 0.0, "ops": 0.0, "encode": 0.0, "write": 0.0, "mp": 0.0}
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
        dst = os.path.join(a.out, os.path.splitext(os.path.basename(path))[0] + "." + a.format)
        with open(dst + ".tmp", "wb") as f:
            f.write(enc.tobytes())
        os.replace(dst + ".tmp", dst)
        t5 = time.perf_counter()
        with lock:
            for k, v in (("read", t1 - t0), ("decode", t2 - t1), ("ops", t3 - t2),
                         ("encode", t4 - t3), ("write", t5 - t4)):
                tot[k] += v
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
    out_bytes = sum(os.path.getsize(os.path.join(a.out, f)) for f in os.listdir(a.out))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stages = " ".join(f"{k}_ms={1e3 * tot[k] / n:.1f}" for k in ("read", "decode", "ops", "encode",
                                                               "write"))
    print(f"RESULT system=opencv-{cv2.__version__} corpus={a.corpus} chain={a.chain or a.format} "
          f"threads={a.threads} images={n} seconds={wall:.3f} images_per_s={n / wall:.2f} "
          f"mp_per_s={tot['mp'] / wall:.1f} {stages} decode_paths=cpu:{n} host_peak_mib={rss:.0f} "
          f"gpu_peak_mib=0 out_mib={out_bytes / 2**20:.1f}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
