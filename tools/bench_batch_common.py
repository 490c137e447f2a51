"""bench_batch_common.py - what the OpenCV and torchvision sides of `make bench-batch` share, so
that both read the same file list, take the same options, write outputs the same way and report
the same stage columns: a difference in the RESULT lines is then a difference of the systems."""
import argparse
import os
import resource

STAGES = ("read", "decode", "ops", "encode", "write")


def images(dirs):
    out = []
    for d in dirs:
        for f in sorted(os.listdir(d)):
            if f.lower().endswith((".jpg", ".jpeg", ".png")):
                out.append(os.path.join(d, f))
    return out


def parser(parallel_opt, default):
    """The options of both sides; parallel_opt is each one's own (--threads or --batch)."""
    ap = argparse.ArgumentParser()
    ap.add_argument(parallel_opt, type=int, default=default)
    ap.add_argument("--format", default="jpg", choices=["jpg", "png"])
    ap.add_argument("--quality", type=int, default=90)
    ap.add_argument("--corpus", default="corpus")
    ap.add_argument("--chain", default="")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("dirs", nargs="+")
    return ap


def totals():
    return {"read": 0.0, "decode": 0.0, "ops": 0.0, "encode": 0.0, "write": 0.0, "mp": 0.0}


def write_out(outdir, src, fmt, data):
    """src's output (its base name, extension fmt) in outdir, via a temp file and a rename."""
    dst = os.path.join(outdir, os.path.splitext(os.path.basename(src))[0] + "." + fmt)
    with open(dst + ".tmp", "wb") as f:
        f.write(data)
    os.replace(dst + ".tmp", dst)


def add_stages(tot, t):
    """t: the six time stamps around the five stages."""
    for k, a, b in zip(STAGES, t, t[1:]):
        tot[k] += b - a


def summary(outdir, tot, n):
    """(output MiB, host peak RSS MiB, the per-image stage columns of the RESULT line)."""
    out_bytes = sum(os.path.getsize(os.path.join(outdir, f)) for f in os.listdir(outdir))
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    stages = " ".join(f"{k}_ms={1e3 * tot[k] / n:.1f}" for k in STAGES)
    return out_bytes / 2**20, rss, stages
