/* placeholder */
#include "cli.h"
int cli_run(int argc, char **argv) { (void)argc; (void)argv; return 1; }
void cli_run_help(FILE *out) { fprintf(out, "run\n"); }
