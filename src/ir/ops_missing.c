/* TEMPORARY: weak placeholders so the tree links while op families are written. */
#include "ir/op.h"
#include "core/status.h"

