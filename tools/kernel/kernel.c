/*
 * Self-checking CUDA programs (contract section 6).
 *
 * td_kernel_program dispatches a call, prints the winner's IR as CUDA and
 * wraps it in a complete .cu file:
 *
 *   - one __global__ kernel launched with the call's launch parameters;
 *   - every buffer the call touches (src and dst) lives in global memory,
 *     one copy per scope instance, and is staged into the call's storage:
 *     register buffers through their layouts (a table, generated here from
 *     the layout's inverse map, says which logical element each thread's
 *     register slot holds), shared buffers by a cooperative copy and a
 *     barrier; a global buffer of a copy call is not staged: it is one
 *     array, a kernel parameter named as the body indexes it, that every
 *     instance addresses;
 *   - the emitted body runs, then every buffer is staged back: a register
 *     buffer writes every thread's every slot, so each replica of each
 *     element is checked on its own;
 *   - a host main runs rounds (the family's count; --rounds N caps them),
 *     each filling the inputs deterministically (--data exact: data chosen
 *     so that the check is exact where it can be, docs/verification.md
 *     "What a PASS means"; --data random: normal values checked against
 *     the worst-case bound; --seed N), running the kernel and computing
 *     the reference in double precision, and prints one line,
 *     "PASS name max_err=E" or "FAIL name round=R ...", exiting 0 or 1; with
 *     no usable device (cudaGetDeviceCount fails or finds none, or a CUDA
 *     call fails with a no-device / driver / no-kernel-image error) it
 *     prints "SKIP name: no CUDA device (reason)" and exits 77; a bad
 *     option exits 2.
 *
 * Scope instances.  Register calls: thread scope makes every thread an
 * instance, warp scope every 32 threads, warpgroup every 128, cta every
 * block.  Shared calls have the same instances: the block declares one
 * copy of each shared buffer per instance (NAME_all), each thread points
 * NAME_ptr, the name the emitted body indexes, at its instance's copy, and
 * the instance's threads stage that copy in and out.  The shared body uses
 * threadIdx.x modulo the scope's threads as its thread id (none at thread
 * scope), so each instance reduces only its own copy.  docs/verification.md
 * describes the program in full.
 *
 * The text is deterministic: the same call gives the same bytes.
 *
 * This file is the driver: it dispatches, works out the launch and its
 * scope instances, picks the op's family from the table below and runs
 * the family's plan, then has write.c write the program around the
 * emitted body with the family's hooks (kp.h).  It never looks at what a
 * family keeps.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kp.h"
#include "model.h"
#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"

/* The families, one row each: a new family is its module and a row. */
static const kp_family *const kp_families[] = {
    &td__kp_reduce,
    &td__kp_ewise,
    &td__kp_copy,
    &td__kp_gemm,
};
#define KP_NFAMILIES (sizeof kp_families / sizeof kp_families[0])

/* The case name: the call file's base name without .yaml / .yml, reduced to
 * characters that are safe inside a C string literal and a report. */
static void kp_case_name(const td_call *call, char *out, size_t cap)
{
    const char *f = call->file;
    const char *slash = strrchr(f, '/');
    if (slash != NULL)
        f = slash + 1;
    size_t n = strnlen(f, sizeof call->file);
    if (n > 5 && memcmp(f + n - 5, ".yaml", 5) == 0)
        n -= 5;
    else if (n > 4 && memcmp(f + n - 4, ".yml", 4) == 0)
        n -= 4;
    if (n == 0) {
        td__strlcpy(out, "call", cap);
        return;
    }
    size_t j = 0;
    for (size_t i = 0; i < n && j + 1 < cap; i++) {
        char c = f[i];
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
                  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.';
        out[j++] = ok ? c : '_';
    }
    out[j] = '\0';
}

/* Launch: block and grid extents, threads per instance. */
static int kp_launch(kp_plan *p, td_diag *diag)
{
    const td_call *c = p->call;
    for (int t = 0; t < TD_LAUNCH_COUNT; t++) {
        const td_launch_param *lp = &c->launch[t];
        if (lp->present && lp->symbolic)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "launch parameter %s is symbolic; kernel programs "
                               "need numbers",
                               td_launch_tag_name((td_launch_tag)t));
        if (lp->present && lp->extent < 1)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "launch parameter %s must be >= 1 (got %" PRId64
                               ")",
                               td_launch_tag_name((td_launch_tag)t), lp->extent);
    }
    int64_t dflt;
    switch (c->scope) {
    case TD_SCOPE_THREAD: p->tpi = 1; dflt = 1; break;
    case TD_SCOPE_WARP: p->tpi = 32; dflt = 32; break;
    case TD_SCOPE_WARPGROUP: p->tpi = 128; dflt = 128; break;
    case TD_SCOPE_CTA: p->tpi = 0; dflt = 1; break;
    default:
        return td__kp_fail(diag, c, TD_EINVAL,
                           "exec scope %s is not supported by kernel programs",
                           td_exec_scope_name(c->scope));
    }
    for (int i = 0; i < 3; i++) {
        const td_launch_param *tp = &c->launch[TD_LAUNCH_TX + i];
        const td_launch_param *bp = &c->launch[TD_LAUNCH_BX + i];
        p->block[i] = tp->present ? tp->extent : (i == 0 ? dflt : 1);
        p->grid[i] = bp->present ? bp->extent : 1;
        if (p->block[i] > KP_MAX_THREADS || p->grid[i] > KP_MAX_GRID)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "launch too large: block dimension %" PRId64
                               ", grid dimension %" PRId64,
                               p->block[i], p->grid[i]);
    }
    p->nthreads = p->block[0] * p->block[1] * p->block[2];
    p->nblocks = p->grid[0] * p->grid[1] * p->grid[2];
    p->csize = 1;
    if (c->cluster[0] > 0) {
        for (int i = 0; i < 3; i++) {
            p->cluster[i] = c->cluster[i] > 0 ? c->cluster[i] : 1;
            p->csize *= p->cluster[i];
            if (p->grid[i] % p->cluster[i] != 0)
                return td__kp_fail(diag, c, TD_EINVAL,
                                   "grid dimension %d (%" PRId64 " blocks) "
                                   "is not a whole number of clusters of %"
                                   PRId64,
                                   i, p->grid[i], p->cluster[i]);
        }
        /* 8 CTAs is the portable cluster size; more needs an opt-in
         * and may not fit the device. */
        if (p->csize > 8)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "a cluster of %" PRId64 " CTAs (kernel "
                               "programs launch at most 8, the portable "
                               "size)",
                               p->csize);
    }
    if (p->nthreads > KP_MAX_THREADS)
        return td__kp_fail(diag, c, TD_ELIMIT,
                           "%" PRId64 " threads per block (at most %d)",
                           p->nthreads, KP_MAX_THREADS);
    if (p->tpi == 0)
        p->tpi = p->nthreads;
    return 0;
}


/* The family whose programs check ops of this kind, or NULL. */
static const kp_family *kp_family_of(td_op_kind kind)
{
    for (size_t i = 0; i < KP_NFAMILIES; i++)
        if (kp_families[i]->kind == kind)
            return kp_families[i];
    return NULL;
}

/* "op 'x' is neither a reduction nor elementwise": the families' names. */
static int kp_no_family(td_diag *diag, const td_call *call)
{
    char what[256];
    size_t n = 0;
    for (size_t i = 0; i < KP_NFAMILIES && n < sizeof what; i++) {
        int k = snprintf(what + n, sizeof what - n, "%s%s", i ? " nor " : "",
                         kp_families[i]->what);
        if (k < 0)
            break;
        n += (size_t)k;
    }
    return td__fail(diag, TD_EINVAL, call->file,
                    "kernel: op '%.*s' is neither %s", (int)TD_NAME_MAX,
                    call->op, what);
}

int td_kernel_program(const td_registry *reg, const td_call *call,
                      char **out, td_diag *diag)
{
    if (out == NULL)
        return TD_EINVAL;
    *out = NULL;
    if (reg == NULL || call == NULL)
        return td__fail(diag, TD_EINVAL, NULL, "kernel: no registry or call");
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    int err = td_dispatch(reg, call, &res, diag);
    if (err != 0)
        return err;
    for (int i = 0; i < call->nbuffers; i++) {
        if (strcmp(call->buffers[i].scope, "tmem") != 0)
            continue;
        /* Tensor memory is sm_100a's: no GPU here runs a program, and the
         * CPU stand-in has no tensor memory to stand in with. */
        td_ir_free(res.ir);
        return td__fail(diag, TD_EINVAL, call->file,
                        "kernel: no self-checking program for tensor memory "
                        "(buffer %s; variant %s): tcgen05 needs an sm_100a "
                        "GPU; `tiledispatch emit` prints the body",
                        call->buffers[i].name,
                        res.variant != NULL ? res.variant : "?");
    }
    const td_op_desc *op = td_registry_op(reg, call->op);
    const kp_family *fam = op != NULL ? kp_family_of(op->kind) : NULL;
    /* A permute_layout moves each logical element of src's region to the
     * same logical element of dst's, bits unchanged, only the layouts
     * differing: exactly what the copy program checks (kernel_copy.c), so
     * it is the copy's program. */
    if (op != NULL && op->kind == TD_OP_KIND_PERMUTE)
        fam = &td__kp_copy;
    /* A body with tensor maps is a TMA copy: its maps are encoded on the
     * host and its protocol written around it (kernel_copy_async.c).  A
     * cluster copy writes into a peer CTA: its protocol spans the
     * cluster (kernel_dsmem.c). */
    if (fam != NULL && fam->kind == TD_OP_KIND_COPY &&
        td_ir_tensor_map_count(res.ir) > 0)
        fam = &td__kp_copy_async;
    else if (fam != NULL && fam->kind == TD_OP_KIND_COPY &&
             res.variant != NULL && strcmp(res.variant, "dsmem") == 0)
        fam = &td__kp_dsmem;
    if (fam != NULL && call->cluster[0] != 0 && fam != &td__kp_dsmem &&
        fam != &td__kp_copy_async) {
        /* Only the cluster copies need their CTAs together; a program of
         * another family checks each CTA on its own. */
        td_ir_free(res.ir);
        return td__fail(diag, TD_EINVAL, call->file,
                        "kernel: no self-checking program for a cluster "
                        "launch of %s yet (variant %s); `tiledispatch "
                        "emit` prints the body",
                        fam->what, res.variant != NULL ? res.variant : "?");
    }
    if (fam == NULL) {
        td_ir_free(res.ir);
        return kp_no_family(diag, call);
    }

    kp_plan *p = td__calloc(1, sizeof *p);
    if (p == NULL) {
        td_ir_free(res.ir);
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    }
    p->call = call;
    p->op = op;
    p->fam = fam;
    p->variant = res.variant != NULL ? res.variant : "?";
    kp_case_name(call, p->name, sizeof p->name);

    char *body = NULL, *prelude = NULL;
    td_buf o;
    td__buf_init(&o);
    err = kp_launch(p, diag);
    if (err == 0)
        err = fam->plan(p, res.ir, diag);
    if (err == 0) {
        err = td_ir_print(res.ir, TD_LANG_CUDA, 4, &body, &prelude);
        if (err != 0)
            err = td__fail(diag, err, call->file,
                           "kernel: printing the body failed: %s",
                           td_strerror(err));
    }
    if (err == 0) {
        err = td__kp_write(&o, p, body != NULL ? body : "",
                           prelude != NULL ? prelude : "");
        /* Handed over in allocator-hook memory; the caller releases it
         * with td_free (td_kernel.h). */
        if (err == 0)
            err = td__buf_take(&o, out);
        if (err != 0)
            err = td__fail(diag, err, call->file,
                           "kernel: writing the program failed: %s",
                           td_strerror(err));
    }
    td__buf_free(&o);
    td_free(body);
    td_free(prelude);
    for (int i = 0; i < p->nbufs; i++) {
        td__free(p->bufs[i].map);
        td__free(p->bufs[i].phys);
        td__free(p->bufs[i].inv);
    }
    if (fam->free != NULL)
        fam->free(p);
    td__kp_fam_free(p);
    td__free(p);
    td_ir_free(res.ir);
    return err;
}
