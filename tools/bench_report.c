/* bench_report.c - turns the benchmark's rows into what people read: the markdown table (stdout
 * and the .md), the headline block (per op at the largest size: naive, best checked variant, best
 * vendor baseline, copy floor, speedups) and the CSV (one row per measurement, with device and
 * date columns, for tools/chart.py). Derived figures are computed here from the measured ones:
 *   GB/s = bytes / time; TFLOP/s = flops / time; vs naive = naive ms / ms;
 *   % of copy bandwidth = copy-floor ms / ms (100% = as fast as a D2D copy of the same bytes).
 */
#include "bench.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

const bench_format bench_formats[BF_COUNT] = {
    {"gray8", 1, 1}, {"rgb8", 3, 1}, {"rgba8", 4, 1}, {"gray16", 1, 2}, {"rgb16", 3, 2}};

void bench_text(char *dst, size_t len, const char *fmt, ...)
{
    va_list ap;
    if (!len)
        return;
    va_start(ap, fmt);
    vsnprintf(dst, len, fmt, ap);
    va_end(ap);
}

bench_row *bench_rows_add(bench_rows *r)
{
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 256;
        bench_row *v = realloc(r->v, cap * sizeof *v);
        if (!v)
            return NULL;
        r->v = v;
        r->cap = cap;
    }
    bench_row *row = &r->v[r->n++];
    memset(row, 0, sizeof *row);
    row->ms = row->min_ms = row->floor_ms = row->naive_ms = -1;
    return row;
}

void bench_rows_free(bench_rows *r)
{
    free(r->v);
    memset(r, 0, sizeof *r);
}

void bench_note(bench_meta *m, const char *fmt, ...)
{
    char text[BENCH_TEXT];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    for (int i = 0; i < m->n_notes; i++)
        if (strcmp(m->notes[i], text) == 0)
            return;
    if (m->n_notes < BENCH_MAX_NOTES)
        memcpy(m->notes[m->n_notes++], text, sizeof text);
}

void bench_slug(const char *name, char *out, size_t len)
{
    size_t n = 0;
    int dash = 1; /* no leading dash */
    for (const char *p = name; *p && n + 1 < len; p++) {
        if (isalnum((unsigned char)*p)) {
            out[n++] = (char)tolower((unsigned char)*p);
            dash = 0;
        } else if (!dash) {
            out[n++] = '-';
            dash = 1;
        }
    }
    while (n && out[n - 1] == '-')
        n--;
    if (!n && len > 3)
        n = (size_t)snprintf(out, len, "gpu");
    out[n < len ? n : len - 1] = '\0';
}

/* ---------------------------------------------------------------- formatting */

static const char *fmt_ms(double ms, char *buf, size_t len)
{
    if (!(ms > 0))
        snprintf(buf, len, "-");
    else if (ms < 1)
        snprintf(buf, len, "%.4f", ms);
    else if (ms < 100)
        snprintf(buf, len, "%.3f", ms);
    else
        snprintf(buf, len, "%.1f", ms);
    return buf;
}

static const char *fmt_num(double v, const char *printf_fmt, char *buf, size_t len)
{
    if (!(v > 0))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, printf_fmt, v);
    return buf;
}

/* Markdown cells may not hold '|' or newlines. */
static const char *cell(const char *s, char *buf, size_t len)
{
    size_t n = 0;
    for (; *s && n + 1 < len; s++)
        buf[n++] = (*s == '|' || *s == '\n' || *s == '\r') ? '/' : *s;
    buf[n] = '\0';
    return buf;
}

static double row_gbps(const bench_row *r) { return r->ms > 0 ? r->bytes / r->ms / 1e6 : -1; }
static double row_tflops(const bench_row *r)
{
    return r->ms > 0 && r->flops > 0 ? r->flops / r->ms / 1e9 : -1;
}
static double row_speedup(const bench_row *r)
{
    return r->ms > 0 && r->naive_ms > 0 ? r->naive_ms / r->ms : -1;
}
/* The copy floor is a GPU figure: a host row has none. */
static double row_copy_pct(const bench_row *r)
{
    return r->ms > 0 && r->floor_ms > 0 && !r->host ? 100.0 * r->floor_ms / r->ms : -1;
}

void bench_print_meta(FILE *f, const bench_meta *m, const char *b)
{
    const ts_device *d = &m->dev;
    double peak = 2.0 * d->mem_clock_khz * 1e3 * (d->mem_bus_bits / 8.0) / 1e9;
    fprintf(f, "%sdevice: %s, compute capability %d.%d, %d SMs, %.1f GiB\n", b, d->name,
            d->cc_real / 10, d->cc_real % 10, d->sms, d->global_mem / 1073741824.0);
    fprintf(f, "%sdriver %d.%d, CUDA runtime %d.%d\n", b, d->driver_version / 1000,
            d->driver_version % 1000 / 10, d->runtime_version / 1000,
            d->runtime_version % 1000 / 10);
    fprintf(f, "%sclocks as read: SM %d MHz, memory %d MHz, %d-bit bus", b, d->clock_khz / 1000,
            d->mem_clock_khz / 1000, d->mem_bus_bits);
    if (peak > 0)
        fprintf(f, " (2 x clock x width: %.0f GB/s)", peak);
    fprintf(f, "; L2 %.1f MB; shared memory %zu KB a block (opt-in), %zu KB an SM\n",
            d->l2_bytes / 1048576.0, d->smem_per_block_optin / 1024, d->smem_per_sm / 1024);
    fprintf(f, "%sdate: %s\n", b, m->date);
    fprintf(f, "%stiming: %s\n", b, m->timing);
    fprintf(f, "%svendors: %s\n", b, m->vendors);
    fprintf(f, "%sreproduce: `%s`\n", b, m->command);
}

void bench_print_table_head(FILE *f)
{
    fprintf(f, "| op | format | size | variant | ms | GB/s | TFLOP/s | vs naive | floor ms | "
               "%% of copy bw | check | note |\n");
    fprintf(f, "|---|---|---|---|--:|--:|--:|--:|--:|--:|---|---|\n");
}

void bench_print_rows(FILE *f, const bench_row *rows, size_t n)
{
    char a[32], b[32], c[32], d[32], e[32], g[32], chk[BENCH_TEXT], note[BENCH_TEXT];
    for (size_t i = 0; i < n; i++) {
        const bench_row *r = &rows[i];
        fprintf(f, "| %s | %s | %dx%d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r->op,
                bench_formats[r->fmt].name, r->width, r->height, r->variant,
                fmt_ms(r->ms, a, sizeof a), fmt_num(row_gbps(r), "%.1f", b, sizeof b),
                fmt_num(row_tflops(r), "%.3f", c, sizeof c),
                fmt_num(row_speedup(r), "%.2fx", d, sizeof d), fmt_ms(r->floor_ms, e, sizeof e),
                fmt_num(row_copy_pct(r), "%.0f%%", g, sizeof g), cell(r->check, chk, sizeof chk),
                cell(r->note, note, sizeof note));
    }
}

/* ---------------------------------------------------------------- headline */

typedef struct headline {
    int found, width, height;
    const bench_row *naive, *best, *vendor;
    double floor_ms;
} headline;

static headline find_headline(const bench_rows *rows, const char *op, int fmt)
{
    headline h;
    memset(&h, 0, sizeof h);
    h.floor_ms = -1;
    for (size_t i = 0; i < rows->n; i++) { /* the largest size with a timed row */
        const bench_row *r = &rows->v[i];
        if (strcmp(r->op, op) != 0 || r->fmt != fmt || !(r->ms > 0))
            continue;
        if (!h.found || (double)r->width * r->height > (double)h.width * h.height) {
            h.width = r->width;
            h.height = r->height;
        }
        h.found = 1;
    }
    if (!h.found)
        return h;
    for (size_t i = 0; i < rows->n; i++) {
        const bench_row *r = &rows->v[i];
        if (strcmp(r->op, op) != 0 || r->fmt != fmt || r->width != h.width ||
            r->height != h.height)
            continue;
        if (r->floor_ms > 0)
            h.floor_ms = r->floor_ms;
        if (!(r->ms > 0) || r->host)
            continue;
        if (r->vendor) {
            if (r->state != BS_ERROR && (!h.vendor || r->ms < h.vendor->ms))
                h.vendor = r;
            continue;
        }
        if (strcmp(r->variant, "naive") == 0 && r->param == 0)
            h.naive = r;
        if (r->state == BS_OK && (!h.best || r->ms < h.best->ms))
            h.best = r;
    }
    return h;
}

void bench_print_headline(FILE *f, const bench_rows *rows, const bench_opdef *ops, size_t n_ops)
{
    char a[32], b[32], c[32], d[32], e[32], g[32], k[32];
    fprintf(f, "| op | format | size | naive ms | best variant | best ms | vendor | vendor ms | "
               "copy floor ms | best vs naive | best vs vendor | best %% of copy bw |\n");
    fprintf(f, "|---|---|---|--:|---|--:|---|--:|--:|--:|--:|--:|\n");
    for (size_t i = 0; i < n_ops; i++)
        for (int fmt = 0; fmt < BF_COUNT; fmt++) {
            if (!(ops[i].headline & BF_BIT(fmt)))
                continue;
            headline h = find_headline(rows, ops[i].name, fmt);
            if (!h.found)
                continue;
            double best = h.best ? h.best->ms : -1;
            fprintf(f, "| %s | %s | %dx%d | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    ops[i].name, bench_formats[fmt].name, h.width, h.height,
                    fmt_ms(h.naive ? h.naive->ms : -1, a, sizeof a),
                    h.best ? h.best->variant : "-", fmt_ms(best, b, sizeof b),
                    h.vendor ? h.vendor->variant : "-",
                    fmt_ms(h.vendor ? h.vendor->ms : -1, c, sizeof c),
                    fmt_ms(h.floor_ms, d, sizeof d),
                    fmt_num(h.naive && best > 0 ? h.naive->ms / best : -1, "%.2fx", e, sizeof e),
                    fmt_num(h.vendor && best > 0 ? h.vendor->ms / best : -1, "%.2fx", g, sizeof g),
                    fmt_num(h.floor_ms > 0 && best > 0 ? 100 * h.floor_ms / best : -1, "%.0f%%",
                            k, sizeof k));
        }
}

/* ---------------------------------------------------------------- files */

int bench_write_md(const char *path, const bench_meta *m, const bench_rows *rows,
                   const bench_opdef *ops, size_t n_ops)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(f, "# tessera benchmark: %s%s\n\n", m->dev.name, m->quick ? " (--quick)" : "");
    bench_print_meta(f, m, "- ");
    fprintf(f, "\n## Headline\n\nPer op at the largest size measured. *best* is the fastest variant "
               "whose output passed the check; *vendor* the fastest library baseline; the copy "
               "floor is a device-to-device copy of the same bytes, measured in the same run.\n\n");
    bench_print_headline(f, rows, ops, n_ops);
    fprintf(f, "\n## All measurements\n\n");
    bench_print_table_head(f);
    bench_print_rows(f, rows->v, rows->n);
    if (m->n_notes) {
        fprintf(f, "\n## Notes\n\n");
        for (int i = 0; i < m->n_notes; i++)
            fprintf(f, "- %s\n", m->notes[i]);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* A CSV field: quoted when it holds a comma, a quote or a newline (quotes doubled). */
static void csv_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s == '\n' || *s == '\r' ? ' ' : *s, f);
    }
    fputc('"', f);
}

static void csv_num(FILE *f, double v, const char *printf_fmt)
{
    fputc(',', f);
    if (v >= 0) /* unknown figures are negative: an empty field */
        fprintf(f, printf_fmt, v);
}

static const char *state_name(bench_state s)
{
    static const char *const names[] = {"ok", "wrong", "unchecked", "error", "skipped"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

int bench_write_csv(const char *path, const bench_meta *m, const bench_rows *rows)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    const ts_device *d = &m->dev;
    char dev[200]; /* the device columns, the same on every row */
    snprintf(dev, sizeof dev, "%d.%d,%d,%d.%d,%d.%d,%d,%d,%d,%.1f", d->cc_real / 10,
             d->cc_real % 10, d->sms, d->driver_version / 1000, d->driver_version % 1000 / 10,
             d->runtime_version / 1000, d->runtime_version % 1000 / 10, d->clock_khz / 1000,
             d->mem_clock_khz / 1000, d->mem_bus_bits, d->l2_bytes / 1048576.0);
    fprintf(f, "device,cc,sms,driver,runtime,sm_mhz,mem_mhz,bus_bits,l2_mb,date,op,format,width,"
               "height,variant,param,kind,runs,ms,min_ms,bytes,gbps,tflops,speedup_vs_naive,"
               "floor_ms,copy_pct,state,check,note\n");
    for (size_t i = 0; i < rows->n; i++) {
        const bench_row *r = &rows->v[i];
        csv_field(f, m->dev.name);
        fprintf(f, ",%s,", dev);
        csv_field(f, m->date);
        fputc(',', f);
        csv_field(f, r->op);
        fprintf(f, ",%s,%d,%d,", bench_formats[r->fmt].name, r->width, r->height);
        csv_field(f, r->variant);
        fprintf(f, ",%d,%s,%d", r->param, r->vendor ? "vendor" : r->host ? "cpu" : "gpu",
                r->runs);
        csv_num(f, r->ms, "%.6f");
        csv_num(f, r->min_ms, "%.6f");
        csv_num(f, r->bytes, "%.0f");
        csv_num(f, row_gbps(r), "%.2f");
        csv_num(f, row_tflops(r), "%.4f");
        csv_num(f, row_speedup(r), "%.3f");
        csv_num(f, r->floor_ms, "%.6f");
        csv_num(f, row_copy_pct(r), "%.1f");
        fprintf(f, ",%s,", state_name(r->state));
        csv_field(f, r->check);
        fputc(',', f);
        csv_field(f, r->note);
        fputc('\n', f);
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}
