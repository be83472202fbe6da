/*
 * file.h - reading whole files with a size limit, shared by the loaders
 * (text IR, ONNX).
 */
#ifndef SM_FILE_H
#define SM_FILE_H

#include <stddef.h>

#include "smelt.h"

/* Reads the file at path into *data (allocated with sm_malloc, with a NUL
 * after the last byte so text can be scanned safely; *len excludes it).
 * Files larger than max bytes fail with SMELT_ERR_LIMIT; open and read
 * errors fail with SMELT_ERR_IO naming the path and the system's reason;
 * a FIFO without a writer reads as empty rather than hanging. */
smelt_status sm_read_file(smelt_ctx_t *ctx, const char *path, size_t max,
                          char **data, size_t *len);
/* As sm_read_file, but path must name a regular file: a FIFO, device or
 * socket fails at once with SMELT_ERR_IO instead of being read (or waited
 * on). Opening never blocks, in either function. */
smelt_status sm_read_regular_file(smelt_ctx_t *ctx, const char *path,
                                  size_t max, char **data, size_t *len);

#endif
