/*
 * Prints the TIRx of every asynchronous IR node (and of a second TMA map's
 * host statements) for tests/upstream/async_tirx.py, which parses it back
 * with TVM 0.27 and requires TVM to print the same statements.  The body's
 * buffers are the script's: A (256, 64) float16 global, A_smem (128, 64)
 * float16 shared.dyn, P (128, 64) float16 shared, mbar (4,) uint64 shared,
 * and the int32 parameter cbx.  Output: the body, a line "### host", the
 * host statements of its maps.
 */
#include <stdio.h>

#include "tiledispatch.h"
#include "codegen_internal.h"
#include "tensor_map.h"

/* f16 A[256, 64], 128 rows into a [128, 64] tile (swizzled or not). */
static int plan(td_tmap *m, int swizzle128)
{
    td_tmap_request r;
    td__tmap_request_init(&r);
    r.dtype = "float16";
    r.rank = 2;
    r.shape[0] = 256;
    r.shape[1] = 64;
    r.extent[0] = 128;
    r.extent[1] = 64;
    r.sm = 90;
    if (swizzle128)
        r.smem = TD_TMAP_SMEM_SW128;
    td_diag d;
    td_diag_clear(&d);
    return td__tmap_plan(&r, m, &d);
}

static td_ir *build(void)
{
    td_ir *ir = td_ir_new();
    td_ir_buf *A = td_ir_buffer(ir, "A", TD_F16, "global", 2,
                                (int64_t[]){256, 64});
    td_ir_buf *S = td_ir_buffer(ir, "A_smem", TD_F16, "shared.dyn", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *P = td_ir_buffer(ir, "P", TD_F16, "shared", 2,
                                (int64_t[]){128, 64});
    td_ir_buf *mbar = td_ir_buffer(ir, "mbar", TD_U64, "shared", 1,
                                   (int64_t[]){4});
    td_tmap m, sw;
    if (plan(&m, 0) != 0 || plan(&sw, 1) != 0)
        return ir;
    const td_ir_tmap *map = td_ir_tensor_map(ir, A, &m);
    const td_ir_tmap *swm = td_ir_tensor_map(ir, A, &sw);
    td_expr *cbx = td_param(ir, "cbx", TD_I32);
    td_ir_prefetch_tensormap(ir, map);
    td_ir_mbar_init(ir, (td_ir_addr){mbar, td_int(ir, 1)}, td_int(ir, 1));
    td_ir_fence_mbarrier_init(ir);
    td_ir_cluster_sync(ir);
    td_var *k = td_ir_for(ir, "k", td_int(ir, 8), TD_LOOP_SERIAL);
    td_expr *st = td_mod(ir, td_var_ref(ir, k), td_int(ir, 4));
    td_ir_addr bar = {mbar, st};
    td_ir_mbar_arrive_expect_tx(ir, bar, td_int(ir, 16384));
    td_ir_tma t = {.map = map,
                   .coords = {td_int(ir, 0),
                              td_mul(ir, td_var_ref(ir, k), td_int(ir, 128))},
                   .smem = {S, td_int(ir, 0)},
                   .mbar = bar};
    td_ir_tma_load(ir, &t);
    t.map = swm;
    t.policy = td_const_u(ir, TD_U64, 0x14F0000000000000ull);
    td_ir_tma_load(ir, &t);
    t.cta_mask = td_const_u(ir, TD_U16, 3);
    td_ir_tma_load(ir, &t);
    t.cta_mask = NULL;
    t.policy = NULL;
    t.cta_group = 2;
    t.smem = (td_ir_addr){S, td_mul(ir, st, td_int(ir, 64))};
    td_ir_tma_load(ir, &t);
    td_ir_mbar_wait(ir, bar,
                    td_mod(ir, td_div(ir, td_var_ref(ir, k), td_int(ir, 4)),
                           td_int(ir, 2)));
    td_ir_end_for(ir);
    td_ir_fence_proxy_async(ir);
    td_ir_tma u = {.map = map, .coords = {td_int(ir, 0), td_int(ir, 64)},
                   .smem = {P, td_int(ir, 0)}};
    for (int op = TD_TMA_STORE; op < TD_TMA_OP_COUNT; op++) {
        u.op = (td_tma_op)op;
        td_ir_tma_store(ir, &u);
    }
    u.policy = td_const_u(ir, TD_U64, 0x12F0000000000000ull);
    td_ir_tma_store(ir, &u);
    td_ir_bulk_commit(ir);
    td_ir_bulk_wait_read(ir, 1);
    td_expr *peer = td_sub(ir, td_int(ir, 1), cbx);
    td_var *rm = td_ir_mapa(ir, "remote_mbar", (td_ir_addr){mbar, td_int(ir, 0)},
                            peer);
    td_var *rd = td_ir_mapa(ir, "remote_dst", (td_ir_addr){S, td_int(ir, 0)},
                            td_int(ir, 1));
    td_ir_bulk_s2c(ir, td_var_ref(ir, rd), (td_ir_addr){P, td_int(ir, 32)},
                   td_int(ir, 64), td_var_ref(ir, rm));
    return ir;
}

int main(void)
{
    td_ir *ir = build();
    char *b = NULL, *p = NULL, *h = NULL;
    int err = td_ir_status(ir);
    if (err == 0)
        err = td_ir_print(ir, TD_LANG_TIRX, 0, &b, &p);
    if (err == 0)
        err = td_ir_print_tensor_maps(ir, TD_LANG_TIRX, &h);
    if (err == 0)
        printf("%s### host\n%s", b, h);
    else
        fprintf(stderr, "async_tirx_dump: %s\n", td_strerror(err));
    td_free(b);
    td_free(p);
    td_free(h);
    td_ir_free(ir);
    return err == 0 ? 0 : 1;
}
