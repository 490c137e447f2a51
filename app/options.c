/* options.c - the pipeline each part opens from the options (app/options.h). */
#include "options.h"
#include "util.h"

ts_pipeline *app_open_pipeline(const app_options *o)
{
    ts_pipeline *p;
    char msg[512];
    if (ts_pipeline_create(&p, o->backend, msg, sizeof msg) != TS_OK) {
        app_warn("%s", ts_error_detail());
        return NULL;
    }
    if (msg[0] && !o->quiet)
        app_warn("%s", msg);
    ts_pipeline_set_max_pixels(p, o->max_pixels); /* op outputs too, not only decodes */
    for (int i = 0; i < o->n_variants; i++) {
        ts_status st = ts_pipeline_select(p, o->variants[i].family, o->variants[i].name);
        if (st == TS_ERR_UNSUPPORTED) { /* skipped with a message, never a crash */
            if (!o->quiet)
                app_warn("%s: skipped, using auto", ts_error_detail());
        } else if (st != TS_OK) {
            app_warn("%s", ts_error_detail());
            ts_pipeline_destroy(p);
            return NULL;
        }
    }
    return p;
}
