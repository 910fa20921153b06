/*
 * tiledispatch: decides how a GPU tile primitive is lowered and writes the
 * code for it.  The one header to include.
 *
 * Ownership, once for all: functions never take ownership of their
 * arguments; every *_new / *_load / *_parse that hands out an object has a
 * matching *_free that accepts NULL; strings returned through char ** are
 * malloc'd and freed with free(); const char * results are owned by the
 * object they came from and live as long as it does.
 *
 * Errors: every int-returning function returns 0 or a negative TD_E* code
 * (td_error.h); human-readable text goes into a td_diag the caller passes.
 */
#ifndef TILEDISPATCH_H
#define TILEDISPATCH_H

#include "tiledispatch/td_alloc.h"
#include "tiledispatch/td_error.h"
#include "tiledispatch/td_call.h"
#include "tiledispatch/td_ir.h"
#include "tiledispatch/td_module.h"
#include "tiledispatch/td_registry.h"

#define TD_VERSION_STRING "0.1.0"

#endif
