/* TEMPORARY: weak placeholders for public functions still being written. */
#include "core/status.h"
#define MISSING(name) sm_err(ctx, SMELT_ERR_UNSUPPORTED, name " not written yet")
