/*
 * onnx.h - the ONNX frontend as the rest of Smelt sees it: what the public
 * smelt_onnx_* functions do not already say. Nothing here exposes the
 * protobuf types (those stay in onnx_internal.h).
 */
#ifndef SM_ONNX_H
#define SM_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "smelt.h"

/* Limits on untrusted models. */
#define SM_ONNX_MAX_MODEL_BYTES ((size_t)2 << 30) /* protobuf's own limit */
#define SM_ONNX_MAX_DEPTH 32 /* subgraphs (If/Loop bodies) nested */
#define SM_ONNX_OPSET_MIN 1  /* ops whose old forms differ: opset.c */
#define SM_ONNX_OPSET_MAX 21
#define SM_ONNX_EXPORT_OPSET 17
#define SM_ONNX_EXPORT_IR_VERSION 8

/* Whether a model file should go to the ONNX loader rather than the text
 * IR parser: its name ends in ".onnx", or its first bytes are not text
 * (ONNX files start with a protobuf tag, text IR with "graph", a comment
 * or whitespace). head holds the file's first n bytes (n may be 0). */
int sm_onnx_is_model(const char *path, const void *head, size_t n);

struct smelt_graph;
/* The default-domain opset smelt_onnx_save writes g at:
 * SM_ONNX_EXPORT_OPSET unless a node needs a newer one (a non-constant
 * axes input of ReduceMean/Max/Min, Split's num_outputs, Pad's axes). */
int64_t sm_onnx_export_opset(const struct smelt_graph *g);

#endif
