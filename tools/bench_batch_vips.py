#!/usr/bin/env python3
"""bench_batch_vips.py - libvips' side of the thumbnail row of tools/bench_batch_scale.sh: every
file of the input directories made into a thumbnail of at most SIZE x SIZE by libvips' own
`thumbnail` (pyvips.Image.thumbnail: shrink-on-load, then a reduce; what `vipsthumbnail` does),
encoded as JPEG quality Q and written (temp file, rename), in a pool of N threads with one libvips
thread each (VIPS_CONCURRENCY=1, set before pyvips loads), so the pool is the parallelism, as
bench_batch_cv2.py does for OpenCV. The loop's wall clock starts after one untimed image.

Usage: bench_batch_vips.py [--threads N] [--size S] [--quality Q] -o OUTDIR DIR...
"""
import argparse
import os
import sys
import time

os.environ.setdefault("VIPS_CONCURRENCY", "1")
import pyvips  # noqa: E402  (after VIPS_CONCURRENCY)
from concurrent.futures import ThreadPoolExecutor  # noqa: E402

from bench_batch_common import images, write_out  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("dirs", nargs="+")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    pyvips.cache_set_max(0)  # every file decoded afresh, as a batch of distinct files would be
    files = images(a.dirs)
    if not files:
        sys.exit("bench_batch_vips: no images")

    def one(path):
        im = pyvips.Image.thumbnail(path, a.size, height=a.size)
        write_out(a.out, path, "jpg", im.jpegsave_buffer(Q=a.quality))

    one(files[0])  # untimed: the library's own start-up
    t0 = time.perf_counter()
    with ThreadPoolExecutor(a.threads) as pool:
        list(pool.map(one, files))
    dt = time.perf_counter() - t0
    print(f"RESULT system=libvips-{pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)} "
          f"threads={a.threads} images={len(files)} seconds={dt:.3f} images_per_s={len(files) / dt:.1f}")


if __name__ == "__main__":
    main()
