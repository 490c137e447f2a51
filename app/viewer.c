/* viewer.c - the SDL2 viewer (issue 6); until it lands, a pointer to --headless. */
#include "cli.h"
#include "util.h"

int ts_viewer(const ts_options *o)
{
    (void)o;
    ts_warn("the viewer is not built yet: use --headless (see tessera --help)");
    return 2;
}
