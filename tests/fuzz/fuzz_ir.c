/*
 * fuzz_ir.c - libFuzzer harness for the text IR: any bytes are parsed as
 * a graph; what parses must verify, and is then inferred, optimized,
 * compiled and run on small inputs (fuzz_run.c). Built only with clang
 * and -DSMELT_FUZZ=ON (docs/FUZZING.md).
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
    if (smelt_graph_parse(ctx, (const char *)data, size, "fuzz.ir", &g) ==
        SMELT_OK) {
        fuzz_run_graph(ctx, g);
    } else if (!smelt_ctx_error(ctx)[0]) {
        __builtin_trap(); /* a failure must always say why */
    }
    smelt_ctx_free(ctx);
    return 0;
}
