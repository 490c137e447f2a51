/* main.c - tessera's entry: parse the command line, then list, batch-convert or view. */
#include "batch.h"
#include "cli.h"
#include "kernel_file.h"
#include "util.h"
#include "viewer.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    app_options o;
    app_gpu_env(); /* TESSERA_DEVICE and the tests' knobs: the library reads no environment */
    int rc = cli_parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.help) {
        if (o.help == 2)
            cli_man();
        else
            cli_usage();
        return 0;
    }
    if (o.version) {
#ifdef TS_HAVE_SDL
        printf("tessera %s (%s, SDL2 viewer)\n", APP_VERSION, ts_gpu_compiled() ? "CUDA" : "CPU only");
#else
        /* no "viewer" here: tools/run.sh and tests/viewer.sh look for that word */
        printf("tessera %s (%s, built without SDL2)\n", APP_VERSION,
               ts_gpu_compiled() ? "CUDA" : "CPU only");
#endif
        return 0;
    }
    if (o.list)
        return cli_list(&o);
    if (o.headless)
        return batch_main(&o);
    ts_ref_set_threads(o.jobs); /* one image at a time: the CPU fallback may use every core */
    return viewer_main(&o);
}
