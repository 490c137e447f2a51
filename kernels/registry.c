/* registry.c - the single table of variants. The viewer's variant keys, --variant, --list, the
 * tests and the benchmark all iterate this table; nothing else lists variants.
 * Order within a family is the speedup ladder (cpu, naive, shared, ..., fastest).
 */
#include "tessera.h"
#include "variants.h"

#include <string.h>

static ts_status cpu_run(const ts_job *job)
{
    if (job->op->kind == TS_OP_HIST)
        return ts_ref_hist(&job->in, job->op->hist_mode, job->hist);
    ts_image out = job->out;
    return ts_ref_op_into(job->op, &job->in, &out);
}

#define CPU_VARIANT(fam)                                                                           \
    {fam, "cpu", "the reference on the host: the oracle and the no-GPU fallback", 0, 1, NULL,     \
     NULL, cpu_run}

static const ts_variant table[] = {
    /* ---- conv (conv.cu) */
    CPU_VARIANT(TS_FAM_CONV),
#ifdef TS_HAVE_CUDA
#endif
    /* ---- geom (geom.cu) */
    CPU_VARIANT(TS_FAM_GEOM),
#ifdef TS_HAVE_CUDA
#endif
    /* ---- hist (hist.cu) */
    CPU_VARIANT(TS_FAM_HIST),
#ifdef TS_HAVE_CUDA
#endif
};

size_t ts_variant_count(void) { return sizeof table / sizeof table[0]; }

const ts_variant *ts_variant_at(size_t i) { return i < ts_variant_count() ? &table[i] : NULL; }

const ts_variant *ts_variant_find(ts_family f, const char *name)
{
    for (size_t i = 0; i < ts_variant_count(); i++)
        if (table[i].family == f && strcmp(table[i].name, name) == 0)
            return &table[i];
    return NULL;
}

int ts_variant_runnable(const ts_variant *v, const ts_device *dev)
{
    if (!ts_variant_is_gpu(v))
        return 1;
    return dev != NULL && dev->cc >= v->min_cc;
}

const ts_variant *ts_variant_auto(const ts_job *job, const ts_device *dev)
{
    const ts_variant *best = NULL;
    ts_family f = ts_op_family(job->op->kind);
    for (size_t i = 0; i < ts_variant_count(); i++) {
        const ts_variant *v = &table[i];
        if (v->family != f || v->auto_rank <= 0 || ts_variant_is_gpu(v) != (dev != NULL))
            continue;
        if (!ts_variant_runnable(v, dev) || (v->supports && !v->supports(job)))
            continue;
        if (!best || v->auto_rank > best->auto_rank)
            best = v;
    }
    return best;
}
