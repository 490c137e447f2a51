#!/usr/bin/env python3
"""bench_torch.py - torchvision's GPU histogram equalization, timed like build/bench times tessera.

torchvision.transforms.v2.functional.equalize on a uint8 CHW RGB tensor on the GPU (each channel
equalized on its own: tessera's `equalize:rgb`), random input, at 7680x4320, 3840x2160 and
1920x1080: two warm-up runs, then N runs (20), each between two CUDA events on the current stream
after a kernel that reads a buffer of 3x the L2 size (so no run finds its input in L2, as in the
benchmark); the figure is the median. Prints one line per measurement:

    torch op=equalize:rgb format=rgb8 size=7680x4320 ms=2.812 min_ms=2.790 runs=20 ...

and, given the benchmark's --csv of the same run, tessera's fastest checked `equalize:rgb` and
`equalize` rows of the same size and torchvision's time over theirs (`vs_equalize:rgb=26.1x`).
--csv FILE appends rows in the benchmark's CSV columns (variant `torchvision`, kind `vendor`,
state `unchecked`: torchvision's LUT follows PIL's formula, not tessera's, so the images are
not compared); --md FILE appends a section to the benchmark's .md. Without torch, torchvision or
a CUDA device it says so and exits 0: the benchmark does not depend on it.

    tools/bench_torch.py [--sizes 8k,4k,1080p] [--runs 20] [--csv FILE] [--md FILE]
"""
import argparse
import csv
import os
import statistics
import sys

SIZES = {"8k": (7680, 4320), "4k": (3840, 2160), "1080p": (1920, 1080)}
OURS = ("equalize:rgb", "equalize")  # tessera's ops that torchvision's equalize is compared with
CSV_DEVICE_COLUMNS = ["device", "cc", "sms", "driver", "runtime", "sm_mhz", "mem_mhz", "bus_bits",
                      "l2_mb", "date"]


def parse_size(text):
    if text in SIZES:
        return SIZES[text]
    w, _, h = text.partition("x")
    return int(w), int(h)


def time_equalize(torch, equalize, width, height, runs, flush):
    """Median and minimum ms of `runs` timed calls, each after an L2 flush."""
    gen = torch.Generator(device="cuda").manual_seed(width * 31 + height)
    img = torch.randint(0, 256, (3, height, width), dtype=torch.uint8, device="cuda", generator=gen)
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    times = []
    for i in range(runs + 2):  # the first two runs are the warm-up
        flush.sum()  # reads 3x L2: the input is not in L2 when the timing starts
        start.record()
        out = equalize(img)
        stop.record()
        stop.synchronize()
        if i >= 2:
            times.append(start.elapsed_time(stop))
    if out.shape != img.shape or out.dtype != torch.uint8:
        raise RuntimeError("equalize returned %s %s" % (tuple(out.shape), out.dtype))
    return statistics.median(times), min(times)


def read_csv(path):
    if not path or not os.path.exists(path):
        return [], []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        return list(reader), reader.fieldnames or []


def best_ours(rows, op, width, height):
    """tessera's fastest checked GPU row of op on RGB8 at this size, or None."""
    mine = [r for r in rows if r.get("op") == op and r.get("format") == "rgb8"
            and r.get("width") == str(width) and r.get("height") == str(height)
            and r.get("kind") == "gpu" and r.get("state") == "ok" and r.get("ms")]
    return min(mine, key=lambda r: float(r["ms"])) if mine else None


def group_row(rows, width, height, variant):
    for r in rows:
        if (r.get("op") == "equalize:rgb" and r.get("format") == "rgb8" and r.get("width") == str(width)
                and r.get("height") == str(height) and r.get("variant") == variant):
            return r
    return None


def append_csv(path, rows, fields, results, note):
    """One row per result in the benchmark's columns; the device columns copied from its rows."""
    if not fields:
        print("bench_torch: %s has no benchmark rows: CSV not appended" % path, file=sys.stderr)
        return
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        for (width, height), (ms, min_ms, runs) in results:
            nbytes = 2 * 3 * width * height  # input read once, output written once
            naive = group_row(rows, width, height, "naive")
            floor = next((r.get("floor_ms") for r in rows if r.get("op") == "equalize:rgb"
                          and r.get("format") == "rgb8" and r.get("width") == str(width)
                          and r.get("height") == str(height) and r.get("floor_ms")), "")
            row = {k: (rows[0].get(k, "") if rows else "") for k in CSV_DEVICE_COLUMNS}
            row.update({
                "op": "equalize:rgb", "format": "rgb8", "width": width, "height": height,
                "variant": "torchvision", "param": 0, "kind": "vendor", "runs": runs,
                "ms": "%.6f" % ms, "min_ms": "%.6f" % min_ms, "bytes": nbytes,
                "gbps": "%.2f" % (nbytes / ms / 1e6), "tflops": "",
                "speedup_vs_naive": "%.3f" % (float(naive["ms"]) / ms) if naive and naive.get("ms") else "",
                "floor_ms": floor, "copy_pct": "%.1f" % (100 * float(floor) / ms) if floor else "",
                "state": "unchecked",
                "check": "not compared: torchvision's LUT (PIL's formula) differs from tessera's",
                "note": note})
            w.writerow(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="8k,4k,1080p")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--csv", help="the benchmark's CSV of the same run: compare, append rows")
    ap.add_argument("--md", help="the benchmark's .md: append a section")
    args = ap.parse_args()
    try:
        import torch
        import torchvision
        from torchvision.transforms.v2.functional import equalize
    except ImportError as e:
        print("bench_torch: skipped: %s" % e)
        return 0
    if not torch.cuda.is_available():
        print("bench_torch: skipped: torch sees no CUDA device")
        return 0
    props = torch.cuda.get_device_properties(0)
    l2 = getattr(props, "L2_cache_size", 0) or 64 << 20
    flush = torch.full((3 * l2 // 4,), 0x5A5A5A5A, dtype=torch.int32, device="cuda")
    note = "torch %s, torchvision %s: transforms.v2.functional.equalize on a uint8 CHW tensor" % (
        torch.__version__, torchvision.__version__)
    rows, fields = read_csv(args.csv)
    results, lines = [], []
    for text in args.sizes.split(","):
        width, height = parse_size(text.strip())
        ms, min_ms = time_equalize(torch, equalize, width, height, args.runs, flush)
        results.append(((width, height), (ms, min_ms, args.runs)))
        line = "torch op=equalize:rgb format=rgb8 size=%dx%d ms=%.4f min_ms=%.4f runs=%d" % (
            width, height, ms, min_ms, args.runs)
        cmp = []
        for op in OURS:
            r = best_ours(rows, op, width, height)
            if r:
                line += " %s=%s:%.4f vs_%s=%.1fx" % (op, r["variant"], float(r["ms"]), op, ms / float(r["ms"]))
                cmp.append("%s `%s` %.4f ms: %.1fx" % (op, r["variant"], float(r["ms"]), ms / float(r["ms"])))
        print(line)
        lines.append("| %dx%d | %.4f | %.4f | %s |" % (width, height, ms, min_ms, "; ".join(cmp) or "-"))
    print("torch device=%s %s" % (props.name.replace(" ", "_"), note.replace(" ", "_")))
    if args.csv:
        append_csv(args.csv, rows, fields, results, note)
    if args.md:
        with open(args.md, "a") as f:
            f.write("\n## torchvision (tools/bench_torch.py, same run)\n\n"
                    "%s; %s; RGB8 random input, median of %d runs after two warm-up runs, CUDA events, "
                    "L2 flushed before each run. Ratio: torchvision's time over tessera's fastest "
                    "checked variant of the op (`equalize:rgb` equalizes each channel, as "
                    "torchvision does; `equalize` equalizes luma only).\n\n"
                    "| size | torchvision ms | min ms | tessera (best variant, ms, torchvision / it) |\n"
                    "|---|--:|--:|---|\n%s\n" % (props.name, note, args.runs, "\n".join(lines)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
