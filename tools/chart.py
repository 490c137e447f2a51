#!/usr/bin/env python3
"""chart.py - draws tessera's speedup ladders from a benchmark CSV (build/bench --csv).

One panel per op, at the largest size measured and in the op's headline format (RGB8 for
convolution and equalization, RGBA8 for geometry, gray16 for histograms): a bar per GPU variant in
table order (naive first), then the vendor baselines, on a time axis (log scale when the times
span more than 30x), each bar labelled with its speedup over naive; the copy floor (a D2D copy of
the same bytes) is the dashed line. Of a swept variant (cluster/1, cluster/2, ...) only the fastest
size is drawn. Rows that failed their check are drawn red and hatched; CPU rows are left out.

    tools/chart.py tools/results/<device>.csv [-o tools/results/<device>.png]

Needs matplotlib (Agg backend, no display). Missing rows or columns leave panels out, never crash.
"""
import argparse
import csv
import math
import os
import sys

HEADLINE_FORMAT = {
    "gauss": "rgb8", "sharpen": "rgb8", "box": "rgb8", "edge": "rgb8", "emboss": "rgb8",
    "equalize": "rgb8",
    "rotate": "rgba8", "transpose": "rgba8", "transverse": "rgba8", "flip": "rgba8",
    "flop": "rgba8",
    "hist": "gray16",
}


def num(text):
    """A float from a CSV field, or None when it is empty or not a number."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def have_matplotlib(who):
    """Whether matplotlib imports; says once, on stderr, why no chart is drawn when it does not."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        print("%s: matplotlib is not installed for %s: no chart drawn" % (who, sys.executable),
              file=sys.stderr)
        return False
    return True


def read_rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def pick_panels(rows):
    """[(op, fmt, width, height, [rows])] in first-seen op order."""
    ops = []
    for r in rows:
        op = r.get("op") or ""
        if op and op not in ops:
            ops.append(op)
    panels = []
    for op in ops:
        mine = [r for r in rows if r.get("op") == op and num(r.get("ms")) and r.get("kind") != "cpu"]
        if not mine:
            continue
        fmts = [r.get("format") for r in mine]
        want = HEADLINE_FORMAT.get(op.split(":")[0])
        fmt = want if want in fmts else max(set(fmts), key=fmts.count)
        mine = [r for r in mine if r.get("format") == fmt]

        def area(r):
            return (num(r.get("width")) or 0) * (num(r.get("height")) or 0)

        big = max(area(r) for r in mine)
        mine = [r for r in mine if area(r) == big]
        panels.append((op, fmt, mine[0].get("width", "?"), mine[0].get("height", "?"), mine))
    return panels


def ladder(rows):
    """Bars in table order; a swept variant keeps only its fastest size."""
    best_sweep = {}
    for r in rows:
        if (num(r.get("param")) or 0) != 0:
            base = (r.get("variant") or "").split("/")[0]
            if base not in best_sweep or num(r["ms"]) < num(best_sweep[base]["ms"]):
                best_sweep[base] = r
    out = []
    for r in rows:
        if (num(r.get("param")) or 0) != 0:
            base = (r.get("variant") or "").split("/")[0]
            if best_sweep.get(base) is r:
                out.append(r)
        else:
            out.append(r)
    return out


def draw(panels, device, date, out_path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if not panels:
        fig, ax = plt.subplots(figsize=(6, 2))
        ax.axis("off")
        ax.text(0.5, 0.5, "no timed rows in the CSV", ha="center", va="center")
        fig.savefig(out_path, dpi=120)
        return
    cols = min(4, len(panels))
    rows_n = (len(panels) + cols - 1) // cols
    fig, axes = plt.subplots(rows_n, cols, figsize=(4.6 * cols, 3.9 * rows_n), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.axis("off")
    for ax, (op, fmt, w, h, rows) in zip(axes.flat, panels):
        bars = ladder(rows)
        ms = [num(r["ms"]) for r in bars]
        labels = [r.get("variant") or "?" for r in bars]
        colors, hatches = [], []
        for r in bars:
            state = r.get("state", "")
            if state == "wrong":
                colors.append("#d62728")
                hatches.append("//")
            elif r.get("kind") == "vendor":
                colors.append("#ff7f0e")
                hatches.append("")
            elif state == "ok":
                colors.append("#1f77b4")
                hatches.append("")
            else:
                colors.append("#9e9e9e")
                hatches.append("..")
        xs = range(len(bars))
        drawn = ax.bar(xs, ms, color=colors)
        for b, hatch in zip(drawn, hatches):
            if hatch:
                b.set_hatch(hatch)
        floors = [num(r.get("floor_ms")) for r in rows if num(r.get("floor_ms"))]
        floor = floors[0] if floors else None
        lo = min(ms + ([floor] if floor else []))
        hi = max(ms + ([floor] if floor else []))
        if lo > 0 and hi / lo > 30:
            ax.set_yscale("log")
        if floor:
            ax.axhline(floor, color="black", linestyle="--", linewidth=1)
            ax.text(len(bars) - 0.5, floor, " copy floor %.3g ms" % floor, va="bottom", ha="right",
                    fontsize=7)
        for x, r, t in zip(xs, bars, ms):
            s = num(r.get("speedup_vs_naive"))
            text = ("%.3gx" % s) if s else ("%.3g ms" % t)
            ax.text(x, t, text, ha="center", va="bottom", fontsize=7)
        ax.set_xticks(list(xs))
        ax.set_xticklabels(labels, rotation=40, ha="right", fontsize=8)
        ax.set_ylabel("ms (median)", fontsize=8)
        ax.tick_params(axis="y", labelsize=7)
        ax.set_title("%s  %s  %sx%s" % (op, fmt, w, h), fontsize=9)
        ax.margins(y=0.15)
    fig.suptitle("tessera: what shared memory buys - %s - %s\n"
                 "blue: variants (labels: speedup over naive), orange: vendor libraries, "
                 "red: failed check, dashed: D2D copy of the same bytes" % (device, date),
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
    fig.savefig(out_path, dpi=120)


def main(argv):
    ap = argparse.ArgumentParser(description="Draw the speedup ladders of a tessera benchmark CSV.")
    ap.add_argument("csv")
    ap.add_argument("-o", "--output", help="PNG to write (default: the CSV's name with .png)")
    args = ap.parse_args(argv)
    out = args.output or os.path.splitext(args.csv)[0] + ".png"
    try:
        rows = read_rows(args.csv)
    except OSError as e:
        print("chart: cannot read %s: %s" % (args.csv, e), file=sys.stderr)
        return 1
    if not have_matplotlib("chart"):
        return 1
    device = rows[0].get("device", "?") if rows else "?"
    date = rows[0].get("date", "?") if rows else "?"
    draw(pick_panels(rows), device, date, out)
    print("chart: wrote %s" % out, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
