/*
 * detect.c - telling an ONNX file from a text IR file, for
 * smelt_graph_load's dispatch.
 */
#include <string.h>

#include "frontends/onnx/onnx.h"

int sm_onnx_is_model(const char *path, const void *head, size_t n)
{
    size_t len = path ? strlen(path) : 0;
    if (len >= 5 && strcmp(path + len - 5, ".onnx") == 0)
        return 1;
    const unsigned char *p = head;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = p[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        /* Text IR starts with "graph" or a '#' comment; a ModelProto with
         * a tag byte (0x08 ir_version, 0x3a graph, 0x42 opset_import...) */
        return !(c == '#' || c == 'g');
    }
    return 0;
}
