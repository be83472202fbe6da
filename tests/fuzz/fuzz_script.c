/*
 * fuzz_script.c - libFuzzer harness for the script frontend: any bytes are
 * a script; the last function is compiled, and what compiles is verified
 * and printed. Malformed scripts must fail with a diagnostic, never crash,
 * leak or run away. Built only with clang and -DSMELT_FUZZ=ON; seed it with
 * the scripts of tests/script/ (docs/SCRIPT.md, "Fuzzing").
 */
#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    smelt_ctx_t *ctx = smelt_ctx_init();
    if (!ctx)
        return 0;
    smelt_graph_t *g = NULL;
    if (smelt_script_compile(ctx, (const char *)data, size, "fuzz.py", NULL,
                             &g) == SMELT_OK) {
        char *text = NULL;
        if (smelt_graph_verify(ctx, g) == SMELT_OK &&
            smelt_graph_print(ctx, g, &text) == SMELT_OK)
            smelt_string_free(text);
        smelt_graph_free(g);
    } else if (!smelt_ctx_error(ctx)[0]) {
        __builtin_trap(); /* a failure must always say why */
    }
    smelt_ctx_free(ctx);
    return 0;
}
