/*
 * quantize_qat.h - `smelt quantize --qat` and `--convert`
 * (quantize_qat.c).
 */
#ifndef SMELT_CLI_QUANTIZE_QAT_H
#define SMELT_CLI_QUANTIZE_QAT_H

#include "args.h"

/* Runs --qat or --convert (args already parsed, out a .onnx path). */
int cli_quantize_qat(const cli_args *args, const char *out);

#endif
