/*
 * tiledispatch: the export macro.
 *
 * The library is compiled with -fvisibility=hidden; TD_API in front of a
 * declaration in a public header puts that function into the shared
 * library's dynamic symbol table.  Every public function is declared with
 * it, and nothing else is exported (tests/lib/check_exports.py checks
 * both).  The same attribute is harmless in programs that use the library
 * and in the static library.  Define TD_API before including a tiledispatch
 * header to override it.
 */
#ifndef TILEDISPATCH_TD_EXPORT_H
#define TILEDISPATCH_TD_EXPORT_H

#ifndef TD_API
#if defined(__GNUC__) && __GNUC__ >= 4
#define TD_API __attribute__((visibility("default")))
#else
#define TD_API
#endif
#endif

#endif
