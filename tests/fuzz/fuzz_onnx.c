/*
 * fuzz_onnx.c - libFuzzer harness for ONNX models: any bytes go to
 * smelt_onnx_load_buffer; what loads is written back out and loaded
 * again, then inferred, optimized, compiled and run on small inputs
 * (fuzz_run.c). Built only with clang and -DSMELT_FUZZ=ON (see
 * docs/FUZZING.md).
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
    if (smelt_onnx_load_buffer(ctx, data, size, NULL, &g) == SMELT_OK) {
        void *buf;
        size_t len;
        if (smelt_onnx_save_buffer(ctx, g, &buf, &len) == SMELT_OK) {
            smelt_graph_t *again = NULL;
            if (smelt_onnx_load_buffer(ctx, buf, len, NULL, &again) == SMELT_OK)
                smelt_graph_free(again);
            smelt_onnx_buffer_free(buf);
        }
        fuzz_run_graph(ctx, g);
    } else if (!smelt_ctx_error(ctx)[0]) {
        __builtin_trap(); /* a failure must always say why */
    }
    smelt_ctx_free(ctx);
    return 0;
}
