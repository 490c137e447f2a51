#!/usr/bin/env python3
"""chart_batch.py - draws the batch conversion benchmark (tools/bench_batch.sh's bench_batch.md).

One group of horizontal bars per benchmark row (corpus, chain and image count: camera JPEG->JPEG,
shipped JPEG->JPEG, camera JPEG->PNG, PNG->PNG; a longer run of the same row given in another
file is a group of its own, labelled with its image count), one bar per system: OpenCV,
torchvision, tessera (the whole process, timed from outside) and, hatched and lighter, tessera
without start-up (its first read to its last output). Each bar is labelled with its images/s and
its ratio to OpenCV on the same row. A system that a row did not run is marked "not run", a
failed row "failed". The axis is linear: images/s as measured.

    tools/chart_batch.py OUTDIR/bench_batch.md [more.md ...] [-o bench_batch.png]
        [--title "NVIDIA H100 80GB HBM3, 2026-11-24 13:50 UTC"]

Reads the markdown table that bench_batch.sh writes (columns corpus, chain, system, images/s,
x OpenCV, images/s without start-up, ..., decode paths; the image count is the sum of the decode
path counts). Needs matplotlib (Agg backend, no display). Missing rows, columns or files leave
bars out, never crash; when the same row (corpus, chain, images) is in two files the later wins.
"""
import argparse
import os
import sys

from chart import have_matplotlib, num  # tools/chart.py: the same number parsing and check

CHAIN_NAME = {"jpg2jpg": "JPEG->JPEG", "jpg2png": "JPEG->PNG", "png2png": "PNG->PNG"}
CHAIN_ORDER = ["jpg2jpg", "jpg2png", "png2png"]
CORPUS_ORDER = ["camera", "shipped", "png"]
# (key, legend, colour, hatch, light): the bars of a group, top to bottom
SYSTEMS = [
    ("opencv", "OpenCV (timed loop)", "#ff7f0e", "", False),
    ("torch", "torchvision on the GPU (timed loop)", "#2ca02c", "", False),
    ("tessera", "tessera (whole process)", "#1f77b4", "", False),
    ("tessera_work", "tessera without start-up", "#1f77b4", "//", True),
]


def read_tables(path):
    """The rows of every bench_batch table in a markdown file, as dicts keyed by column name."""
    rows = []
    header = None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|"):
                header = None
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                header = cells if "system" in cells and "images/s" in cells else None
                continue
            if all(set(c) <= set("-: ") for c in cells):
                continue
            rows.append(dict(zip(header, cells)))
    return rows


def images_of(row):
    """The image count: the sum of the decode path counts ('cuda:96,engine:24' -> 120)."""
    total = 0
    for part in (row.get("decode paths") or "").split(","):
        n = num(part.rpartition(":")[2])
        if n is None:
            return None
        total += int(n)
    return total or None


def system_key(name):
    name = (name or "").lower()
    for key in ("opencv", "torch", "tessera"):
        if name.startswith(key):
            return key
    return None


def gather(paths):
    """{(corpus, chain, images): {system key: (images/s or None, failed text or None,
    the table's x OpenCV or None)}}."""
    groups = {}
    for path in paths:
        try:
            rows = read_tables(path)
        except OSError as e:
            print("chart_batch: cannot read %s: %s" % (path, e), file=sys.stderr)
            continue
        if not rows:
            print("chart_batch: no bench_batch table in %s" % path, file=sys.stderr)
        seen = set()
        for r in rows:
            key = system_key(r.get("system"))
            if key is None or not r.get("corpus") or not r.get("chain"):
                continue
            g = (r["corpus"], r["chain"], images_of(r))
            if g in groups and g not in seen:
                print("chart_batch: %s %s (%s images) again in %s: that one is drawn"
                      % (g[0], g[1], g[2] or "?", path), file=sys.stderr)
                groups[g] = {}
            seen.add(g)
            cell = r.get("images/s", "")
            ips = num(cell)
            bars = groups.setdefault(g, {})
            # the table's ratio is computed from unrounded rates: drawn as the table says
            bars[key] = (ips, None if ips is not None else (cell or "no value"),
                         num(r.get("x OpenCV")))
            if key == "tessera" and num(r.get("images/s without start-up")) is not None:
                bars["tessera_work"] = (num(r["images/s without start-up"]), None, None)
    return groups


def order(g):
    corpus, chain, n = g
    rank = lambda v, lst: lst.index(v) if v in lst else len(lst)
    return (rank(chain, CHAIN_ORDER), rank(corpus, CORPUS_ORDER), corpus, chain, n or 0)


def draw(groups, title, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch

    keys = sorted(groups, key=order)
    if not keys:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no bench_batch rows found", ha="center", va="center")
        fig.savefig(out_path, dpi=120)
        return
    per = len(SYSTEMS)
    step = per + 1.2  # a gap between groups
    fig, ax = plt.subplots(figsize=(10, max(3.5, 0.3 * step * len(keys) + 1.5)))
    hi = max([b[0] for g in keys for b in groups[g].values() if b[0] is not None] or [1.0])
    ticks, tick_labels = [], []
    for gi, g in enumerate(keys):
        corpus, chain, n = g
        bars = groups[g]
        base = bars.get("opencv", (None,))[0]
        top = gi * step
        for si, (key, _, colour, hatch, light) in enumerate(SYSTEMS):
            y = top + si
            v, failed, table_ratio = bars.get(key, (None, None, None))
            if v is None:
                text = failed if key in bars else "not run"
                ax.text(hi * 0.005, y, text, va="center", ha="left", fontsize=7,
                        color="#d62728" if key in bars else "#777777")
                continue
            ax.barh(y, v, height=0.8, color=colour, alpha=0.45 if light else 1.0,
                    hatch=hatch or None, edgecolor=colour if hatch else None, linewidth=0)
            label = "%.1f" % v
            ratio = table_ratio or (v / base if base else None)
            if key == "opencv":
                label += "  (1.00x)"
            elif ratio:
                label += "  (%.2fx OpenCV)" % ratio
            ax.text(v + hi * 0.006, y, label, va="center", ha="left", fontsize=7.5)
        ticks.append(top + (per - 1) / 2)
        name = CHAIN_NAME.get(chain, chain)
        if corpus != "png":  # the PNG corpus is the camera photos saved as PNG
            name = corpus + " " + name
        tick_labels.append("%s\n%s images" % (name, n if n else "?"))
    ax.set_yticks(ticks)
    ax.set_yticklabels(tick_labels, fontsize=8.5)
    ax.set_ylim((len(keys) - 1) * step + per - 0.3, -0.7)  # top to bottom, whatever was drawn
    ax.set_xlim(0, hi * 1.28)
    ax.set_xlabel("images/s (higher is better)", fontsize=9)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    handles = [Patch(facecolor=c, alpha=0.45 if light else 1.0, hatch=h or None,
                     edgecolor=c if h else None, label=name)
               for _, name, c, h, light in SYSTEMS]
    ax.legend(handles=handles, fontsize=7.5, loc="lower right", framealpha=0.9,
              edgecolor="#dddddd")
    ax.set_title("tessera batch conversion: gauss:5, equalize, rotate:90"
                 + ("\n" + title if title else ""), fontsize=10)
    fig.text(0.01, 0.005, "OpenCV and torchvision: their timed loops (no interpreter or CUDA "
             "start-up); tessera: the whole process timed from outside; without start-up: its "
             "first read to its last output.", fontsize=6.5, color="#555555")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(out_path, dpi=120)


def main(argv):
    ap = argparse.ArgumentParser(description="Draw images/s per row and system from "
                                 "bench_batch.md tables.")
    ap.add_argument("tables", nargs="+", help="bench_batch.md files (tools/bench_batch.sh)")
    ap.add_argument("-o", "--output", help="PNG to write (default: the first table's name "
                    "with .png)")
    ap.add_argument("--title", default="", help="a second title line: device, date, commit")
    args = ap.parse_args(argv)
    out = args.output or os.path.splitext(args.tables[0])[0] + ".png"
    if not have_matplotlib("chart_batch"):
        return 1
    groups = gather(args.tables)
    draw(groups, args.title, out)
    print("chart_batch: wrote %s (%d rows)" % (out, len(groups)), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
