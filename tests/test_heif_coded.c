/* test_heif_coded.c - the check of the picture sizes inside a HEIF/AVIF file's bitstreams against
 * the container's (app/codec/heif_coded.c), which runs before libheif hands anything to a decoder.
 *
 * Files are built here, box by box: one item coded as HEVC ('hvc1': an SPS in 'hvcC' or in the
 * item's data) or AV1 ('av01': a sequence header in 'av1C' or in the data), its 'ispe', its
 * extents in 'mdat'. Sizes that fit (padding to coding blocks, AV1's bit widths) pass; a coded
 * picture past 2x the image, a second HEVC picture or a fifth AV1 frame in one item, or extents
 * adding up to more than the file, are refused with the reason. Then the real files: the encoders' seeds pass; fuzz_heif's three AVIFs (16x12 by 'ispe', up
 * to 65536x16384 by their sequence header: dav1d allocated 649 MB) are refused by the loader; a
 * 640x480 HEIC and AVIF of heif-enc (x265, aom) load, and are refused once their 'ispe' is made
 * 100x100 (so the real encoders' headers are read, not skipped). */
#include "codec.h"
#include "image_io.h"
#include "photo_io.h"
#include "testutil.h"
#include "tst.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- a bit writer (RBSP) */

typedef struct {
    unsigned char b[256];
    size_t nbits;
} bitw;

static void putb(bitw *w, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, w->nbits++)
        if ((v >> i) & 1)
            w->b[w->nbits >> 3] |= (unsigned char)(0x80 >> (w->nbits & 7));
}

static void putue(bitw *w, uint64_t v) /* Exp-Golomb */
{
    int len = 0;
    while ((v + 1) >> (len + 1))
        len++;
    putb(w, 0, len);
    putb(w, v + 1, len + 1);
}

static size_t bytes_of(bitw *w)
{
    putb(w, 1, 1); /* rbsp_stop_one_bit */
    return (w->nbits + 7) / 8;
}

/* An HEVC SPS NAL unit (header included, emulation prevention inserted) of size cw x ch. */
static size_t hevc_sps(unsigned char *out, uint64_t cw, uint64_t ch)
{
    bitw w = {{0}, 0};
    putb(&w, 0, 4);            /* vps id */
    putb(&w, 0, 3);            /* max_sub_layers_minus1 */
    putb(&w, 1, 1);            /* temporal_id_nesting */
    putb(&w, 1, 8);            /* profile space, tier, profile_idc 1 (Main) */
    putb(&w, 0x60000000u, 32); /* compatibility flags */
    putb(&w, 0x9, 4);          /* progressive, interlaced, non-packed, frame-only */
    putb(&w, 0, 44);           /* the other constraint flags */
    putb(&w, 93, 8);           /* level 3.1 */
    putue(&w, 0);              /* sps id */
    putue(&w, 1);              /* 4:2:0 */
    putue(&w, cw);
    putue(&w, ch);
    size_t n = bytes_of(&w), k = 0, zeros = 0;
    out[k++] = 33 << 1;
    out[k++] = 1;
    for (size_t i = 0; i < n; i++) {
        if (zeros >= 2 && w.b[i] <= 3) {
            out[k++] = 3;
            zeros = 0;
        }
        zeros = w.b[i] == 0 ? zeros + 1 : 0;
        out[k++] = w.b[i];
    }
    return k;
}

/* An AV1 sequence header OBU (reduced still picture header), size fields of wb x hb bits. */
static size_t av1_seq(unsigned char *out, int wb, int hb, uint64_t cw, uint64_t ch)
{
    bitw w = {{0}, 0};
    putb(&w, 0, 3); /* profile 0 */
    putb(&w, 1, 1); /* still_picture */
    putb(&w, 1, 1); /* reduced_still_picture_header */
    putb(&w, 8, 5); /* seq_level_idx */
    putb(&w, (uint64_t)wb - 1, 4);
    putb(&w, (uint64_t)hb - 1, 4);
    putb(&w, cw - 1, wb);
    putb(&w, ch - 1, hb);
    putb(&w, 0, 20); /* the rest, never read */
    size_t n = bytes_of(&w);
    out[0] = 1 << 3 | 2; /* OBU_SEQUENCE_HEADER, has_size_field */
    out[1] = (unsigned char)n;
    memcpy(out + 2, w.b, n);
    return n + 2;
}

/* ---------------------------------------------------------------- a file, box by box */

typedef struct {
    unsigned char b[4096];
    size_t n, open[8];
    int depth;
} file;

static void put(file *f, const void *p, size_t n)
{
    if (n)
        memcpy(f->b + f->n, p, n);
    f->n += n;
}

static void put_n(file *f, uint32_t v, int bytes) /* bytes <= 4, big-endian */
{
    for (int i = bytes - 1; i >= 0; i--)
        f->b[f->n++] = (unsigned char)(v >> (8 * i));
}

static void put_zeros(file *f, size_t n)
{
    memset(f->b + f->n, 0, n);
    f->n += n;
}

static void box(file *f, const char *type)
{
    f->open[f->depth++] = f->n;
    put_n(f, 0, 4);
    put(f, type, 4);
}

static void full_box(file *f, const char *type, int version)
{
    box(f, type);
    put_n(f, (uint32_t)version << 24, 4);
}

static void end(file *f)
{
    size_t at = f->open[--f->depth];
    uint32_t n = (uint32_t)(f->n - at);
    for (int i = 0; i < 4; i++)
        f->b[at + i] = (unsigned char)(n >> (24 - 8 * i));
}

/* One coded item of ispe iw x ih; `cfg` the configuration box's NAL units or OBUs, `data` the
 * item's bytes, stored once in 'mdat' and named by `entries` 'iloc' entries for the item, each
 * `copies` extents of that one run. */
static void build_n(file *f, int av1, uint32_t iw, uint32_t ih, const unsigned char *cfg,
                    size_t cfg_len, const unsigned char *data, size_t data_len, int copies,
                    int entries)
{
    memset(f, 0, sizeof *f);
    box(f, "ftyp");
    put(f, av1 ? "avif" : "heic", 4);
    put_n(f, 0, 4);
    put(f, av1 ? "mif1avif" : "mif1heic", 8);
    end(f);
    full_box(f, "meta", 0);
    full_box(f, "hdlr", 0);
    put_n(f, 0, 4);
    put(f, "pict", 4);
    put_zeros(f, 13); /* reserved, an empty name */
    end(f);
    full_box(f, "pitm", 0);
    put_n(f, 1, 2);
    end(f);
    full_box(f, "iinf", 0);
    put_n(f, 1, 2);
    full_box(f, "infe", 2);
    put_n(f, 1, 2); /* item 1 */
    put_n(f, 0, 2);
    put(f, av1 ? "av01" : "hvc1", 4);
    put_n(f, 0, 1);
    end(f);
    end(f);
    full_box(f, "iloc", 0);
    put_n(f, 0x44, 1); /* offset and length of 4 bytes */
    put_n(f, 0, 1);
    put_n(f, (uint32_t)entries, 2);
    size_t offsets[64], no = 0;
    for (int e = 0; e < entries; e++) {
        put_n(f, 1, 2); /* item 1 */
        put_n(f, 0, 2);
        put_n(f, (uint32_t)copies, 2);
        for (int k = 0; k < copies; k++) {
            offsets[no++] = f->n;
            put_n(f, 0, 4), put_n(f, (uint32_t)data_len, 4);
        }
    }
    end(f);
    box(f, "iprp");
    box(f, "ipco");
    box(f, av1 ? "av1C" : "hvcC");
    if (av1) {
        put_n(f, 0x81000c00u, 4);
        put(f, cfg, cfg_len);
    } else {
        unsigned char head[22] = {1, 1, 0x60};
        head[21] = 0xf3; /* 4-byte NAL lengths */
        put(f, head, 22);
        put_n(f, cfg_len ? 1 : 0, 1);
        if (cfg_len) {
            put_n(f, 0x80 | 33, 1);
            put_n(f, 1, 2);
            put_n(f, (uint32_t)cfg_len, 2);
            put(f, cfg, cfg_len);
        }
    }
    end(f);
    full_box(f, "ispe", 0);
    put_n(f, iw, 4);
    put_n(f, ih, 4);
    end(f);
    end(f);
    full_box(f, "ipma", 0);
    put_n(f, 1, 4);
    put_n(f, 1, 2);
    put_n(f, 2, 1);
    put_n(f, 0x81, 1);
    put_n(f, 0x02, 1);
    end(f);
    end(f);
    end(f);
    box(f, "mdat");
    uint32_t at = (uint32_t)f->n;
    put(f, data, data_len);
    end(f);
    for (size_t k = 0; k < no; k++)
        for (int i = 0; i < 4; i++)
            f->b[offsets[k] + (size_t)i] = (unsigned char)(at >> (24 - 8 * i));
}

static void build(file *f, int av1, uint32_t iw, uint32_t ih, const unsigned char *cfg,
                  size_t cfg_len, const unsigned char *data, size_t data_len, int copies)
{
    build_n(f, av1, iw, ih, cfg, cfg_len, data, data_len, copies, 1);
}

/* HEVC item data: the NAL units after 4-byte sizes */
static size_t hevc_data(unsigned char *out, const unsigned char *nal, size_t n)
{
    static const unsigned char slice[] = {0x26, 0x01, 0xaf, 0x1d, 0x80}; /* an IDR slice's start */
    size_t k = 0;
    if (nal) {
        out[k++] = 0, out[k++] = 0, out[k++] = 0, out[k++] = (unsigned char)n;
        memcpy(out + k, nal, n);
        k += n;
    }
    out[k++] = 0, out[k++] = 0, out[k++] = 0, out[k++] = sizeof slice;
    memcpy(out + k, slice, sizeof slice);
    return k + sizeof slice;
}

static int fit(const file *f, uint64_t w, uint64_t h, char *why, size_t whylen)
{
    why[0] = '\0';
    return tsio_heif_coded_fit(f->b, f->n, w, h, why, whylen);
}

TEST(heif_coded_hevc_sps_sizes)
{
    static file f;
    unsigned char sps[64], data[128];
    char why[160];
    size_t dn = hevc_data(data, NULL, 0);
    /* the image's size, and padded to 8x8 coding blocks: fit */
    size_t n = hevc_sps(sps, 16, 12);
    build(&f, 0, 16, 12, sps, n, data, dn, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
    n = hevc_sps(sps, 64, 64);
    build(&f, 0, 16, 12, sps, n, data, dn, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
    /* a picture far past the image, in 'hvcC' */
    n = hevc_sps(sps, 65536, 65536);
    build(&f, 0, 16, 12, sps, n, data, dn, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "HEVC") && strstr(why, "65536x65536") && strstr(why, "16x12"), "%s", why);
    /* ... or in the item's own data (the decoder reads it after hvcC's) */
    size_t ok = hevc_sps(sps, 16, 12);
    unsigned char big[64];
    size_t bn = hevc_sps(big, 8192, 16);
    dn = hevc_data(data, big, bn);
    build(&f, 0, 16, 12, sps, ok, data, dn, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "8192x16"), "%s", why);
    /* an item's own 'ispe' does not lift it past the primary image (area 4 (W + 64)(H + 64)) */
    dn = hevc_data(data, NULL, 0);
    n = hevc_sps(sps, 1000, 1000);
    build(&f, 0, 1000, 1000, sps, n, data, dn, 1);
    CHECK(fit(&f, 1000, 1000, why, sizeof why) == 0);
    CHECK(fit(&f, 100, 100, why, sizeof why) == -1);
    /* two pictures in one item (two slices that each start a picture) */
    size_t one = hevc_data(data, NULL, 0);
    memcpy(data + one, data, one);
    n = hevc_sps(sps, 16, 12);
    build(&f, 0, 16, 12, sps, n, data, 2 * one, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "more than 1 picture"), "%s", why);
    data[one + 6] = 0x2f; /* the second slice continues the picture: one picture */
    build(&f, 0, 16, 12, sps, n, data, 2 * one, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
    /* a cut SPS tells nothing (the decoder cannot read it either) */
    build(&f, 0, 16, 12, sps, 12, data, dn, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
}

TEST(heif_coded_av1_sequence_header_bounds)
{
    static file f;
    unsigned char seq[64], data[64];
    char why[160];
    /* the fewest bits that hold 16x12 (4x4: frames up to 16x16), and libaom's for 1000x700 */
    size_t n = av1_seq(seq, 4, 4, 16, 12);
    build(&f, 1, 16, 12, seq, n, seq, n, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
    n = av1_seq(seq, 10, 10, 1000, 700);
    build(&f, 1, 1000, 700, seq, n, seq, n, 1);
    CHECKF(fit(&f, 1000, 700, why, sizeof why) == 0, "%s", why);
    /* 16 and 14 bits for 16x12: a frame header may claim 65536x16384 (fuzz_heif's find) */
    n = av1_seq(seq, 16, 14, 16, 12);
    build(&f, 1, 16, 12, NULL, 0, seq, n, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "AV1") && strstr(why, "65536x16384"), "%s", why);
    /* in 'av1C' only */
    unsigned char ok[64];
    size_t okn = av1_seq(ok, 4, 4, 16, 12);
    build(&f, 1, 16, 12, seq, n, ok, okn, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    /* 4 frames (a layered image) pass, 5 do not */
    static const unsigned char frame[] = {6 << 3 | 2, 2, 0x10, 0}; /* OBU_FRAME, 2 bytes */
    size_t dn = okn;
    memcpy(data, ok, okn);
    for (int k = 0; k < 4; k++, dn += sizeof frame)
        memcpy(data + dn, frame, sizeof frame);
    build(&f, 1, 16, 12, NULL, 0, data, dn, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
    memcpy(data + dn, frame, sizeof frame);
    build(&f, 1, 16, 12, NULL, 0, data, dn + sizeof frame, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "more than 4 frames"), "%s", why);
    /* an OBU whose size runs past the data stops the decoder there: nothing after it counts */
    memcpy(data, ok, okn);
    data[1] = 60;
    build(&f, 1, 16, 12, NULL, 0, data, okn, 1);
    CHECK(fit(&f, 16, 12, why, sizeof why) == 0);
}

TEST(heif_coded_extents_past_the_file_are_refused)
{
    static file f;
    unsigned char sps[64], data[512];
    char why[160];
    size_t n = hevc_sps(sps, 16, 12);
    memset(data, 0, sizeof data); /* a NAL unit of 508 zero bytes: read, not an SPS */
    data[2] = 0x01, data[3] = 0xfc;
    build(&f, 0, 16, 12, sps, n, data, sizeof data, 1);
    CHECKF(fit(&f, 16, 12, why, sizeof why) == 0, "%s", why);
    /* the same 512 bytes as 8 extents: 4 KB of data in a file of less */
    build(&f, 0, 16, 12, sps, n, data, sizeof data, 8);
    CHECK(f.n < 8 * sizeof data);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "more than the file"), "%s", why);
    /* 8 'iloc' entries for the item, each one extent within the file: 8 x 512 bytes read */
    build_n(&f, 0, 16, 12, sps, n, data, sizeof data, 1, 8);
    CHECK(f.n < 8 * sizeof data);
    CHECK(fit(&f, 16, 12, why, sizeof why) == -1);
    CHECKF(strstr(why, "items' data add up to more than the file"), "%s", why);
}

/* The file's bytes through the loader's one guarded read, NULL on failure. */
static unsigned char *slurp(const char *path, size_t *n)
{
    unsigned char *b = NULL;
    char err[256];
    return tsio_read_file(path, 0, NULL, &b, n, NULL, err, sizeof err) == TS_OK ? b : NULL;
}

TEST(heif_coded_real_files)
{
    /* heif-enc's files (x265, aom) of 16x12 fit; fuzz_heif's three AVIFs do not */
    const char *good[] = {"tests/fuzz/seeds/heif/exif.heic", "tests/fuzz/seeds/heif/rgba.heic",
                          "tests/fuzz/seeds/heif/s.avif"};
    char why[160];
    for (int i = 0; i < 3; i++) {
        size_t n;
        unsigned char *b = slurp(good[i], &n);
        CHECKF(b != NULL, "%s", good[i]);
        why[0] = '\0';
        CHECKF(tsio_heif_coded_fit(b, n, 16, 12, why, sizeof why) == 0, "%s: %s", good[i], why);
        free(b);
    }
    /* the third's 'iloc' names another file (data_reference_index 62): libheif reads this one */
    const char *bad[] = {"tests/fuzz/seeds/heif/av1-frames-past-ispe.avif",
                         "tests/fuzz/seeds/heif/av1-frames-past-ispe-2.avif",
                         "tests/fuzz/seeds/heif/av1-frames-past-ispe-3.avif"};
    for (int i = 0; i < 3; i++) {
        char err[256];
        ts_image im;
        ts_status st = tsio_load(bad[i], NULL, &im, err, sizeof err);
        if (st == TS_ERR_UNSUPPORTED && strstr(err, "without libheif"))
            SKIP("tessera built without libheif");
        if (st == TS_OK)
            ts_image_free(&im);
        CHECKF(st == TS_ERR_FORMAT && strstr(err, "AVIF") && strstr(err, "AV1 stream"), "%s: %d %s",
               bad[i], (int)st, err);
    }
}

TEST(heif_coded_reads_the_encoders_headers)
{
    if (system("command -v heif-enc >/dev/null 2>&1") != 0)
        SKIP("heif-enc not installed (Debian: libheif-examples)");
    char dir[] = "/tmp/tessera-heif-coded-XXXXXX", path[128], cmd[512], err[256];
    CHECK(mkdtemp(dir) != NULL);
    uint64_t rs = tu_seed();
    ts_image src = tu_random_image(640, 480, 3, 1, &rs), im;
    snprintf(path, sizeof path, "%s/in.png", dir);
    CHECKF(tsio_save(path, &src, NULL, NULL, 0, err, sizeof err) == TS_OK, "%s", err);
    ts_image_free(&src);
    const char *ext[] = {"heic", "avif"}, *flag[] = {"", "-A"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "heif-enc %s -q 50 -o %s/x.%s %s >/dev/null 2>&1", flag[i], dir,
                 ext[i], path);
        CHECKF(system(cmd) == 0, "%s", cmd);
        snprintf(cmd, sizeof cmd, "%s/x.%s", dir, ext[i]);
        ts_status st = tsio_load(cmd, NULL, &im, err, sizeof err);
        if (st == TS_ERR_UNSUPPORTED && strstr(err, "without libheif"))
            SKIP("tessera built without libheif");
        CHECKF(st == TS_OK && im.width == 640 && im.height == 480, "%s: %s", cmd, err);
        ts_image_free(&im);
        size_t n;
        unsigned char *b = slurp(cmd, &n);
        CHECK(b != NULL);
        unsigned char *ispe = NULL;
        for (size_t k = 0; k + 16 <= n && !ispe; k++)
            if (memcmp(b + k, "ispe", 4) == 0)
                ispe = b + k;
        CHECKF(ispe != NULL, "%s has no ispe", cmd);
        static const unsigned char hundred[8] = {0, 0, 0, 100, 0, 0, 0, 100};
        memcpy(ispe + 8, hundred, 8); /* after the type, version and flags */
        char why[160] = "";
        int r = tsio_heif_coded_fit(b, n, 100, 100, why, sizeof why);
        free(b);
        CHECKF(r == -1 && strstr(why, i ? "AV1" : "HEVC") && strstr(why, "100x100"), "%s: %d %s",
               cmd, r, why);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}
