#!/usr/bin/env python3
"""bench_cpu_batch.py - whole-process batch times of tessera's CPU backend against OpenCV on the
same photos, the same chain and the same number of threads.

Usage: bench_cpu_batch.py TESSERA CORPUS_DIR [--ops CHAIN] [--format jpg|png] [--jobs 2]
                          [--runs 5]

tessera: `TESSERA --headless --backend cpu -j JOBS -q --force --format FMT --quality 90 -o OUT
--ops CHAIN CORPUS_DIR`. OpenCV (python3-opencv, /usr/bin/python3): the same files read with
imread, the chain (GaussianBlur 5x5 with BORDER_REPLICATE, equalizeHist of Y through YCrCb,
rotate; the ops of CHAIN in its order), written with imwrite (JPEG quality 90), on a pool of
JOBS threads with cv2.setNumThreads(1) (cv2 releases the GIL). The two run in turn, A B A B ...,
RUNS times each after one warm-up pair, files in the page cache; printed: each side's median
wall seconds and the ratio OpenCV / tessera (> 1: tessera faster).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

CV_SCRIPT = r'''
import cv2, os, sys
from concurrent.futures import ThreadPoolExecutor
src, dst, ext, jobs, ops = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
cv2.setNumThreads(1)
R = cv2.BORDER_REPLICATE
def eq(im):
    y = cv2.cvtColor(im, cv2.COLOR_BGR2YCrCb)
    y[:, :, 0] = cv2.equalizeHist(y[:, :, 0])
    return cv2.cvtColor(y, cv2.COLOR_YCrCb2BGR)
OPS = {"gauss:5": lambda im: cv2.GaussianBlur(im, (5, 5), 0, borderType=R),
       "equalize": eq,
       "rotate:90": lambda im: cv2.rotate(im, cv2.ROTATE_90_CLOCKWISE)}
chain = [OPS[o] for o in ops.split(",") if o]
def one(name):
    im = cv2.imread(os.path.join(src, name), cv2.IMREAD_COLOR)
    for f in chain:
        im = f(im)
    params = [cv2.IMWRITE_JPEG_QUALITY, 90] if ext == "jpg" else []
    cv2.imwrite(os.path.join(dst, os.path.splitext(name)[0] + "." + ext), im, params)
with ThreadPoolExecutor(jobs) as ex:
    list(ex.map(one, sorted(os.listdir(src))))
'''


def run(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tessera")
    ap.add_argument("corpus")
    ap.add_argument("--ops", default="gauss:5,equalize,rotate:90")
    ap.add_argument("--format", default="jpg")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        ot, oc = os.path.join(d, "t"), os.path.join(d, "c")
        os.mkdir(ot)
        os.mkdir(oc)
        t_cmd = [a.tessera, "--headless", "--backend", "cpu", "-j", str(a.jobs), "-q", "--force",
                 "--format", a.format, "--quality", "90", "-o", ot, "--ops", a.ops, a.corpus]
        c_cmd = ["/usr/bin/python3", "-c", CV_SCRIPT, a.corpus, oc, a.format, str(a.jobs), a.ops]
        tt, tc = [], []
        for i in range(a.runs + 1):
            x, y = run(t_cmd), run(c_cmd)
            if i:
                tt.append(x)
                tc.append(y)
        n = len(os.listdir(a.corpus))
    mt, mc = statistics.median(tt), statistics.median(tc)
    print(f"{n} files, ops {a.ops or '(none)'}, {a.format}, {a.jobs} threads, {a.runs} runs: "
          f"tessera {mt:.2f} s (min {min(tt):.2f}), OpenCV {mc:.2f} s (min {min(tc):.2f}), "
          f"OpenCV / tessera {mc / mt:.2f}x")


if __name__ == "__main__":
    sys.exit(main())
