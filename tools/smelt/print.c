/* placeholder */
#include "cli.h"
int cli_print(int argc, char **argv) { (void)argc; (void)argv; return 1; }
void cli_print_help(FILE *out) { fprintf(out, "print\n"); }
