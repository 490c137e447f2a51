#!/usr/bin/env python3
"""bench_batch_corpus.py - the two JPEG corpora of `make bench-batch`.

  shipped/  the photos of Debian's lomiri-wallpapers-16.04 package (bookworm, 20.04.0-2;
            /usr/share/backgrounds, 15 photos, 1.5-15.9 MP, 8 MP average, 12 of them progressive,
            licences CC-BY-4.0 / CC-BY-SA-4.0 as its copyright file says), byte for byte;
  camera/   the same photos re-encoded the way cameras write: baseline, 4:2:0, quality 92, with
            an EXIF block (Make, Model, DateTime, Orientation 1), by Pillow (libjpeg-turbo).

Usage: bench_batch_corpus.py DEB_OR_DIR OUTDIR
DEB_OR_DIR is the .deb (`apt-get download lomiri-wallpapers-16.04`) or a directory of JPEGs.
"""
import os
import shutil
import subprocess
import sys
import tempfile

from PIL import Image


def jpegs(d):
    out = []
    for root, _, files in os.walk(d):
        out += [os.path.join(root, f) for f in files if f.lower().endswith((".jpg", ".jpeg"))]
    return sorted(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    src, out = sys.argv[1], sys.argv[2]
    tmp = None
    if src.endswith(".deb"):
        tmp = tempfile.mkdtemp()
        subprocess.run(["dpkg-deb", "-x", src, tmp], check=True)
        src = tmp
    files = jpegs(src)
    if not files:
        sys.exit(f"bench_batch_corpus: no JPEG under {src}")
    shipped, camera = os.path.join(out, "shipped"), os.path.join(out, "camera")
    os.makedirs(shipped, exist_ok=True)
    os.makedirs(camera, exist_ok=True)
    total = [0, 0]
    for f in files:
        name = os.path.basename(f)
        shutil.copyfile(f, os.path.join(shipped, name))
        im = Image.open(f)
        im.load()
        exif = Image.Exif()
        exif[0x010F] = "tessera"            # Make
        exif[0x0110] = "bench camera"       # Model
        exif[0x0132] = "2026:11:24 00:00:00"  # DateTime
        exif[0x0112] = 1                    # Orientation: as stored
        dst = os.path.join(camera, name)
        im.convert("RGB").save(dst, "JPEG", quality=92, subsampling=2, progressive=False,
                               optimize=False, exif=exif.tobytes())
        total[0] += os.path.getsize(f)
        total[1] += os.path.getsize(dst)
    print(f"bench_batch_corpus: {len(files)} photos: shipped {total[0] / 2**20:.1f} MiB, "
          f"camera {total[1] / 2**20:.1f} MiB -> {out}")
    if tmp:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
