#!/usr/bin/env python3
"""tests/ray_check.py - tools/ray_convert.py on a local Ray: CPU backend, two actors.

    .deps/venv/bin/python tests/ray_check.py build/tessera     (make engines-check runs it)

Converts a small corpus (nested folders, one broken file) and checks: one record per file, the
broken one an error and the rest ok, both actors used, and the output folder equal byte for byte
to `tessera --headless -r -o` over the same folder. Without ray: "skipped". Ends with the
"N passed, N failed, N skipped" line.
"""
import filecmp
import json
import os
import shutil
import subprocess
import sys
import tempfile

passed = failed = skipped = 0


def ok(name):
    global passed
    passed += 1
    print("ok   ray: " + name)


def bad(name, detail=""):
    global failed
    failed += 1
    print("FAIL ray: " + name)
    for line in detail.strip().splitlines()[-20:]:
        print("     | " + line)


def check(cond, name, detail=""):
    (ok if cond else lambda n: bad(n, detail))(name)


def summary():
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    sys.exit(1 if failed else 0)


def files_under(d):
    out = []
    for base, _, files in os.walk(d):
        out += [os.path.relpath(os.path.join(base, f), d) for f in files]
    return sorted(out)


def main():
    global skipped
    tessera = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/tessera")
    mkimage = os.path.join(os.path.dirname(tessera), "mkimage")
    try:
        import ray  # noqa: F401
        import ray.data  # noqa: F401
    except ImportError:
        skipped += 1
        print("skip ray: tools/ray_convert.py on a local Ray (no ray for %s; make engines-deps "
              "installs it into .deps/venv)" % sys.executable)
        summary()
    here = os.path.dirname(os.path.abspath(__file__))
    tool = os.path.join(here, "..", "tools", "ray_convert.py")
    t = tempfile.mkdtemp(prefix="tessera-ray.")
    try:
        src = os.path.join(t, "in")
        os.makedirs(os.path.join(src, "sub", "deeper"))
        names = []
        for i in range(24):
            sub = ("", "sub", os.path.join("sub", "deeper"))[i % 3]
            name = os.path.join(sub, "img%02d.%s" % (i, "jpg" if i % 2 else "png"))
            subprocess.run([mkimage, str(30 + 5 * i), str(20 + 3 * i), "3", "8", str(700 + i),
                            os.path.join(src, name)], check=True, stdout=subprocess.DEVNULL)
            names.append(name)
        with open(os.path.join(src, "sub", "broken.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n not a png")
        ops = "gauss:3,flip"
        out, ref, jl = os.path.join(t, "out"), os.path.join(t, "ref"), os.path.join(t, "rec.jsonl")
        env = dict(os.environ, RAY_ENABLE_UV_RUN_RUNTIME_ENV="0")
        r = subprocess.run([sys.executable, tool, "--tessera", tessera, "-o", out, "--ops", ops,
                            "--actors", "2", "--backend", "cpu", "--batch-size", "4",
                            "--jsonl", jl, src], capture_output=True, text=True, env=env,
                           timeout=600)
        check(r.returncode == 1, "ray_convert exits 1 with one broken file (exit %d)" % r.returncode,
              r.stderr)
        recs = []
        if os.path.exists(jl):
            with open(jl) as f:
                recs = [json.loads(line) for line in f]
        check(len(recs) == 25, "one record per file (%d of 25)" % len(recs), r.stderr)
        by = {rec["input"]: rec for rec in recs}
        broken = by.get(os.path.join("sub", "broken.png"), {})
        check(broken.get("status") == "error" and broken.get("error"),
              "the broken file is an error record: %s" % broken.get("error"))
        good = [by.get(n, {}) for n in names]
        check(all(g.get("status") == "ok" and g.get("device") == "cpu" and
                  g.get("output") == os.path.join(out, n) for g, n in zip(good, names)),
              "24 ok records, device cpu, outputs mirroring the inputs",
              "\n".join(json.dumps(g) for g in good[:3]))
        workers = {rec.get("worker") for rec in recs}
        check(len(workers) == 2, "both actors' warm processes converted files (%d)" % len(workers))
        print("# " + r.stderr.strip().splitlines()[-1] if r.stderr.strip() else "# (no summary)")
        ref_r = subprocess.run([tessera, "--headless", "-q", "-r", "--backend", "cpu", "-o", ref,
                                "--ops", ops, src], capture_output=True, text=True)
        check(ref_r.returncode == 1, "the one-process run fails the broken file too (exit %d)"
              % ref_r.returncode, ref_r.stderr)
        lo, lr = files_under(out), files_under(ref)
        same = lo == lr and all(filecmp.cmp(os.path.join(out, f), os.path.join(ref, f),
                                            shallow=False) for f in lo)
        check(same and len(lo) == 24,
              "Ray's output equals the one-process run byte for byte (%d files)" % len(lo),
              "ray: %s\nref: %s" % (lo[:5], lr[:5]))
    finally:
        shutil.rmtree(t, ignore_errors=True)
    summary()


if __name__ == "__main__":
    main()
