/*
 * tensor_file.c - smelt_onnx_tensor_load: one serialized TensorProto (the
 * input_<i>.pb / output_<i>.pb files of ONNX's backend tests) to a tensor.
 * The decoding and every check on the data are load_tensor.c's; this file
 * only reads the file and sets up a loader with no graph.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "frontends/onnx/onnx_internal.h"

smelt_status smelt_onnx_tensor_load(smelt_ctx_t *ctx, const char *path,
                                    smelt_tensor_t **out)
{
    if (!out || !path)
        return sm_err(ctx, SMELT_ERR_INVALID_ARG,
                      "smelt_onnx_tensor_load: NULL argument");
    *out = NULL;
    char *dir = sm_onnx_dir_of(path);
    if (!dir)
        return sm_err_nomem(ctx);
    void *buf = NULL;
    size_t len = 0;
    Onnx__TensorProto *tp = NULL;
    smelt_status s = sm_onnx_read_file(ctx, path, &buf, &len);
    if (s == SMELT_OK) {
        s = sm_onnx_tensor_unpack(ctx, buf, len, &tp);
        sm_free(buf); /* protobuf-c copied what it keeps */
    }
    if (s == SMELT_OK) {
        /* Only ctx and base_dir are used for a tensor outside a graph. */
        sm_onnx_loader L = {0};
        L.ctx = ctx;
        L.base_dir = dir;
        const char *name = tp->name && tp->name[0] ? tp->name : "tensor";
        s = sm_onnx_tensor_load(&L, tp, name, out);
    }
    if (s != SMELT_OK && ctx && ctx->code == s &&
        strncmp(ctx->msg, "onnx: ", 6) == 0 && !strstr(ctx->msg, path))
        sm_err_prefix(ctx, "%s: ", path);
    sm_onnx_tensor_proto_free(tp);
    sm_free(dir);
    return s;
}
