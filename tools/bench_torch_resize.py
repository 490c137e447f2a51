#!/usr/bin/env python3
"""bench_torch_resize.py - torchvision's GPU resize (antialias=True), timed like build/bench.

torchvision.transforms.v2.functional.resize on a uint8 CHW RGB tensor on the GPU, random input,
7680x4320 -> 3840x2160 and -> 1920x1080, BILINEAR (tessera's `triangle`: both widen the filter
by the reduction factor when antialiasing) and BICUBIC (torchvision has no Lanczos; its
antialiased bicubic, a = -0.5, is the nearest to tessera's default lanczos3 and cheaper: 4 taps
per unit of support against 6). Two warm-up runs, then N runs (20) between CUDA events, each after
a read of 3x the L2 size so no run finds its input there; the figure is the median. Prints

    torch op=resize:4k:triangle format=rgb8 size=7680x4320 ms=... min_ms=... runs=20

and, given the benchmark's --csv of the same run, tessera's fastest checked row of the matching
op (resize:4k, resize:4k:triangle, resize:1080p, resize:1080p:triangle at 7680x4320 RGB8) with
torchvision's time over it. Images are not compared (torchvision resamples in float). Without
torch, torchvision or a CUDA device it says so and exits 0.

    tools/bench_torch_resize.py [--runs 20] [--csv FILE]
"""
import argparse
import csv
import os
import statistics
import sys

CASES = [  # (tessera's bench op, torchvision interpolation, output size)
    ("resize:4k", "BICUBIC", (3840, 2160)),
    ("resize:4k:triangle", "BILINEAR", (3840, 2160)),
    ("resize:1080p", "BICUBIC", (1920, 1080)),
    ("resize:1080p:triangle", "BILINEAR", (1920, 1080)),
]
IN_W, IN_H = 7680, 4320


def best_ours(path, op):
    if not path or not os.path.exists(path):
        return None
    with open(path, newline="") as f:
        mine = [r for r in csv.DictReader(f) if r.get("op") == op and r.get("format") == "rgb8"
                and r.get("width") == str(IN_W) and r.get("height") == str(IN_H)
                and r.get("kind") == "gpu" and r.get("state") == "ok" and r.get("ms")]
    return min(mine, key=lambda r: float(r["ms"])) if mine else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--csv", help="the benchmark's CSV of the same run, to compare with")
    args = ap.parse_args()
    try:
        import torch
        import torchvision
        from torchvision.transforms.v2 import InterpolationMode
        from torchvision.transforms.v2.functional import resize
    except ImportError as e:
        print("bench_torch_resize: skipped: %s" % e)
        return 0
    if not torch.cuda.is_available():
        print("bench_torch_resize: skipped: torch sees no CUDA device")
        return 0
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or 64 << 20
    flush = torch.full((3 * l2 // 4,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
    gen = torch.Generator(device="cuda").manual_seed(19)
    img = torch.randint(0, 256, (3, IN_H, IN_W), dtype=torch.uint8, device="cuda", generator=gen)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    for op, mode, (ow, oh) in CASES:
        times = []
        for i in range(args.runs + 2):
            flush.sum()
            start.record()
            out = resize(img, [oh, ow], interpolation=getattr(InterpolationMode, mode),
                         antialias=True)
            stop.record()
            stop.synchronize()
            if i >= 2:
                times.append(start.elapsed_time(stop))
        if tuple(out.shape) != (3, oh, ow) or out.dtype != torch.uint8:
            raise RuntimeError("resize returned %s %s" % (tuple(out.shape), out.dtype))
        ms, min_ms = statistics.median(times), min(times)
        line = "torch op=%s format=rgb8 size=%dx%d out=%dx%d interp=%s ms=%.4f min_ms=%.4f runs=%d" % (
            op, IN_W, IN_H, ow, oh, mode.lower(), ms, min_ms, args.runs)
        r = best_ours(args.csv, op)
        if r:
            line += " tessera=%s:%.4f vs_tessera=%.1fx" % (r["variant"], float(r["ms"]), ms / float(r["ms"]))
        print(line)
    print("torch device=%s torch=%s torchvision=%s" % (props.name.replace(" ", "_"),
                                                       torch.__version__, torchvision.__version__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
