#!/usr/bin/env python3
"""bench_batch_torch.py - torchvision's side of `make bench-batch` on the GPU: files read on the
host, decoded in batches on the GPU (torchvision.io.decode_jpeg(list, device="cuda"); PNG input is
decoded on the host, as torchvision has no GPU PNG decoder, then moved), each image through
gaussian_blur 5x5 (sigma 1.1, as tessera's gauss:5), equalize (torchvision's: per channel),
rot90 clockwise, then encode_jpeg(quality Q) on the GPU (a batched list where torchvision takes
one) or encode_png on the host, and written. Stage times are synchronized wall clock, summed and
divided by the image count; the batch's wall clock starts after one untimed batch. The last line
is the RESULT line tools/bench_batch.sh collects.

Usage: bench_batch_torch.py [--batch B] [--format jpg|png] [--quality Q] [--corpus NAME]
                            [--chain NAME] -o OUTDIR DIR...
"""
import os
import sys
import time

import torch
import torchvision
from torchvision.io import ImageReadMode, decode_image, decode_jpeg, encode_jpeg, encode_png, read_file

try:
    import torchvision.transforms.v2.functional as F
except ImportError:  # older torchvision
    import torchvision.transforms.functional as F

from bench_batch_common import add_stages, images, parser, summary, totals, write_out


def sync():
    torch.cuda.synchronize()
    return time.perf_counter()


def main():
    ap = parser("--batch", 16)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        sys.exit("bench_batch_torch: no CUDA device")
    os.makedirs(a.out, exist_ok=True)
    files = images(a.dirs)
    if not files:
        sys.exit("bench_batch_torch: no images")
    tot = totals()
    batched_encode = [True]

    def encode(xs):
        if a.format == "png":
            return [encode_png(x.cpu(), compression_level=6) for x in xs]
        if batched_encode[0]:
            try:
                return [e.cpu() for e in encode_jpeg(xs, quality=a.quality)]
            except (TypeError, RuntimeError):
                batched_encode[0] = False  # this torchvision encodes one tensor per call
        return [encode_jpeg(x, quality=a.quality).cpu() for x in xs]

    def run(batch):
        t0 = time.perf_counter()
        datas = [read_file(p) for p in batch]
        t1 = sync()
        jpeg = [p.lower().endswith((".jpg", ".jpeg")) for p in batch]
        if all(jpeg):
            imgs = decode_jpeg(datas, mode=ImageReadMode.RGB, device="cuda")
        else:
            imgs = [decode_image(d, mode=ImageReadMode.RGB).cuda() for d in datas]
        t2 = sync()
        outs = []
        for x in imgs:
            x = F.gaussian_blur(x, [5, 5])
            x = F.equalize(x)
            outs.append(torch.rot90(x, k=-1, dims=(1, 2)).contiguous())
        t3 = sync()
        encs = encode(outs)
        t4 = sync()
        for p, e in zip(batch, encs):
            write_out(a.out, p, a.format, e.numpy().tobytes())
        t5 = time.perf_counter()
        add_stages(tot, (t0, t1, t2, t3, t4, t5))
        tot["mp"] += sum(x.shape[1] * x.shape[2] for x in outs) / 1e6

    run(files[: a.batch])  # untimed: CUDA context, nvJPEG handles, kernels
    for k in tot:
        tot[k] = 0.0
    torch.cuda.reset_peak_memory_stats()
    t0 = time.perf_counter()
    for i in range(0, len(files), a.batch):
        run(files[i : i + a.batch])
    wall = sync() - t0
    n = len(files)
    out_mib, rss, stages = summary(a.out, tot, n)
    gpu = torch.cuda.max_memory_reserved() / 2**20
    print(f"RESULT system=torchvision-{torchvision.__version__} corpus={a.corpus} "
          f"chain={a.chain or a.format} threads=1 images={n} seconds={wall:.3f} "
          f"images_per_s={n / wall:.2f} mp_per_s={tot['mp'] / wall:.1f} {stages} "
          f"decode_paths=nvjpeg:{n} host_peak_mib={rss:.0f} gpu_peak_mib={gpu:.0f} "
          f"out_mib={out_mib:.1f} batched_encode={int(batched_encode[0])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
