/* cli.h - the command line shared by the viewer and the headless batch. */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "options.h"

/* Parses argv. 0: go on; 2: usage error (already printed as "tessera: ..."). */
int ts_parse_options(int argc, char **argv, ts_options *o);
void ts_print_usage(void);
/* `tessera --list`: every family, its ops and variants, and whether each can run here. */
int ts_list(const ts_options *o);

#endif
