"""tests/photos.py - photos end to end: EXIF orientation against Pillow's ImageOps.exif_transpose,
ICC and EXIF carried through, --strip, WebP and TIFF read against Pillow, WebP written, formats
named, animated GIF and WebP notices. Every input is made here with Pillow.
Usage: /usr/bin/python3 tests/photos.py build/tessera. Ends with "N passed, N failed, N skipped".
TESSERA_PHOTOS_BACKEND=gpu runs every conversion with --backend gpu (the orientation then runs on
the GPU's geometry kernels; the results must be the same).
"""
import io
import os
import random
import struct
import subprocess
import sys
import tempfile

TESSERA = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/tessera")
BACKEND = os.environ.get("TESSERA_PHOTOS_BACKEND", "cpu")
passed = failed = skipped = 0


def ok(name):
    global passed
    passed += 1
    print("ok   " + name)


def bad(name, why=""):
    global failed
    failed += 1
    print("FAIL " + name + (": " + why if why else ""))


def check(name, cond, why=""):
    ok(name) if cond else bad(name, why)


try:
    from PIL import Image, ImageOps, ImageCms, features
except ImportError:
    print("skip photos: Pillow is not installed (Debian: python3-pil; run with /usr/bin/python3)")
    print("0 passed, 0 failed, 1 skipped")
    sys.exit(0)

T = tempfile.mkdtemp(prefix="tessera-photos.")


def run(*args):
    p = subprocess.run([TESSERA, "--headless", "-q", "--force", "--backend", BACKEND] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def path(name):
    return os.path.join(T, name)


def pattern(w, h, mode="RGB", seed=1):
    """An image with no symmetry: every orientation of it differs."""
    rnd = random.Random(seed)
    im = Image.new(mode, (w, h))
    bands = len(im.getbands())
    px = []
    for y in range(h):
        for x in range(w):
            v = [(x * 255 // max(w - 1, 1)), (y * 255 // max(h - 1, 1)), rnd.randrange(256),
                 200 - (x + y) % 50]
            px.append(tuple(v[:bands]) if bands > 1 else v[0])
    im.putdata(px)
    return im


def exif_bytes(orientation):
    e = Image.Exif()
    e[0x0112] = orientation
    e[0x010F] = "tessera-test-camera"  # Make: should travel with the block
    return e.tobytes()


def same(a, b):
    return a.size == b.size and a.mode == b.mode and a.tobytes() == b.tobytes()


def mean_diff(a, b):
    if a.size != b.size or a.mode != b.mode:
        return 999
    return sum(abs(x - y) for x, y in zip(a.tobytes(), b.tobytes())) / len(a.tobytes())


def max_diff(a, b):
    if a.size != b.size or a.mode != b.mode:
        return 999
    return max(abs(x - y) for x, y in zip(a.tobytes(), b.tobytes()))


def orientation_of(p):
    with Image.open(p) as im:
        return im.getexif().get(0x0112)


# ------------------------------------------------------------------ orientation (all 8, JPEG + PNG)
base = pattern(24, 16)
for o in range(1, 9):
    # PNG with an eXIf chunk: lossless, so the oracle is exact
    src = path("o%d.png" % o)
    base.save(src, exif=exif_bytes(o))
    out = path("o%d_out.png" % o)
    rc, msg = run("-o", out, src)
    if rc != 0:
        bad("PNG orientation %d converts" % o, msg.strip())
        continue
    want = ImageOps.exif_transpose(Image.open(src)).convert("RGB")
    got = Image.open(out).convert("RGB")
    check("PNG eXIf orientation %d upright as Pillow's exif_transpose" % o, same(got, want),
          "size %s vs %s" % (got.size, want.size))
    check("PNG orientation %d written as 1" % o, orientation_of(out) in (1, None) and
          (o == 1 or orientation_of(out) == 1), "reads %s" % orientation_of(out))
    # JPEG: both sides decode the same file; a wrong turn differs by far more than the tolerance
    src = path("o%d.jpg" % o)
    base.resize((48, 32)).save(src, quality=95, exif=exif_bytes(o))
    out = path("o%d_jpg.png" % o)
    rc, msg = run("-o", out, src)
    if rc != 0:
        bad("JPEG orientation %d converts" % o, msg.strip())
        continue
    want = ImageOps.exif_transpose(Image.open(src)).convert("RGB")
    got = Image.open(out).convert("RGB")
    d = max_diff(got, want)
    check("JPEG APP1 orientation %d upright as Pillow's exif_transpose" % o, d <= 4,
          "max diff %s" % d)
    # JPEG -> JPEG keeps EXIF (Make) with orientation 1
    out = path("o%d_out.jpg" % o)
    rc, msg = run("-o", out, src)
    e = Image.open(out).getexif() if rc == 0 else {}
    check("JPEG->JPEG orientation %d: EXIF kept, orientation 1" % o,
          rc == 0 and e.get(0x0112) == 1 and e.get(0x010F) == "tessera-test-camera",
          "rc %d %s" % (rc, dict(e)))

# --no-auto-orient: stored pixels, orientation kept
src = path("o6.png")
out = path("o6_keep.png")
rc, msg = run("--no-auto-orient", "-o", out, src)
check("--no-auto-orient keeps the stored pixels and the tag",
      rc == 0 and same(Image.open(out).convert("RGB"), base) and orientation_of(out) == 6, msg)

# user chain after the orientation: rotate:90 on an orientation-6 image = Pillow's transpose, then
# a clockwise turn
out = path("o6_rot.png")
rc, msg = run("--ops", "rotate:90", "-o", out, src)
want = ImageOps.exif_transpose(Image.open(src)).transpose(Image.Transpose.ROTATE_270)
check("orientation applied before the user's chain",
      rc == 0 and same(Image.open(out).convert("RGB"), want.convert("RGB")), msg)

# ------------------------------------------------------------------ ICC profiles
srgb = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
# A profile over one APP2 segment (65519 bytes of payload): tests the multi-segment chunking.
big = srgb + bytes(random.Random(2).randrange(256) for _ in range(150000))
base.save(path("icc.jpg"), quality=90, icc_profile=big, exif=exif_bytes(6))
base.save(path("icc.png"), icc_profile=srgb)
for src, out, prof, name in [("icc.jpg", "icc_out.jpg", big, "JPEG->JPEG (3 APP2 segments)"),
                             ("icc.jpg", "icc_out.png", big, "JPEG->PNG"),
                             ("icc.png", "icc_out.webp", srgb, "PNG->WebP")]:
    rc, msg = run("-o", path(out), path(src))
    got = Image.open(path(out)).info.get("icc_profile") if rc == 0 else None
    check("ICC profile byte for byte through " + name, got == prof,
          "rc %d %s, %s bytes" % (rc, msg.strip(), len(got) if got else None))
rc, msg = run("-o", path("icc_out.webp.png"), path("icc_out.webp"))
check("ICC profile read from WebP (WebP->PNG)",
      rc == 0 and Image.open(path("icc_out.webp.png")).info.get("icc_profile") == srgb, msg)
rc, msg = run("-o", path("icc_exif.webp"), path("icc.jpg"))
if rc == 0:
    im = Image.open(path("icc_exif.webp"))
    check("JPEG->WebP carries EXIF with orientation 1",
          im.getexif().get(0x0112) == 1 and im.getexif().get(0x010F) == "tessera-test-camera")
else:
    bad("JPEG->WebP", msg)

# --strip
for out in ["strip.jpg", "strip.png", "strip.webp"]:
    rc, msg = run("--strip", "-o", path(out), path("icc.jpg"))
    im = Image.open(path(out)) if rc == 0 else None
    check("--strip leaves no metadata in " + out.split(".")[1],
          im is not None and "icc_profile" not in im.info and "exif" not in im.info and
          not im.getexif(), msg)
    if im is not None:
        check("--strip still turns the pixels upright (" + out.split(".")[1] + ")",
              im.size == (16, 24), str(im.size))

# ------------------------------------------------------------------ WebP read
if features.check("webp"):
    for mode in ["RGB", "RGBA"]:
        im = pattern(33, 17, mode, seed=3)
        im.save(path("ll_%s.webp" % mode), lossless=True)
        rc, msg = run("-o", path("ll_%s.png" % mode), path("ll_%s.webp" % mode))
        check("WebP lossless %s read pixel-exact" % mode,
              rc == 0 and same(Image.open(path("ll_%s.png" % mode)), im), msg)
    im = pattern(40, 30, "RGB", seed=4)
    im.save(path("lossy.webp"), quality=80)
    rc, msg = run("-o", path("lossy.png"), path("lossy.webp"))
    d = max_diff(Image.open(path("lossy.png")).convert("RGB"),
                 Image.open(path("lossy.webp")).convert("RGB")) if rc == 0 else 999
    check("WebP lossy read as Pillow's libwebp decodes it", d <= 2, "max diff %s %s" % (d, msg))
    # WebP write: lossless round trip, lossy within reason
    rc, msg = run("--format", "webp", "--lossless", "-o", path("w_ll.webp"), path("ll_RGBA.png"))
    check("--format webp --lossless writes pixel-exact WebP",
          rc == 0 and same(Image.open(path("w_ll.webp")), Image.open(path("ll_RGBA.png"))), msg)
    rc, msg = run("--format", "webp", "--quality", "85", "-o", path("w_lossy.webp"),
                  path("ll_RGB.png"))
    d = mean_diff(Image.open(path("w_lossy.webp")).convert("RGB"),
                  Image.open(path("ll_RGB.png"))) if rc == 0 else 999
    # the pattern's third channel is noise, which lossy coding smooths: a mean, not a maximum
    check("--format webp --quality 85 writes a WebP close to the input", d <= 40,
          "mean diff %s %s" % (d, msg))
    # the quality reaches the encoder: 10 gives a smaller file than 95
    sizes = []
    for q in ["10", "95"]:
        rc, msg = run("--format", "webp", "--quality", q, "-o", path("w_q%s.webp" % q),
                      path("ll_RGB.png"))
        sizes.append(os.path.getsize(path("w_q%s.webp" % q)) if rc == 0 else 0)
    check("--quality reaches the WebP encoder", 0 < sizes[0] < sizes[1], str(sizes))
    # animation: first frame, with a notice naming the frame count
    frames = [Image.new("RGB", (20, 10), c) for c in [(255, 0, 0), (0, 255, 0), (0, 0, 255)]]
    frames[0].save(path("anim.webp"), save_all=True, append_images=frames[1:], lossless=True,
                   duration=100)
    p = subprocess.run([TESSERA, "--headless", "--force", "--backend", BACKEND, "-o",
                        path("anim.png"), path("anim.webp")], capture_output=True, text=True)
    check("animated WebP: first frame, notice names 3 frames",
          p.returncode == 0 and "first of 3 frames" in p.stdout + p.stderr and
          Image.open(path("anim.png")).convert("RGB").getpixel((5, 5)) == (255, 0, 0),
          p.stdout + p.stderr)
else:
    skipped += 1
    print("skip WebP: Pillow was built without WebP")

# ------------------------------------------------------------------ TIFF read
tiffs = [("RGB", None), ("RGBA", None), ("L", None), ("LA", None), ("RGB", "tiff_lzw"),
         ("RGB", "tiff_adobe_deflate"), ("L", "packbits"), ("I;16", None), ("I;16", "tiff_lzw")]
for mode, comp in tiffs:
    if mode == "I;16":
        im = Image.new("I;16", (31, 9))
        im.putdata([(x * 2113 + y * 7001) % 65536 for y in range(9) for x in range(31)])
    elif mode == "LA":
        im = pattern(31, 9, "RGBA", seed=5).convert("LA")
    else:
        im = pattern(31, 9, mode, seed=5)
    name = "t_%s_%s" % (mode.replace(";", ""), comp or "raw")
    kw = {"compression": comp} if comp else {}
    im.save(path(name + ".tif"), **kw)
    rc, msg = run("-o", path(name + ".png"), path(name + ".tif"))
    got = Image.open(path(name + ".png")) if rc == 0 else None
    if got is not None and mode == "I;16":
        ok_ = got.mode in ("I;16", "I") and list(got.getdata()) == list(im.getdata())
    else:
        ok_ = got is not None and same(got, im)
    check("TIFF %s %s read pixel-exact" % (mode, comp or "uncompressed"), ok_,
          msg.strip() or (got.mode if got else ""))
# libtiff's RGBA path: palette and JPEG-in-TIFF (YCbCr), against Pillow's own decode
pal = pattern(31, 9, "RGB", seed=8).convert("P")
pal.save(path("t_pal.tif"))
rc, msg = run("-o", path("t_pal.png"), path("t_pal.tif"))
check("TIFF palette read as RGB", rc == 0 and same(Image.open(path("t_pal.png")), pal.convert("RGB")),
      msg)
pattern(32, 16, "RGB", seed=8).save(path("t_jpeg.tif"), compression="jpeg")
rc, msg = run("-o", path("t_jpeg.png"), path("t_jpeg.tif"))
d = max_diff(Image.open(path("t_jpeg.png")).convert("RGB"),
             Image.open(path("t_jpeg.tif")).convert("RGB")) if rc == 0 else 999
check("TIFF with JPEG compression read as Pillow reads it", d <= 8, "max diff %s %s" % (d, msg))
# tiled (libtiff writer through Pillow: tile size from the 'tile' keyword is not exposed in 9.4;
# strips of 1 row exercise the strip loop instead)
im = pattern(40, 23, "RGB", seed=6)
im.save(path("t_rows.tif"), compression="tiff_lzw", strip_size=40 * 3)
rc, msg = run("-o", path("t_rows.png"), path("t_rows.tif"))
check("TIFF with one-row strips read pixel-exact",
      rc == 0 and same(Image.open(path("t_rows.png")), im), msg)


def raw_tiff(w, h, spp, bps, samples, tile=None, be=False):
    """An uncompressed TIFF written by hand (Pillow 9.4 writes no tiles and no 16-bit RGB):
    interleaved samples, in one strip or in tile x tile tiles (edge tiles padded)."""
    e = ">" if be else "<"
    size = bps // 8

    def pack(vals):
        return struct.pack(e + ("H" if size == 2 else "B") * len(vals), *vals)

    blocks = []
    if tile:
        for ty in range(0, h, tile):
            for tx in range(0, w, tile):
                vals = []
                for y in range(ty, ty + tile):
                    for x in range(tx, tx + tile):
                        i = (y * w + x) * spp
                        vals += samples[i:i + spp] if x < w and y < h else [0] * spp
                blocks.append(pack(vals))
    else:
        blocks.append(pack(samples))
    data_off = 8
    offs, pos = [], data_off
    for b_ in blocks:
        offs.append(pos)
        pos += len(b_)
    extra = []  # out-of-line arrays: (tag placeholder index, bytes)
    entries = [(256, 4, [w]), (257, 4, [h]), (258, 3, [bps] * spp), (259, 3, [1]),
               (262, 3, [2 if spp >= 3 else 1]), (277, 3, [spp]), (284, 3, [1])]
    if spp in (2, 4):
        entries.append((338, 3, [2]))  # unassociated alpha
    if tile:
        entries += [(322, 4, [tile]), (323, 4, [tile]), (324, 4, offs),
                    (325, 4, [len(b_) for b_ in blocks])]
    else:
        entries += [(273, 4, offs), (278, 4, [h]), (279, 4, [len(blocks[0])])]
    entries.sort()
    ifd_off = pos + (pos & 1)
    ool = ifd_off + 2 + 12 * len(entries) + 4
    ifd, tail = b"", b""
    for tag, typ, vals in entries:
        fmt = "H" if typ == 3 else "I"
        body = struct.pack(e + fmt * len(vals), *vals)
        if len(body) <= 4:
            ifd += struct.pack(e + "HHI", tag, typ, len(vals)) + body.ljust(4, b"\0")
        else:
            ifd += struct.pack(e + "HHII", tag, typ, len(vals), ool + len(tail))
            tail += body
    head = (b"MM\0*" if be else b"II*\0") + struct.pack(e + "I", ifd_off)
    out = head + b"".join(blocks)
    out += b"\0" * (ifd_off - len(out))
    return out + struct.pack(e + "H", len(entries)) + ifd + struct.pack(e + "I", 0) + tail


rnd = random.Random(9)
for name, w, h, spp, bps, tile, be in [("tiled RGB 8-bit", 37, 21, 3, 8, 16, False),
                                       ("tiled RGBA 8-bit", 20, 33, 4, 8, 16, True),
                                       ("tiled gray 16-bit", 19, 17, 1, 16, 16, False),
                                       ("strip RGB 16-bit big-endian", 13, 7, 3, 16, None, True),
                                       ("tiled RGBA 16-bit", 17, 18, 4, 16, 16, False)]:
    top = 255 if bps == 8 else 65535
    samples = [rnd.randrange(top + 1) for _ in range(w * h * spp)]
    f = path("hand.tif")
    open(f, "wb").write(raw_tiff(w, h, spp, bps, samples, tile, be))
    out = path("hand.pam.ppm" if spp == 3 else "hand.pgm")
    if spp in (2, 4):  # alpha: check through PNG (8-bit) or the PNM of the colour part (16-bit)
        out = path("hand.png")
    rc, msg = run("-o", out, f)
    if rc != 0:
        bad("TIFF %s read" % name, msg.strip())
        continue
    if out.endswith(".png"):
        got = Image.open(out)
        if bps == 8:
            ok_ = same(got, Image.frombytes("RGBA", (w, h), bytes(samples)))
        else:  # Pillow reads RGBA 16-bit PNG as 8-bit: compare the high bytes
            want = bytes(v >> 8 for v in samples)
            ok_ = got.size == (w, h) and got.mode == "RGBA" and \
                max(abs(a - b_) for a, b_ in zip(got.tobytes(), want)) <= 1
    else:
        raw = open(out, "rb").read()
        # binary PNM: header of three lines after the magic, then big-endian samples
        body = raw.split(b"\n", 3)[3]
        vals = list(struct.unpack(">%dH" % (len(body) // 2), body)) if bps == 16 else list(body)
        ok_ = vals == samples
    check("TIFF %s read sample-exact" % name, ok_)
im = pattern(20, 12, "RGB", seed=7)
im.save(path("t_o6.tif"), tiffinfo={0x0112: 6})
rc, msg = run("-o", path("t_o6.png"), path("t_o6.tif"))
check("TIFF Orientation tag 6 applied",
      rc == 0 and same(Image.open(path("t_o6.png")), im.transpose(Image.Transpose.ROTATE_270)),
      msg)
im.save(path("t_icc.tif"), icc_profile=srgb)
rc, msg = run("-o", path("t_icc.png"), path("t_icc.tif"))
check("TIFF ICC profile carried to PNG",
      rc == 0 and Image.open(path("t_icc.png")).info.get("icc_profile") == srgb, msg)
data = open(path("t_RGB_raw.tif"), "rb").read()
open(path("t_cut.tif"), "wb").write(data[: len(data) // 2])
rc, msg = run("-o", path("t_cut.png"), path("t_cut.tif"))
check("truncated TIFF: one-line error, exit 1",
      rc == 1 and "TIFF" in msg and msg.strip().count("\n") == 0, msg)

# ------------------------------------------------------------------ formats named, GIF, gray JPEG
# HEIC, AVIF and JPEG XL are read (tests/test_formats.c); a broken one is named in its one error
# line ("corrupt HEIC (...)", "truncated JPEG XL", or "... not supported" in a build without the
# library), as JPEG 2000, which is not read, is.
for name, head in [("HEIC", b"\0\0\0\x18ftypheic\0\0\0\0mif1heic"),
                   ("AVIF", b"\0\0\0\x1cftypavif\0\0\0\0avifmif1miaf"),
                   ("JPEG XL", b"\xff\x0a\xfa\x7f\x01\x90\x08"),
                   ("JPEG XL", b"\0\0\0\x0cJXL \r\n\x87\n\0\0\0\x14ftypjxl "),
                   ("JPEG 2000", b"\0\0\0\x0cjP  \r\n\x87\n")]:
    ext = {"HEIC": "heic", "AVIF": "avif", "JPEG XL": "jxl", "JPEG 2000": "jp2"}[name]
    f = path("x." + ext)
    open(f, "wb").write(head + bytes(64))
    rc, msg = run("-o", T, f)
    check("%s named in the error, no 'writing PNG' notice before it" % name,
          rc == 1 and name in msg and msg.strip().count("\n") == 0 and "writing PNG" not in msg
          and (name != "JPEG 2000" or "JPEG 2000 is not supported" in msg), msg)
frames = [Image.new("RGB", (16, 8), (40 * i, 255 - 40 * i, 7 * i)) for i in range(5)]  # distinct: newer Pillow merges equal frames
frames[0].save(path("anim.gif"), save_all=True, append_images=frames[1:], duration=50)
p = subprocess.run([TESSERA, "--headless", "--force", "--backend", BACKEND, "-o", path("gif.png"),
                    path("anim.gif")], capture_output=True, text=True)
check("animated GIF: notice names 5 frames",
      p.returncode == 0 and "first of 5 frames" in p.stdout + p.stderr, p.stdout + p.stderr)
pattern(20, 10, "L").save(path("gray.png"))
rc, msg = run("-o", path("gray.jpg"), path("gray.png"))
check("gray image written as a 1-component JPEG",
      rc == 0 and Image.open(path("gray.jpg")).mode == "L", msg)

# -r finds WebP and TIFF in subfolders
os.makedirs(path("tree/sub/deeper"))
pattern(6, 4).save(path("tree/sub/a.webp"), lossless=True)
pattern(6, 4).save(path("tree/sub/deeper/b.tif"))
os.makedirs(path("tree_out"))
rc, msg = run("-r", "-o", path("tree_out"), path("tree"))
found = sorted(f for _, _, fs in os.walk(path("tree_out")) for f in fs)
check("-r converts a WebP and a TIFF found in subfolders", rc == 0 and len(found) == 2,
      "%s %s" % (found, msg))

subprocess.run(["rm", "-rf", T])
print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
sys.exit(1 if failed else 0)
