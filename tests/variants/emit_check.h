/*
 * Helpers for the shared and packed emitter tests: calls parsed from YAML
 * text (the public loader), emitted with one variant module, printed in
 * both languages; and text assertions.  Include after <cmocka.h>.
 */
#ifndef TD_TEST_VARIANTS_EMIT_CHECK_H
#define TD_TEST_VARIANTS_EMIT_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledispatch.h"
#include "registry_internal.h"

#include "../common/td_test_alloc.h"

static const td_op_desc ec_sum = {.name = "sum", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_SUM};
static const td_op_desc ec_max = {.name = "max", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MAX};
static const td_op_desc ec_min = {.name = "min", .kind = TD_OP_KIND_REDUCTION, .combiner = TD_COMBINE_MIN};

static inline const td_op_desc *ec_op(const td_call *c)
{
    if (strcmp(c->op, "max") == 0)
        return &ec_max;
    if (strcmp(c->op, "min") == 0)
        return &ec_min;
    return &ec_sum;
}

/* Parses a call from text; fails the test on a loader error. */
static inline td_call *ec_parse(const char *text)
{
    td_call *c = NULL;
    td_diag diag;
    td_diag_clear(&diag);
    int rc = td_call_parse("test.yaml", text, strlen(text), &c, &diag);
    if (rc != 0)
        fail_msg("call did not load (%d): %s", rc, diag.msg);
    return c;
}

typedef struct ec_out {
    char *cuda;
    char *tirx;
    char *prelude;
} ec_out;

/* Emits c with impl and prints both languages; fails unless it accepts. */
static inline ec_out ec_emit(const td_impl_desc *impl, const td_call *c)
{
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    td_reason why;
    memset(&why, 0, sizeof why);
    int rc = td__impl_emit(impl, c, ec_op(c), ir, &why);
    if (rc != 0)
        fail_msg("%s emitter returned %d: %s", impl->name, rc, why.text);
    ec_out o = {NULL, NULL, NULL};
    assert_int_equal(td_ir_print(ir, TD_LANG_CUDA, 0, &o.cuda, &o.prelude),
                     0);
    assert_int_equal(td_ir_print(ir, TD_LANG_TIRX, 0, &o.tirx, NULL), 0);
    td_ir_free(ir);
    return o;
}

static inline void ec_free(ec_out *o)
{
    td_free(o->cuda);
    td_free(o->tirx);
    td_free(o->prelude);
}

/* Asserts that the emitter declines c with exactly `reason`. */
static inline void ec_declines(const td_impl_desc *impl, const td_call *c,
                               const td_op_desc *op, const char *reason)
{
    td_ir *ir = td_ir_new();
    assert_non_null(ir);
    td_reason why;
    memset(&why, 0, sizeof why);
    assert_int_equal(td__impl_emit(impl, c, op, ir, &why), TD_EDECLINED);
    assert_string_equal(why.text, reason);
    td_ir_free(ir);
}

static inline void ec_has(const char *text, const char *needle)
{
    if (strstr(text, needle) == NULL)
        fail_msg("expected\n  %s\nin:\n%s", needle, text);
}

static inline void ec_lacks(const char *text, const char *needle)
{
    if (strstr(text, needle) != NULL)
        fail_msg("did not expect\n  %s\nin:\n%s", needle, text);
}

static inline size_t ec_count(const char *text, const char *needle)
{
    size_t n = 0;
    for (const char *p = strstr(text, needle); p != NULL;
         p = strstr(p + 1, needle))
        n++;
    return n;
}

/* ---- allocation failure injection ------------------------------------ */

/*
 * Emits c with impl while failing the Nth allocation, for every N until
 * the emit succeeds: each failure must come back as TD_ENOMEM (or a NULL
 * IR) and leak nothing (the shared counting allocator,
 * tests/common/td_test_alloc.h, counts live blocks).
 */
static inline void ec_alloc_torture(const td_impl_desc *impl, const td_call *c)
{
    for (long n = 1; n < 100000; n++) {
        alloc_install();
        alloc_arm(n);
        td_ir *ir = td_ir_new();
        int rc = TD_ENOMEM;
        if (ir != NULL) {
            td_reason why;
            memset(&why, 0, sizeof why);
            rc = td__impl_emit(impl, c, ec_op(c), ir, &why);
            td_ir_free(ir);
        }
        td_set_allocator(NULL);
        if (g_ca.live != 0)
            fail_msg("allocation %ld failed: %ld block(s) leaked", n,
                     g_ca.live);
        if (rc == 0 && !g_ca.failed)
            return; /* no allocation failed: done */
        if (rc != TD_ENOMEM)
            fail_msg("allocation %ld failed: emit returned %d", n, rc);
    }
    fail_msg("emit never succeeded under allocation failure");
}

#endif
