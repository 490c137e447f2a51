#!/usr/bin/env python3
"""tools/ray_convert.py - convert a folder or a list of images with Ray Data and tessera.

    python3 tools/ray_convert.py -o OUT --ops gauss:5,equalize [--actors N] PHOTOS_DIR
    python3 tools/ray_convert.py -o OUT --list paths.txt --root /shared/photos
    python3 tools/ray_convert.py --address auto ...    (a running cluster; default: a local Ray)

A dataset of paths (relative to one root) goes through `map_batches` with an actor pool. Each
actor keeps one warm `tessera --headless --files-from - --jsonl` process for its whole life: a
batch of paths is written to its stdin and as many JSON records are read back from its stdout,
so the start-up (CUDA context, nvJPEG handles) is paid once per actor, not once per file or per
batch. On a cluster with GPUs every actor asks Ray for one (`num_gpus=1`: Ray sets
CUDA_VISIBLE_DEVICES, so each process sees its own); without GPUs the actors run the CPU backend.

The result is a dataset of tessera's records (input, output, status, error, ms, device), one per
path; `--jsonl FILE` writes it, and the summary goes to stderr. Outputs mirror the paths under
-o OUT, so the folder equals what `tessera --headless -r -o OUT ROOT` writes, byte for byte.
The root, OUT and the tessera binary must be at the same paths on every node (a shared file
system). Exit status: 0 every file converted, 1 some failed, 2 usage error.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# The suffixes tessera reads (its codec table); other files under a folder are left out, as
# `tessera -r` leaves them out.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".jpe", ".bmp", ".tga", ".gif", ".psd", ".pnm",
                  ".ppm", ".pgm", ".pbm", ".pam", ".webp", ".tif", ".tiff", ".hdr", ".pic")


class TesseraWorker:
    """One warm tessera process; each call converts a batch of paths and returns its records."""

    def __init__(self, tessera, root, argv, env=None):
        self.argv = [tessera, "--headless", "--files-from", "-", "--jsonl"] + argv
        self.root = root
        self.log = tempfile.NamedTemporaryFile(prefix="tessera-actor-", suffix=".log",
                                               delete=False)
        self.proc = subprocess.Popen(self.argv, cwd=root, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.log,
                                     env=dict(os.environ, **(env or {})))

    def _stderr_tail(self):
        self.log.flush()
        with open(self.log.name, "rb") as f:
            return f.read()[-2000:].decode("utf-8", "replace")

    def __call__(self, batch):
        paths = [str(p) for p in batch["path"]]
        # a thread writes while this one reads: a large batch never fills both pipes at once
        def feed():
            try:
                for p in paths:
                    self.proc.stdin.write(os.fsencode(p) + b"\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass
        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        recs = {}
        while len(recs) < len(paths):
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("tessera ended (exit %s) after %d of %d records: %s" % (
                    self.proc.poll(), len(recs), len(paths), self._stderr_tail()))
            rec = json.loads(line)
            recs.setdefault(rec["input"], []).append(rec)
        writer.join()
        # the records come as the images finish; give them back in the batch's order (a path
        # listed twice in one batch gets its records in the order they came)
        keys = ("input", "output", "status", "error", "ms", "device")
        out = {k: [] for k in keys + ("worker",)}
        for p in paths:
            rec = recs[p].pop(0)
            for k in keys:
                v = rec.get(k)
                out[k].append("" if v is None and k in ("output", "error", "device") else v)
            out["worker"].append(self.proc.pid) # which warm process did it
        return out

    def __del__(self):
        try:
            self.proc.stdin.close()
            self.proc.wait(timeout=30)
            os.unlink(self.log.name)
        except Exception:
            pass


def list_inputs(args):
    """(root, [paths relative to root]) from the folder/file arguments or --list."""
    if args.list:
        root = os.path.abspath(args.root or ".")
        src = sys.stdin if args.list == "-" else open(args.list, encoding="utf-8",
                                                      errors="surrogateescape")
        paths = [line.rstrip("\n") for line in src if line.strip()]
        return root, paths
    if not args.inputs:
        raise SystemExit("ray_convert: give a folder, files, or --list FILE")
    ins = [os.path.abspath(p) for p in args.inputs]
    for p in ins:
        if not os.path.exists(p):
            raise SystemExit("ray_convert: %s: no such file or folder" % p)
    root = ins[0] if len(ins) == 1 and os.path.isdir(ins[0]) else os.path.commonpath(
        [p if os.path.isdir(p) else os.path.dirname(p) for p in ins])
    paths = []
    for p in ins:
        if os.path.isdir(p):
            for d, subdirs, files in os.walk(p):
                subdirs.sort()
                for f in sorted(files):
                    if f.lower().endswith(IMAGE_SUFFIXES):
                        paths.append(os.path.relpath(os.path.join(d, f), root))
        else:
            paths.append(os.path.relpath(p, root))
    return root, paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*", help="folders (recursive) or image files")
    ap.add_argument("-o", "--output", required=True, help="output folder")
    ap.add_argument("--ops", default="", help="tessera's --ops chain")
    ap.add_argument("--list", help="a file of paths, one a line, relative to --root ('-': stdin)")
    ap.add_argument("--root", help="where --list's paths are relative to (default: here)")
    ap.add_argument("--actors", type=int, default=0,
                    help="actor pool size (default: GPUs, or 2 without GPUs)")
    ap.add_argument("--batch-size", type=int, default=64, help="paths per map_batches call")
    ap.add_argument("--jobs", type=int, default=0,
                    help="tessera -j per actor (default: CPUs per node / actors on the CPU)")
    ap.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto",
                    help="auto: the GPU when the cluster has GPUs, else the CPU backend")
    ap.add_argument("--tessera", default=None, help="the tessera binary (default: build/tessera)")
    ap.add_argument("--address", default=None, help="Ray cluster address (default: a local Ray)")
    ap.add_argument("--jsonl", help="write the records here, one JSON line each")
    ap.add_argument("tessera_args", nargs=argparse.REMAINDER,
                    help="after --: more tessera options (--format jpg --quality 85 --force ...)")
    args = ap.parse_args(argv)
    extra = [a for a in args.tessera_args if a != "--"]
    here = os.path.dirname(os.path.abspath(__file__))
    tessera = os.path.abspath(args.tessera or os.path.join(here, "..", "build", "tessera"))
    if not os.access(tessera, os.X_OK):
        found = shutil.which("tessera")
        if args.tessera or not found:
            raise SystemExit("ray_convert: no tessera binary at %s (--tessera PATH)" % tessera)
        tessera = found
    root, paths = list_inputs(args)
    if not paths:
        raise SystemExit("ray_convert: no images found")

    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError:
        raise SystemExit("ray_convert: needs ray[data] (make engines-deps installs it into "
                         ".deps/venv: run .deps/venv/bin/python tools/ray_convert.py ...)")

    t0 = time.time()
    ray.init(address=args.address, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR", configure_logging=False)
    t_up = time.time()
    res = ray.cluster_resources()
    n_gpu = int(res.get("GPU", 0))
    use_gpu = args.backend == "gpu" or (args.backend == "auto" and n_gpu > 0)
    actors = args.actors or (n_gpu if use_gpu else 2)
    cpus = max(1, int(res.get("CPU", 1)) // actors) if not use_gpu else 1
    jobs = args.jobs or (cpus if not use_gpu else max(1, int(res.get("CPU", 16)) // max(actors, 1)))
    targv = ["-o", os.path.abspath(args.output), "--ops", args.ops, "-j", str(jobs),
             "--backend", "auto" if use_gpu else "cpu"] + extra
    ds = ray.data.from_items([{"path": p} for p in paths],
                             override_num_blocks=max(1, min(len(paths), actors * 4)))
    kw = dict(batch_size=args.batch_size, batch_format="numpy",
              compute=ray.data.ActorPoolStrategy(size=actors),
              fn_constructor_kwargs={"tessera": tessera, "root": root, "argv": targv})
    if use_gpu:
        kw["num_gpus"] = 1
    else:
        kw["num_cpus"] = cpus
    results = ds.map_batches(TesseraWorker, **kw)
    records = results.take_all()
    secs = time.time() - t0
    ray.shutdown()

    if args.jsonl:
        with open(args.jsonl, "w") as f:
            for r in records:
                f.write(json.dumps({k: (v.item() if hasattr(v, "item") else v)
                                    for k, v in r.items()}) + "\n")
    bad = [r for r in records if r["status"] == "error"]
    for r in bad:
        print("ray_convert: %s: %s" % (r["input"], r["error"]), file=sys.stderr)
    counts = {}
    for r in records:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("ray_convert: %d files, %s, %d actors (%s), %.2f s (%.1f files/s; Ray's start %.2f s, "
          "conversion %.2f s)" % (len(records), ", ".join("%d %s" % (n, s) for s, n in
                                                          sorted(counts.items())),
                                  actors, "GPU" if use_gpu else "CPU", secs, len(records) / secs,
                                  t_up - t0, secs - (t_up - t0)), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
