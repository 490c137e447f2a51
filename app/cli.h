/* cli.h - the command line shared by the viewer and the headless batch. */
#ifndef TS_CLI_H
#define TS_CLI_H

#include "options.h"

/* Parses argv. 0: go on; 2: usage error (already printed as "tessera: ..."). */
int cli_parse(int argc, char **argv, app_options *o);
/* --help, and --help-man: the same from the same tables, as a manual page (roff). */
void cli_usage(void);
void cli_man(void);
/* `tessera --list`: every family, its ops and variants, and whether each can run here. */
int cli_list(const app_options *o);

#endif
