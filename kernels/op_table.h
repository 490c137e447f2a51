/* op_table.h - the row type of the op table (kernels/ops.c) and the functions its rows point to.
 * Internal to kernels/: the public view of the table is ts_op_count() / ts_op_info_at() in
 * tessera.h. An op is declared once, as one row: its name, kind and family, its arguments (kind,
 * range, default), a help line, the hook that turns parsed arguments into a ts_op, its CPU
 * reference and its output-shape rule. Parsing, the "known:" list, --help, --list and the family
 * names are derived from the rows.
 */
#ifndef TS_OP_TABLE_H
#define TS_OP_TABLE_H

#include "tessera.h"

#define OP_MAX_ARGS 3

typedef enum op_arg_kind {
    ARG_KSIZE, /* a filter size: odd integer, 1..TS_MAX_K */
    ARG_INT,   /* an integer in [lo, hi] */
    ARG_FLOAT, /* a finite number in [lo, hi], or (lo, hi] with lo_open */
    ARG_WORD,  /* one of the '|'-separated `choices`; the first is the default */
    ARG_TEXT   /* any non-empty text, read by the row's build hook (a file name, a geometry such
                  as 640x480 or 50%); with `rest` it takes the rest of the item, ':' included */
} op_arg_kind;

typedef struct op_arg {
    const char *name;    /* in the synopsis: K, SIGMA, FILE */
    op_arg_kind kind;
    double lo, hi;       /* ARG_INT, ARG_FLOAT */
    int lo_open;         /* ARG_FLOAT: lo itself is refused */
    double def;          /* ARG_KSIZE, ARG_INT, ARG_FLOAT: the value when not given */
    const char *choices; /* shown in the synopsis instead of the name ("90|180|270") */
    const char *bad;     /* the error for a value of the wrong kind or range (ARG_KSIZE has its own) */
    int rest;            /* ARG_TEXT: the rest of the item, ':' included (kernel:FILE) */
} op_arg;

/* Parsed arguments as the build hook receives them: `given` of the row's args were in the text;
 * the others hold their defaults (ARG_WORD: index 0, ARG_TEXT: NULL). */
typedef struct op_values {
    ts_kernel_reader reader;    /* kernel:FILE's (NULL: refused) */
    int given;
    long i[OP_MAX_ARGS];        /* ARG_KSIZE, ARG_INT; ARG_WORD: the index in `choices` */
    double f[OP_MAX_ARGS];      /* ARG_FLOAT */
    const char *s[OP_MAX_ARGS]; /* ARG_TEXT, and the text of every given argument */
} op_values;

typedef struct op_row op_row;

/* Fills op (kind, payload, canonical text) from parsed values. `item` is the op's text for
 * errors; a hook reports a bad value with op_error(). */
typedef ts_status (*op_build_fn)(const op_row *row, const op_values *v, const char *item, ts_op *op,
                                 char *err, size_t errlen);
/* The CPU reference into a host image of the op's output shape. */
typedef ts_status (*op_ref_fn)(const ts_op *op, const ts_image *in, ts_image *out);
/* Output size for an input of w x h; an error with a reason where there is none (a crop box
 * outside the image). */
typedef ts_status (*op_shape_fn)(const ts_op *op, int w, int h, int *ow, int *oh);

struct op_row {
    ts_op_info info;     /* name, family, help: what tessera.h shows */
    ts_op_kind kind;     /* what the pipeline, the variants and the reference switch on */
    int nargs;           /* declared arguments */
    int required;        /* of those, how many must be given */
    op_arg args[OP_MAX_ARGS];
    const char *usage;   /* the error for a wrong argument count; NULL: "too many arguments" */
    int param;           /* for a hook shared by rows (the ts_geom of transpose, flip, ...) */
    op_build_fn build;   /* NULL: no payload, the text is the name */
    op_ref_fn ref;       /* NULL: not an image operation (hist) */
    op_shape_fn shape;   /* NULL: the output has the input's size */
    int hidden;          /* not in the grammar nor the lists (hist: tests and benchmark only) */
};

/* The row of an op kind (the first: all rows of a kind share family, reference and shape). */
const op_row *op_row_of_kind(ts_op_kind k);
/* "" when the table keeps the rules that parsing and kind lookups rely on; else the first broken. */
const char *op_table_check(void);
ts_status op_error(char *err, size_t errlen, const char *item, const char *what);
int ops_parse_float(const char *s, double *out);

/* kernels/filter.c: the build hooks of the conv rows (each builds its filter bank once, so every
 * backend gets the same float weights); kernel:FILE's weights come from the caller's reader. */
ts_status op_build_box(const op_row *row, const op_values *v, const char *item, ts_op *op,
                       char *err, size_t errlen);
ts_status op_build_gauss(const op_row *row, const op_values *v, const char *item, ts_op *op,
                         char *err, size_t errlen);
ts_status op_build_sharpen(const op_row *row, const op_values *v, const char *item, ts_op *op,
                           char *err, size_t errlen);
ts_status op_build_emboss(const op_row *row, const op_values *v, const char *item, ts_op *op,
                          char *err, size_t errlen);
ts_status op_build_edge(const op_row *row, const op_values *v, const char *item, ts_op *op,
                        char *err, size_t errlen);
ts_status op_build_kernel(const op_row *row, const op_values *v, const char *item, ts_op *op,
                          char *err, size_t errlen);

/* kernels/ref.c: the references the rows point to. */
ts_status ref_conv_into(const ts_op *op, const ts_image *in, ts_image *out);
ts_status ref_geom_into(const ts_op *op, const ts_image *in, ts_image *out);
ts_status ref_equalize_into(const ts_op *op, const ts_image *in, ts_image *out);

/* kernels/ref_resize.c: the resize rows (resize, thumbnail, crop): the hook that reads their
 * geometry and filter, their shape rule and their reference (Pillow's ImagingResample). */
ts_status op_build_resize(const op_row *row, const op_values *v, const char *item, ts_op *op,
                          char *err, size_t errlen);
ts_status op_resize_shape(const ts_op *op, int w, int h, int *ow, int *oh);
ts_status ref_resize_into(const ts_op *op, const ts_image *in, ts_image *out);

/* kernels/ref_clahe.c: the clahe row's hook (clahe[:CLIP[:TxT]]) and its reference. */
ts_status op_build_clahe(const op_row *row, const op_values *v, const char *item, ts_op *op,
                         char *err, size_t errlen);
ts_status ref_clahe_into(const ts_op *op, const ts_image *in, ts_image *out);

#endif /* TS_OP_TABLE_H */
