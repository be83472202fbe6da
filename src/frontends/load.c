/*
 * load.c - smelt_graph_load: one entry point for every model file. It
 * picks the frontend from the file: ONNX (by extension or binary content)
 * or text IR.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/file.h"
#include "frontends/onnx/onnx.h"
#include "ir/ir.h"
#include "ir/text.h"

/* Text graph files larger than this are refused before reading. */
#define SM_GRAPH_FILE_MAX ((size_t)1 << 30)

smelt_status smelt_graph_load(smelt_ctx_t *ctx, const char *path,
                              smelt_graph_t **out)
{
    if (!path || !out)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_graph_load: NULL argument");
    *out = NULL;
    if (sm_onnx_is_model(path, NULL, 0))
        return smelt_onnx_load(ctx, path, out);
    size_t n = strlen(path);
    if (n > 3 && !strcmp(path + n - 3, ".py"))
        return smelt_script_load(ctx, path, NULL, out);
    char *data;
    size_t len;
    SM_TRY(sm_read_file(ctx, path, SM_GRAPH_FILE_MAX, &data, &len));
    if (sm_onnx_is_model(NULL, data, len)) {
        /* an ONNX file under another name: load it from the path, so that
         * external data resolves against its folder */
        sm_free(data);
        return smelt_onnx_load(ctx, path, out);
    }
    smelt_status s = sm_ir_parse(ctx, data, len, path, out);
    sm_free(data);
    return s;
}
