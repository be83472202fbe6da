/*
 * fuzz_script.c - libFuzzer harness for the script frontend: any bytes are
 * a script; the last function is compiled, and what compiles must verify,
 * and is then inferred, optimized, compiled into a plan and run on small
 * inputs (fuzz_run.c). Malformed scripts must fail with a diagnostic,
 * never crash, leak or run away. Built only with clang and
 * -DSMELT_FUZZ=ON; seeded with the scripts of tests/script/
 * (docs/FUZZING.md).
 */
#include <stddef.h>
#include <stdint.h>

#include "fuzz_run.h"
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
        /* what compiles is a valid graph (the printer is not run: a short
         * script can make megabytes of constants) */
        if (smelt_graph_verify(ctx, g) != SMELT_OK)
            __builtin_trap();
        fuzz_run_graph(ctx, g);
    } else if (!smelt_ctx_error(ctx)[0]) {
        __builtin_trap(); /* a failure must always say why */
    }
    smelt_ctx_free(ctx);
    return 0;
}
