/*
 * The permute_layout op in the built-in registry (variants/permute_ops.c):
 * registered, of kind TD_OP_KIND_PERMUTE; its operand check refuses, before
 * any candidate, what no variant could lower (a second source, a scalar
 * source, config keys, which upstream silently ignores), with the position
 * of the offending operand or key; the call script reads as upstream's
 * Tx.warp.permute_layout(dst, src).  Its one variant, warp_xor_swizzle,
 * has no predicates: every refusal is the emitter's decline, with
 * upstream's text, and explain shows the row as "declined by emitter".
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tiledispatch.h"
#include "op_fixture.h"

/* A warp-scope permute of the 4x32 uint32 tile A (row-major) into B
 * (transposed within the tile), then `tail` (more keys). */
static td_call *permute_call(const char *tail)
{
    char text[1024];
    snprintf(text, sizeof text,
             "op: permute_layout\n"                                  /* 1 */
             "target: cuda\n"                                        /* 2 */
             "scope: warp\n"                                         /* 3 */
             "launch: {threadIdx.x: 32}\n"                           /* 4 */
             "buffers:\n"                                            /* 5 */
             "  A: {scope: shared, dtype: uint32, shape: [4, 32], "
             "layout: \"S[(4, 32):(32, 1)]\"}\n"                     /* 6 */
             "  B: {scope: shared, dtype: uint32, shape: [4, 32], "
             "layout: \"S[(4, 32):(1, 4)]\"}\n"                      /* 7 */
             "dst: B\n"                                              /* 8 */
             "%s",
             tail);
    return fx_parse_call("p.yaml", text);
}

static void test_registered(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    const td_op_desc *op = td_registry_op(reg, "permute_layout");
    assert_non_null(op);
    assert_int_equal(op->kind, TD_OP_KIND_PERMUTE);
    assert_non_null(op->check);
    td_registry_free(reg);
}

static void test_script(void **state)
{
    (void)state;
    td_call *call = permute_call("src: \"A[0:4, 0:32]\"\n");
    char script[256];
    td_call_format_script(call, script, sizeof script);
    assert_string_equal(script,
                        "Tx.warp.permute_layout(B[0:4, 0:32], A[0:4, 0:32])");
    td_call_free(call);
}

static void test_refused(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    td_call *call = permute_call("src: A\nconfig: {swizzle: 1}\n");
    fx_expect_refused(reg, call, 10, 10,
                   "op 'permute_layout': unknown config key 'swizzle' "
                   "(permute_layout takes no config keys)");
    td_call_free(call);
    call = permute_call("srcs: [A, A]\n");
    fx_expect_refused(reg, call, 9, 11,
                   "op 'permute_layout': expects one source region, "
                   "got 2 operands");
    td_call_free(call);
    td_registry_free(reg);
}

/* A call over buffers A (src) and B (dst) declared by `bufs`, at `scope`,
 * with `launch` and the regions `dst`/`src`; the variant's row must be
 * `status` with `detail` (DECLINED: the reason; SELECTED: the note). */
typedef struct perm_case {
    const char *what;
    const char *scope, *launch, *bufs, *dst, *src;
    td_cand_status status;
    const char *detail;
} perm_case;

#define U32_LIN "{scope: shared, dtype: uint32, shape: [4, 32], layout: \"S[(4, 32):(32, 1)]\"}"
#define U32_TR "{scope: shared, dtype: uint32, shape: [4, 32], layout: \"S[(4, 32):(1, 4)]\"}"

static const perm_case cases[] = {
    {"sf 128 u32", "warp", "{threadIdx.x: 32}",
     "  A: " U32_LIN "\n  B: " U32_TR "\n", "B", "A", TD_CAND_SELECTED,
     "P=4 per lane, XOR bits k=2 (shift 3, mask 3); shared ld/st of 32-bit "
     "containers"},
    {"identity", "warp", "{threadIdx.x: 32}",
     "  A: " U32_LIN "\n  B: " U32_LIN "\n", "B", "A", TD_CAND_SELECTED,
     "P=4 per lane, XOR bits k=0 (shift 5, mask 0); shared ld/st of 32-bit "
     "containers"},
    {"cta scope", "cta", "{threadIdx.x: 128}",
     "  A: " U32_LIN "\n  B: " U32_TR "\n", "B", "A", TD_CAND_DECLINED,
     "scope 'cta' is not 'warp'"},
    {"threadIdx.y", "warp", "{threadIdx.x: 32, threadIdx.y: 2}",
     "  A: " U32_LIN "\n  B: " U32_TR "\n", "B", "A", TD_CAND_DECLINED,
     "multi-dim threadIdx is not supported"},
    {"dtype", "warp", "{threadIdx.x: 32}",
     "  A: " U32_LIN "\n  B: {scope: shared, dtype: uint16, shape: [4, 32], "
     "layout: \"S[(4, 32):(1, 4)]\"}\n",
     "B", "A", TD_CAND_DECLINED, "dtype mismatch: dst=uint16 vs src=uint32"},
    {"shape", "warp", "{threadIdx.x: 32}",
     "  A: " U32_LIN "\n  B: {scope: shared, dtype: uint32, shape: [8, 16], "
     "layout: \"S[(8, 16):(1, 8)]\"}\n",
     "B", "A", TD_CAND_DECLINED,
     "slice shape mismatch: src=[4, 32] vs dst=[8, 16]"},
    /* No layout: TVM's default, the row-major TileLayout. */
    {"no layout", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: uint32, shape: [4, 32]}\n  B: " U32_TR
     "\n",
     "B", "A", TD_CAND_SELECTED,
     "P=4 per lane, XOR bits k=2 (shift 3, mask 3); shared ld/st of 32-bit "
     "containers"},
    {"swizzled src", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: uint32, shape: [4, 32], layout: "
     "\"Swizzle(2, 2, 4)\"}\n  B: " U32_TR "\n",
     "B", "A", TD_CAND_DECLINED,
     "src buffer's layout is not a plain TileLayout"},
    {"swizzled dst", "warp", "{threadIdx.x: 32}",
     "  A: " U32_LIN "\n  B: {scope: shared, dtype: uint32, shape: [4, 32], "
     "layout: \"Swizzle(2, 2, 3)\"}\n",
     "B", "A", TD_CAND_DECLINED,
     "dst buffer's layout is not a plain TileLayout"},
    {"volume", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: uint32, shape: [3, 10], layout: "
     "\"S[(3, 10):(10, 1)]\"}\n  B: {scope: shared, dtype: uint32, "
     "shape: [3, 10], layout: \"S[(3, 10):(1, 3)]\"}\n",
     "B", "A", TD_CAND_DECLINED, "volume 30 not divisible by warp size 32"},
    {"P = 3", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: uint32, shape: [3, 32], layout: "
     "\"S[(3, 32):(32, 1)]\"}\n  B: {scope: shared, dtype: uint32, "
     "shape: [3, 32], layout: \"S[(3, 32):(1, 3)]\"}\n",
     "B", "A", TD_CAND_DECLINED,
     "per-thread count 3 must be power of 2 in [1, 32]"},
    {"P = 64", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: uint32, shape: [64, 32], layout: "
     "\"S[(64, 32):(32, 1)]\"}\n  B: {scope: shared, dtype: uint32, "
     "shape: [64, 32], layout: \"S[(64, 32):(1, 64)]\"}\n",
     "B", "A", TD_CAND_DECLINED,
     "per-thread count 64 must be power of 2 in [1, 32]"},
    {"aliased src", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: uint32, shape: [4, 32], layout: "
     "\"S[(4, 32):(0, 1)]\"}\n  B: " U32_TR "\n",
     "B", "A", TD_CAND_DECLINED,
     "src layout (regrouped) is not a bijection on the slice"},
    {"aliased dst", "warp", "{threadIdx.x: 32}",
     "  A: " U32_LIN "\n  B: {scope: shared, dtype: uint32, shape: [4, 32], "
     "layout: \"S[(4, 32):(0, 1)]\"}\n",
     "B", "A", TD_CAND_DECLINED, "dst layout is not a bijection on the slice"},
    {"float16 banks", "warp", "{threadIdx.x: 32}",
     "  A: {scope: shared, dtype: float16, shape: [4, 32], layout: "
     "\"S[(4, 32):(32, 1)]\"}\n  B: {scope: shared, dtype: float16, "
     "shape: [4, 32], layout: \"S[(4, 32):(1, 4)]\"}\n",
     "B", "A", TD_CAND_DECLINED,
     "no XOR-bits k \xe2\x88\x88 [0, log2(P)=2] makes both phases "
     "bank-free"},
};

static void test_declines(void **state)
{
    (void)state;
    td_registry *reg = fx_default_registry();
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const perm_case *c = &cases[i];
        char text[2048];
        snprintf(text, sizeof text,
                 "op: permute_layout\ntarget: cuda\narch: sm_90a\n"
                 "scope: %s\nlaunch: %s\nbuffers:\n%sdst: %s\nsrc: %s\n",
                 c->scope, c->launch, c->bufs, c->dst, c->src);
        td_call *call = NULL;
        td_diag d;
        td_diag_clear(&d);
        if (td_call_parse("c.yaml", text, strlen(text), &call, &d) != 0)
            fail_msg("%s: %d:%d: %s", c->what, d.line, d.col, d.msg);
        td_explain *ex = NULL;
        assert_int_equal(td_explain_call(reg, call, &ex, &d), 0);
        assert_int_equal(td_explain_nrows(ex), 1);
        const td_explain_row *row = td_explain_get(ex, 0);
        assert_string_equal(row->variant, "warp_xor_swizzle");
        assert_int_equal(row->npreds, 0);
        if (row->status != c->status || strcmp(row->detail, c->detail) != 0)
            fail_msg("%s: %s '%s'", c->what,
                     td_cand_status_name(row->status), row->detail);
        if (c->status == TD_CAND_DECLINED) {
            char *out = NULL;
            assert_int_equal(td_explain_format(ex, TD_EXPLAIN_TEXT, &out),
                             0);
            assert_non_null(strstr(out, "declined by emitter"));
            td_free(out);
        }
        td_explain_free(ex);
        td_call_free(call);
    }
    td_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registered),
        cmocka_unit_test(test_script),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_declines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
