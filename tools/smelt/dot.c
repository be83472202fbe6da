/* placeholder */
#include "cli.h"
int cli_dot(int argc, char **argv) { (void)argc; (void)argv; return 1; }
void cli_dot_help(FILE *out) { fprintf(out, "dot\n"); }
