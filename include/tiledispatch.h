/*
 * tiledispatch: decides how a GPU tile primitive is lowered and writes the
 * code for it.  The one header to include.
 *
 * Ownership, once for all: functions never take ownership of their
 * arguments; every *_new / *_load / *_parse that hands out an object has a
 * matching *_free that accepts NULL; strings returned through char ** are
 * allocated through the allocator hook (td_alloc.h) and released with
 * td_free() (never free(): an embedder's allocator need not be malloc);
 * const char * results are owned by the object they came from and live as
 * long as it does.
 *
 * Versions: TD_VERSION_* (td_version.h, generated from the project
 * version) describe these headers; td_version() the library in use.
 * Only functions declared with TD_API (td_export.h) are exported.
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
#include "tiledispatch/td_version.h"

#endif
