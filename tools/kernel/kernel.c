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
 *     barrier;
 *   - the emitted body runs, then every buffer is staged back: a register
 *     buffer writes every thread's every slot, so each replica of each
 *     element is checked on its own;
 *   - a host main fills the inputs deterministically (--data exact: k/64,
 *     exact in every dtype; --data random: normal values, float sums
 *     checked against 2 n u sum|terms| + n tiny; --seed N), runs the
 *     kernel, computes the reference in double precision and prints one
 *     line, "PASS name max_err=E" or "FAIL name ...", exiting 0 or 1; with
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
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kp.h"
#include "layout.h"
#include "model.h"
#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"

/* Bytes of one instance's copy of a shared buffer in the block's dynamic
 * shared memory: rounded up to 16, so that every copy starts 16-byte
 * aligned (vector accesses of the emitted code rely on it). */
static int64_t kp_pitch(const kp_buf *kb)
{
    int64_t bytes = td__mul_sat(kb->elems, td_dtype_bits(kb->b->dtype) / 8);
    return bytes > INT64_MAX - 15 ? INT64_MAX : (bytes + 15) / 16 * 16;
}

/* The CUDA spelling of a dtype for the program's own declarations: the
 * printer's, so that the body's helpers and overloads see the types they
 * were written for.  NULL for a dtype the program cannot stage. */
const char *td__kp_ctype(td_dtype t)
{
    return (unsigned)t < TD_DTYPE_COUNT ? td_cuda_type_name(t) : NULL;
}

/* A value of dtype t written as a device expression (the gap filler). */
static const char *kp_gap(td_dtype t)
{
    switch (t) {
    case TD_F16: return "__float2half(77.0f)";
    case TD_BF16: return "__float2bfloat16(77.0f)";
    default: return "77";
    }
}

bool td__kp_ident(const char *s)
{
    if (s[0] == '\0' || !((s[0] >= 'A' && s[0] <= 'Z') ||
                          (s[0] >= 'a' && s[0] <= 'z') || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++) {
        char c = *p;
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9') || c == '_'))
            return false;
    }
    return true;
}

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

int td__kp_fail(td_diag *diag, const td_call *call, int code,
                   const char *fmt, ...)
{
    char msg[TD_DIAG_MSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return td__fail(diag, code, call->file, "kernel: %s", msg);
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
    if (p->nthreads > KP_MAX_THREADS)
        return td__kp_fail(diag, c, TD_ELIMIT,
                           "%" PRId64 " threads per block (at most %d)",
                           p->nthreads, KP_MAX_THREADS);
    if (p->tpi == 0)
        p->tpi = p->nthreads;
    return 0;
}

/* Owner callback state for the layout inverse map. */
typedef struct kp_owner {
    kp_buf *kb;
    int64_t tpi;
    int64_t elem;
    int bad;            /* 1 thread out of range, 2 slot, 3 shared slot */
    int64_t bad_tid, bad_slot;
} kp_owner;

static int kp_owner_cb(void *u, int64_t tid, int64_t slot)
{
    kp_owner *o = u;
    if (tid < 0 || tid >= o->tpi) {
        o->bad = 1;
    } else if (slot < 0 || slot >= o->kb->slots) {
        o->bad = 2;
    } else {
        int *cell = &o->kb->map[tid * o->kb->slots + slot];
        if (*cell >= 0 && *cell != (int)o->elem)
            o->bad = 3;
        else
            *cell = (int)o->elem;
    }
    if (o->bad != 0) {
        o->bad_tid = tid;
        o->bad_slot = slot;
        return TD_EINVAL;
    }
    return 0;
}

/* Register slots and the (thread, slot) -> element table of a register
 * buffer with a layout. */
static int kp_layout_map(kp_plan *p, kp_buf *kb, const td_ir *ir,
                         td_diag *diag)
{
    const td_call *c = p->call;
    const td_buffer *b = kb->b;
    int64_t nthr = 0, nslots = 0, size = 0;
    if (td__lay_check(&b->layout, NULL, 0) != 0 ||
        td__lay_size(&b->layout, &size) != 0 ||
        td__lay_bounds(&b->layout, &nthr, &nslots) != 0)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "the layout of %s cannot be mapped to threads and "
                           "registers",
                           b->name);
    if (size != kb->elems)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "the layout of %s covers %" PRId64
                           " elements, the buffer has %" PRId64,
                           b->name, size, kb->elems);
    if (nthr > p->tpi)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "the layout of %s spans %" PRId64
                           " threads, more than one scope instance (%" PRId64 ")",
                           b->name, nthr, p->tpi);
    int64_t decl = td_ir_buffer_elems(ir, b->name);
    kb->slots = nslots > decl ? nslots : decl;
    if (kb->slots < 1)
        kb->slots = 1;
    if (kb->slots > KP_MAX_SLOTS || td__mul_sat(kb->slots, p->tpi) > KP_MAX_TABLE)
        return td__kp_fail(diag, c, TD_ELIMIT,
                           "the register table of %s is too large (%" PRId64
                           " slots x %" PRId64 " threads)",
                           b->name, kb->slots, p->tpi);
    size_t n = (size_t)(kb->slots * p->tpi);
    kb->map = td__malloc(n * sizeof *kb->map);
    if (kb->map == NULL)
        return td__fail(diag, TD_ENOMEM, c->file, "out of memory");
    for (size_t i = 0; i < n; i++)
        kb->map[i] = -1;
    kp_owner o = {kb, p->tpi, 0, 0, 0, 0};
    for (int64_t e = 0; e < kb->elems; e++) {
        o.elem = e;
        int err = td__lay_owner_slots(&b->layout, e, kp_owner_cb, &o);
        if (o.bad == 1)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "the layout of %s puts an element on thread %" PRId64
                               " outside the scope instance (slot %" PRId64 ")",
                               b->name, o.bad_tid, o.bad_slot);
        if (o.bad == 2)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "the layout of %s puts an element on thread %" PRId64
                               " slot %" PRId64 " outside the register buffer",
                               b->name, o.bad_tid, o.bad_slot);
        if (o.bad == 3)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "the layout of %s puts two elements on thread %" PRId64
                               " slot %" PRId64,
                               b->name, o.bad_tid, o.bad_slot);
        if (err != 0)
            return td__kp_fail(diag, c, err == TD_ELIMIT ? TD_ELIMIT : TD_EINVAL,
                               "the layout of %s cannot be mapped to threads and "
                               "registers (element %" PRId64 ")",
                               b->name, e);
    }
    return 0;
}

kp_buf *td__kp_add_buf(kp_plan *p, const td_buffer *b, bool is_src,
                       bool is_dst)
{
    for (int i = 0; i < p->nbufs; i++) {
        if (p->bufs[i].b == b) {
            p->bufs[i].is_src |= is_src;
            p->bufs[i].is_dst |= is_dst;
            return &p->bufs[i];
        }
    }
    if (p->nbufs >= TD_MAX_BUFFERS)
        return NULL;
    p->bufs[p->nbufs] = (kp_buf){.b = b, .is_src = is_src, .is_dst = is_dst};
    return &p->bufs[p->nbufs++];
}

/* A reduction stages its src and its dst buffer. */
static int kp_buffers(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *c = p->call;
    const td_buffer *src = td__region_buffer(c, &c->src);
    const td_buffer *dst = td__region_buffer(c, &c->dst);
    if (src == NULL || dst == NULL)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "%s region does not name a buffer",
                           src == NULL ? "src" : "dst");
    p->nbufs = 0;
    td__kp_add_buf(p, src, true, false);
    td__kp_add_buf(p, dst, false, true);
    return td__kp_check_bufs(p, ir, diag);
}

/* Decides how each buffer is staged. */
int td__kp_check_bufs(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *c = p->call;
    int nshared = 0;
    for (int i = 0; i < p->nbufs; i++) {
        kp_buf *kb = &p->bufs[i];
        const td_buffer *b = kb->b;
        if (!td__kp_ident(b->name) || strlen(b->name) > 48)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "buffer name '%s' is not a short C identifier",
                               b->name);
        if (td__kp_ctype(b->dtype) == NULL)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "buffer %s has an unsupported dtype", b->name);
        if (strcmp(b->scope, "local") == 0) {
            kb->shared = false;
        } else if (strcmp(b->scope, "shared") == 0 ||
                   strcmp(b->scope, "shared.dyn") == 0) {
            kb->shared = true;
            nshared++;
        } else {
            return td__kp_fail(diag, c, TD_EINVAL,
                               "buffer %s: storage scope '%s' is not staged by "
                               "kernel programs (local and shared are)",
                               b->name, b->scope);
        }
        kb->elems = 1;
        for (int d = 0; d < b->ndim; d++)
            kb->elems = td__mul_sat(kb->elems, b->shape[d]);
        if (kb->elems < 1 || kb->elems > KP_MAX_ELEMS)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "buffer %s has %" PRId64 " elements (at most %"
                               PRId64 ")", b->name, kb->elems, KP_MAX_ELEMS);
        if (b->dtype == TD_F16)
            p->half = true;
        if (b->dtype == TD_BF16)
            p->bf16 = true;
    }
    if (nshared != 0 && nshared != p->nbufs)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "mixed shared and register buffers are not staged");
    if (p->nthreads % p->tpi != 0)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "%" PRId64 " threads per block is not a whole number "
                           "of scope instances of %" PRId64 " threads",
                           p->nthreads, p->tpi);
    p->ipb = p->nthreads / p->tpi;
    p->instances = p->ipb * p->nblocks;
    /* The body's own shared scratch (a cross-warp combine's partials) is
     * static shared memory: it counts against the same per-block limit. */
    p->scratch = td_ir_shared_scratch_bytes(ir);
    if (p->scratch > KP_SHARED_DEFAULT)
        return td__kp_fail(diag, c, TD_ELIMIT,
                           "the emitted body declares %" PRId64
                           " bytes of shared scratch (static shared memory "
                           "is at most %" PRId64 ")",
                           p->scratch, KP_SHARED_DEFAULT);
    if (nshared != 0) {
        /* Shared calls have the same instances as register calls: the
         * block holds one copy of every shared buffer per instance (each
         * warp of a warp-scope call reduces its own copy), so the block's
         * shared memory is ipb copies. */
        int64_t room = KP_MAX_SHARED - p->scratch;
        int64_t bytes = 0;
        for (int i = 0; i < p->nbufs; i++)
            bytes += kp_pitch(&p->bufs[i]);
        int64_t per = bytes;
        bytes = td__mul_sat(bytes, p->ipb);
        if (bytes > room && c->scope == TD_SCOPE_THREAD && per <= room &&
            p->block[1] == 1 && p->block[2] == 1) {
            /* Thread scope: every thread is an instance with its own
             * copy, and the body does not depend on the thread, so the
             * program launches as many threads as copies fit. */
            p->threads_asked = p->nthreads;
            p->block[0] = p->nthreads = p->ipb = room / per;
            p->instances = p->ipb * p->nblocks;
            bytes = per * p->ipb;
        }
        p->smem = bytes;
        if (bytes > room && p->scratch > 0)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "shared buffers need %" PRId64
                               " bytes per block (%" PRId64 " instance "
                               "cop%s) and the emitted body's scratch %"
                               PRId64 " more; at most %" PRId64 " together",
                               bytes, p->ipb, p->ipb == 1 ? "y" : "ies",
                               p->scratch, KP_MAX_SHARED);
        if (bytes > room)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "shared buffers need %" PRId64
                               " bytes per block (%" PRId64 " instance "
                               "cop%s; at most %" PRId64 ")",
                               bytes, p->ipb, p->ipb == 1 ? "y" : "ies",
                               KP_MAX_SHARED);
    }

    for (int i = 0; i < p->nbufs; i++) {
        kp_buf *kb = &p->bufs[i];
        if (td__mul_sat(kb->elems, p->instances) > KP_MAX_ELEMS)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "buffer %s: %" PRId64 " instances x %" PRId64
                               " elements is too large",
                               kb->b->name, p->instances, kb->elems);
        if (kb->shared)
            continue;
        if (kb->b->has_layout) {
            int err = kp_layout_map(p, kb, ir, diag);
            if (err != 0)
                return err;
        } else {
            kb->slots = kb->elems;
        }
        if (td__mul_sat(td__mul_sat(kb->slots, p->tpi), p->instances) >
            KP_MAX_ELEMS)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "buffer %s: %" PRId64 " register slots x %" PRId64
                               " threads is too large",
                               kb->b->name, kb->slots, p->instances * p->tpi);
    }
    return 0;
}

/* The reference's view of the reduction: reduced and spatial dims, and how
 * a dst element finds its spatial position. */
static int kp_reduction(kp_plan *p, td_diag *diag)
{
    const td_call *c = p->call;
    char why[TD_REASON_MAX];
    why[0] = '\0';
    if (td_call_axes(c, p->reduce, &p->nreduce, p->spatial, &p->nspatial, why,
                     sizeof why) != 0)
        return td__kp_fail(diag, c, TD_EINVAL, "%s",
                           why[0] != '\0' ? why : "invalid reduce axes");
    if (c->src.ndim < 1 || c->src.ndim > TD_MAX_RANK || c->dst.ndim < 1 ||
        c->dst.ndim > TD_MAX_RANK ||
        p->nreduce + p->nspatial != c->src.ndim)
        return td__kp_fail(diag, c, TD_EINVAL, "malformed regions");
    p->red_len = 1;
    p->spa_len = 1;
    for (int i = 0; i < p->nreduce; i++)
        p->red_len = td__mul_sat(p->red_len, c->src.extent[p->reduce[i]]);
    for (int i = 0; i < p->nspatial; i++)
        p->spa_len = td__mul_sat(p->spa_len, c->src.extent[p->spatial[i]]);
    int64_t dst_len = td__region_elems(&c->dst);
    /* Same rank with matching spatial extents: the dst keeps the reduced
     * dims (extent 1, or a lane extent a warp view replicates across), and
     * the result is broadcast along them.  Otherwise the dst region, read
     * row-major, lists the spatial positions in order. */
    p->bcast = c->dst.ndim == c->src.ndim;
    for (int i = 0; p->bcast && i < p->nspatial; i++) {
        int d = p->spatial[i];
        if (c->dst.extent[d] != c->src.extent[d])
            p->bcast = false;
    }
    if (!p->bcast && dst_len != p->spa_len)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "dst region holds %" PRId64
                           " elements, the reduction produces %" PRId64,
                           dst_len, p->spa_len);
    return 0;
}

static double kp_atol(const kp_plan *p, td_dtype t)
{
    switch (t) {
    case TD_F32:
        /* Packed sums (ftz) and shuffle trees reassociate: upstream uses
         * 1e-4 for them. */
        if (strcmp(p->variant, "packed_add_sum") == 0 ||
            p->call->scope != TD_SCOPE_THREAD)
            return 1e-4;
        return 1e-5;
    case TD_F64: return 1e-9;
    case TD_F16:
    case TD_BF16: return 1e-1;
    default: return 0.0;
    }
}

/* ---- text ------------------------------------------------------------- */

void td__kp_i64_list(td_buf *o, const int64_t *v, int n)
{
    td__buf_puts(o, "{");
    for (int i = 0; i < n; i++)
        td__buf_printf(o, "%s%" PRId64, i ? ", " : "", v[i]);
    if (n == 0)
        td__buf_puts(o, "0");
    td__buf_puts(o, "}");
}

void td__kp_region_arrays(td_buf *o, const char *name, const td_buffer *b,
                          const td_region *r)
{
    td__buf_printf(o, "static const long long td_%s_shape[] = ", name);
    td__kp_i64_list(o, b->shape, b->ndim);
    td__buf_printf(o, ";\nstatic const long long td_%s_start[] = ", name);
    td__kp_i64_list(o, r->start, r->ndim);
    td__buf_printf(o, ";\nstatic const long long td_%s_ext[] = ", name);
    td__kp_i64_list(o, r->extent, r->ndim);
    td__buf_puts(o, ";\n");
}

static void kp_int_list(td_buf *o, const int *v, int n)
{
    td__buf_puts(o, "{");
    for (int i = 0; i < n; i++)
        td__buf_printf(o, "%s%d", i ? ", " : "", v[i]);
    if (n == 0)
        td__buf_puts(o, "0");
    td__buf_puts(o, "}");
}

static const char kp_helpers[] =
    "/* Exit codes: 0 PASS, 1 FAIL, 2 usage error, 77 SKIP (no usable CUDA\n"
    " * device: the automake / meson skip code). */\n"
    "#define TD_EXIT_PASS 0\n"
    "#define TD_EXIT_FAIL 1\n"
    "#define TD_EXIT_USAGE 2\n"
    "#define TD_EXIT_SKIP 77\n"
    "\n"
    "/* Errors that say there is no usable device (no GPU, no driver or one\n"
    " * too old, no kernel image or PTX this device can run): the program\n"
    " * skips, it does not fail. */\n"
    "static inline bool td_no_device(cudaError_t e)\n"
    "{\n"
    "    switch (e) {\n"
    "    case cudaErrorInitializationError:\n"
    "    case cudaErrorStubLibrary:\n"
    "    case cudaErrorInsufficientDriver:\n"
    "    case cudaErrorCallRequiresNewerDriver:\n"
    "    case cudaErrorDevicesUnavailable:\n"
    "    case cudaErrorNoDevice:\n"
    "    case cudaErrorNoKernelImageForDevice:\n"
    "    case cudaErrorUnsupportedPtxVersion:\n"
    "    case cudaErrorSystemNotReady:\n"
    "    case cudaErrorSystemDriverMismatch:\n"
    "    case cudaErrorCompatNotSupportedOnDevice:\n"
    "        return true;\n"
    "    default:\n"
    "        return false;\n"
    "    }\n"
    "}\n"
    "\n"
    "#define TD_CHECK(expr)                                                     \\\n"
    "    do {                                                                   \\\n"
    "        cudaError_t td_err_ = (expr);                                      \\\n"
    "        if (td_err_ != cudaSuccess) {                                      \\\n"
    "            if (td_no_device(td_err_)) {                                   \\\n"
    "                printf(\"SKIP %s: no CUDA device (%s: %s)\\n\", TD_NAME,     \\\n"
    "                       cudaGetErrorName(td_err_),                          \\\n"
    "                       cudaGetErrorString(td_err_));                       \\\n"
    "                return TD_EXIT_SKIP;                                       \\\n"
    "            }                                                              \\\n"
    "            printf(\"FAIL %s CUDA error %s at line %d (%s): %s\\n\", TD_NAME, \\\n"
    "                   cudaGetErrorName(td_err_), __LINE__, #expr,             \\\n"
    "                   cudaGetErrorString(td_err_));                           \\\n"
    "            return TD_EXIT_FAIL;                                           \\\n"
    "        }                                                                  \\\n"
    "    } while (0)\n"
    "\n"
    "template <typename T> static inline double td_to_double(T v) { return (double)v; }\n"
    "template <typename T> static inline T td_from_double(double v) { return (T)v; }\n";

static const char kp_helpers_half[] =
    "static inline double td_to_double(__half v) { return (double)__half2float(v); }\n"
    "template <> __half td_from_double<__half>(double v)\n"
    "{\n"
    "    return __float2half((float)v);\n"
    "}\n";

static const char kp_helpers_bf16[] =
    "static inline double td_to_double(__nv_bfloat16 v)\n"
    "{\n"
    "    return (double)__bfloat162float(v);\n"
    "}\n"
    "template <> __nv_bfloat16 td_from_double<__nv_bfloat16>(double v)\n"
    "{\n"
    "    return __float2bfloat16((float)v);\n"
    "}\n";

/* The host-side reference and checks: generic code over the constants the
 * program defines (TD_SRC_*, TD_DST_*, TD_RED, TD_SPA, TD_BCAST, TD_OP). */
static const char kp_reference[] =
    "/* Row-major flat index of coords (start + c) in a buffer of `shape`. */\n"
    "static inline long long td_flat(int nd, const long long *shape,\n"
    "                         const long long *start, const long long *c)\n"
    "{\n"
    "    long long f = 0;\n"
    "    for (int d = 0; d < nd; ++d)\n"
    "        f = f * shape[d] + start[d] + c[d];\n"
    "    return f;\n"
    "}\n"
    "\n"
    "/*\n"
    " * The expected contents of the dst buffer of one instance: `init` (the\n"
    " * staged values), with every dst region element replaced by the\n"
    " * reduction of its source elements, in double precision.  tol[e] is the\n"
    " * allowed |got - want|: atol * max(1, sum of |terms|) for float sums,\n"
    " * 0 for max / min (the result is one of the inputs), integers and\n"
    " * untouched elements.  With --data random, float sums are allowed\n"
    " * 2 n u sum|terms| + n tiny instead (n terms including the accumulated\n"
    " * dst value, u the unit roundoff and tiny the smallest normal of the\n"
    " * narrower dtype): twice the worst-case error of any summation order\n"
    " * (Higham), plus one flushed subnormal per term.  TD_TOL_SCALE (default\n"
    " * 1) scales the float-sum tolerance of both modes (tests build with 0).\n"
    " */\n"
    "#ifndef TD_TOL_SCALE\n"
    "#define TD_TOL_SCALE 1.0\n"
    "#endif\n"
    "static bool td_data_random = false; /* --data random */\n"
    "static inline void td_reference(const double *src, const double *init,\n"
    "                         double *want, double *tol)\n"
    "{\n"
    "    for (long long e = 0; e < TD_DST_ELEMS; ++e) {\n"
    "        want[e] = init[e];\n"
    "        tol[e] = 0.0;\n"
    "    }\n"
    "    long long cd[TD_DST_NDIM], cs[TD_SRC_NDIM];\n"
    "    long long nd_elems = 1;\n"
    "    for (int d = 0; d < TD_DST_NDIM; ++d)\n"
    "        nd_elems *= td_dst_ext[d];\n"
    "    for (long long k = 0; k < nd_elems; ++k) {\n"
    "        long long r = k;\n"
    "        for (int d = TD_DST_NDIM - 1; d >= 0; --d) {\n"
    "            cd[d] = r % td_dst_ext[d];\n"
    "            r /= td_dst_ext[d];\n"
    "        }\n"
    "        for (int d = 0; d < TD_SRC_NDIM; ++d)\n"
    "            cs[d] = 0;\n"
    "        if (TD_BCAST) {\n"
    "            for (int i = 0; i < TD_NSPA; ++i)\n"
    "                cs[td_spa[i]] = cd[td_spa[i]];\n"
    "        } else {\n"
    "            long long s = k;\n"
    "            for (int i = TD_NSPA - 1; i >= 0; --i) {\n"
    "                cs[td_spa[i]] = s % td_src_ext[td_spa[i]];\n"
    "                s /= td_src_ext[td_spa[i]];\n"
    "            }\n"
    "        }\n"
    "        const long long de = td_flat(TD_DST_NDIM, td_dst_shape, "
    "td_dst_start, cd);\n"
    "        double acc = 0.0, mag = 0.0;\n"
    "        bool have = false;\n"
    "        if (TD_ACCUM) {\n"
    "            acc = init[de];\n"
    "            mag = fabs(acc);\n"
    "            have = true;\n"
    "        } else if (TD_SPECIALS && TD_OP != 0) {\n"
    "            acc = TD_OP == 1 ? -TD_FINITE_MAX : TD_FINITE_MAX;\n"
    "            have = true;\n"
    "        }\n"
    "        for (long long red = 0; red < TD_RED_LEN; ++red) {\n"
    "            long long q = red;\n"
    "            for (int i = TD_NRED - 1; i >= 0; --i) {\n"
    "                cs[td_red[i]] = q % td_src_ext[td_red[i]];\n"
    "                q /= td_src_ext[td_red[i]];\n"
    "            }\n"
    "            const double v = src[td_flat(TD_SRC_NDIM, td_src_shape,\n"
    "                                         td_src_start, cs)];\n"
    "            mag += fabs(v);\n"
    "            if (!have)\n"
    "                acc = TD_OP == 0 ? 0.0 + v : v;\n"
    "            else if (TD_OP == 0)\n"
    "                acc += v;\n"
    "            else if (v != v)\n"
    "                ; /* max / min skip NaN (fmaxf, __hmax) */\n"
    "            else if (TD_OP == 1)\n"
    "                acc = acc != acc || v > acc ? v : acc;\n"
    "            else\n"
    "                acc = acc != acc || v < acc ? v : acc;\n"
    "            have = true;\n"
    "        }\n"
    "        want[de] = acc;\n"
    "        const double n = (double)(TD_RED_LEN + TD_ACCUM);\n"
    "        if (TD_OP != 0 || !std::isfinite(mag))\n"
    "            tol[de] = 0.0; /* exact: max / min, or a special value */\n"
    "        else if (td_data_random)\n"
    "            tol[de] = TD_TOL_SCALE * (2.0 * n * TD_UNIT_ROUNDOFF * mag +\n"
    "                                      n * TD_TINY);\n"
    "        else\n"
    "            tol[de] = TD_TOL_SCALE * TD_ATOL * (mag > 1.0 ? mag : 1.0);\n"
    "    }\n"
    "}\n"
    "\n"
    "static double td_max_err = 0.0;\n"
    "static double td_max_ratio = 0.0; /* largest err / tol where tol > 0 */\n"
    "static long long td_mismatches = 0;\n"
    "static char td_first[512];\n"
    "\n"
    "/* Compares one staged-back value; remembers the first mismatch. */\n"
    "static inline void td_check(const char *buf, long long inst, long long elem,\n"
    "                     long long thread, long long slot, double got,\n"
    "                     double want, double tol)\n"
    "{\n"
    "    /* Equal infinities and two NaNs match too. */\n"
    "    const double err = got == want || (got != got && want != want)\n"
    "                           ? 0.0 : fabs(got - want);\n"
    "    if (err <= tol) {\n"
    "        if (err > td_max_err)\n"
    "            td_max_err = err;\n"
    "        if (tol > 0.0 && err / tol > td_max_ratio)\n"
    "            td_max_ratio = err / tol;\n"
    "        return;\n"
    "    }\n"
    "    if (td_mismatches++ == 0) {\n"
    "        if (thread >= 0)\n"
    "            snprintf(td_first, sizeof td_first,\n"
    "                     \"instance=%lld buffer=%s element=%lld thread=%lld \"\n"
    "                     \"slot=%lld got=%.9g want=%.9g tol=%.3g\",\n"
    "                     inst, buf, elem, thread, slot, got, want, tol);\n"
    "        else\n"
    "            snprintf(td_first, sizeof td_first,\n"
    "                     \"instance=%lld buffer=%s element=%lld got=%.9g \"\n"
    "                     \"want=%.9g tol=%.3g\",\n"
    "                     inst, buf, elem, got, want, tol);\n"
    "    }\n"
    "}\n"
    "\n"
    "/* A deterministic 64-bit LCG (Knuth's MMIX constants); --seed N\n"
    " * replaces the initial state. */\n"
    "static unsigned long long td_rng_state = 0x9E3779B97F4A7C15ULL;\n"
    "static inline unsigned long long td_rng(void)\n"
    "{\n"
    "    td_rng_state = td_rng_state * 6364136223846793005ULL +\n"
    "                   1442695040888963407ULL;\n"
    "    return td_rng_state >> 33;\n"
    "}\n"
    "/* With TD_SPECIALS, about 1 source value in 64 each is NaN, +inf, -inf. */\n"
    "__attribute__((unused)) static inline double td_special(double v)\n"
    "{\n"
    "    const unsigned long long r = td_rng() % 64;\n"
    "    return r == 0 ? NAN : r == 1 ? INFINITY : r == 2 ? -INFINITY : v;\n"
    "}\n"
    "/* --data exact: a float that every dtype here holds exactly: k/64,\n"
    " * k in [-128, 128].  Each buffer uses one of the generators. */\n"
    "__attribute__((unused)) static inline double td_rand_float(void)\n"
    "{\n"
    "    return (double)((long long)(td_rng() % 257) - 128) / 64.0;\n"
    "}\n"
    "/* --data random: a standard normal value (Box-Muller over two 53-bit\n"
    " * uniforms in (0, 1)); rounded to the buffer's dtype when staged. */\n"
    "__attribute__((unused)) static inline double td_rand_u01(void)\n"
    "{\n"
    "    const unsigned long long hi = td_rng(), lo = td_rng();\n"
    "    return ((double)((hi << 22) ^ lo) + 0.5) / 9007199254740992.0;\n"
    "}\n"
    "__attribute__((unused)) static inline double td_rand_normal(void)\n"
    "{\n"
    "    const double u1 = td_rand_u01(), u2 = td_rand_u01();\n"
    "    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);\n"
    "}\n"
    "__attribute__((unused)) static inline double td_rand_int(long long lo,\n"
    "                                                         long long hi)\n"
    "{\n"
    "    return (double)(lo + (long long)(td_rng() %\n"
    "                                     (unsigned long long)(hi - lo + 1)));\n"
    "}\n"
    "\n"
    "/* The options: --data exact|random, --seed N (also --data=..., --seed=...). */\n"
    "static inline const char *td_opt(int argc, char **argv, int *i,\n"
    "                                 const char *name)\n"
    "{\n"
    "    const size_t n = strlen(name);\n"
    "    if (strncmp(argv[*i], name, n) != 0)\n"
    "        return NULL;\n"
    "    if (argv[*i][n] == '=')\n"
    "        return argv[*i] + n + 1;\n"
    "    if (argv[*i][n] != '\\0' || *i + 1 >= argc)\n"
    "        return NULL;\n"
    "    return argv[++*i];\n"
    "}\n"
    "static inline bool td_options(int argc, char **argv)\n"
    "{\n"
    "    for (int i = 1; i < argc; ++i) {\n"
    "        const char *v;\n"
    "        char *end;\n"
    "        if ((v = td_opt(argc, argv, &i, \"--data\")) != NULL) {\n"
    "            if (strcmp(v, \"exact\") == 0)\n"
    "                td_data_random = false;\n"
    "            else if (strcmp(v, \"random\") == 0)\n"
    "                td_data_random = true;\n"
    "            else\n"
    "                return false;\n"
    "        } else if ((v = td_opt(argc, argv, &i, \"--seed\")) != NULL) {\n"
    "            errno = 0;\n"
    "            td_rng_state = strtoull(v, &end, 0);\n"
    "            if (errno != 0 || end == v || *end != '\\0' || v[0] == '-')\n"
    "                return false;\n"
    "        } else {\n"
    "            return false;\n"
    "        }\n"
    "    }\n"
    "    return true;\n"
    "}\n";

/* Value range of the random integers of dtype t: small enough that no
 * partial sum of the reduction overflows. */
static void kp_int_range(const kp_plan *p, td_dtype t, int64_t *lo,
                         int64_t *hi)
{
    int bits = td_dtype_bits(t);
    bool sgn = td_dtype_is_signed(t);
    int64_t lim = bits >= 63 ? INT64_MAX : (((int64_t)1 << (sgn ? bits - 1 : bits)) - 1);
    int64_t a = 100;
    if (p->comb == TD_COMBINE_SUM) {
        int64_t terms = td__mul_sat(p->red_len, 1) + 1;
        int64_t q = lim / terms;
        if (q < a)
            a = q;
    }
    if (a > lim)
        a = lim;
    if (a < 1)
        a = 1;
    *lo = sgn ? -a : 0;
    *hi = a;
}

static void kp_gen_expr(td_buf *o, const kp_plan *p, td_dtype t)
{
    if (td_dtype_is_float(t)) {
        td__buf_puts(o, "td_data_random ? td_rand_normal() : td_rand_float()");
        return;
    }
    int64_t lo, hi;
    kp_int_range(p, t, &lo, &hi);
    td__buf_printf(o, "td_rand_int(%" PRId64 "LL, %" PRId64 "LL)", lo, hi);
}

/* The unit roundoff (2^-p, p the significand bits) and the smallest normal
 * of a float dtype; 0 for the others. */
static void kp_float_limits(td_dtype t, double *u, double *tiny)
{
    switch (t) {
    case TD_F64: *u = 0x1p-53; *tiny = 0x1p-1022; break;
    case TD_F32: *u = 0x1p-24; *tiny = 0x1p-126; break;
    case TD_F16: *u = 0x1p-11; *tiny = 0x1p-14; break;
    case TD_BF16: *u = 0x1p-8; *tiny = 0x1p-126; break;
    default: *u = 0.0; *tiny = 0.0; break;
    }
}

static void kp_write_tables(td_buf *o, const kp_plan *p)
{
    const td_call *c = p->call;
    const td_buffer *sb = td__region_buffer(c, &c->src);
    const td_buffer *db = td__region_buffer(c, &c->dst);
    td__buf_printf(o, "#define TD_SRC_NDIM %d\n#define TD_DST_NDIM %d\n",
                   c->src.ndim, c->dst.ndim);
    int64_t dst_elems = 1;
    for (int d = 0; d < db->ndim; d++)
        dst_elems *= db->shape[d];
    td__buf_printf(o, "#define TD_DST_ELEMS %" PRId64 "LL\n", dst_elems);
    td__buf_printf(o, "#define TD_NRED %d\n#define TD_NSPA %d\n", p->nreduce,
                   p->nspatial);
    td__buf_printf(o, "#define TD_RED_LEN %" PRId64 "LL\n", p->red_len);
    td__buf_printf(o, "#define TD_BCAST %d\n#define TD_ACCUM %d\n",
                   p->bcast ? 1 : 0, c->accum ? 1 : 0);
    td__buf_printf(o, "#define TD_OP %d /* 0 sum, 1 max, 2 min */\n",
                   p->comb == TD_COMBINE_SUM ? 0
                   : p->comb == TD_COMBINE_MAX ? 1 : 2);
    td__buf_printf(o, "#define TD_ATOL %.17g\n", p->atol);
    /* --data random: the rounding of the narrower of src and dst. */
    double us, ts, ud, tdn;
    kp_float_limits(sb->dtype, &us, &ts);
    kp_float_limits(db->dtype, &ud, &tdn);
    td__buf_printf(o, "#define TD_UNIT_ROUNDOFF %.17g\n#define TD_TINY %.17g\n",
                   us > ud ? us : ud, ts > tdn ? ts : tdn);
    /* With specials, max / min start from the identity, the lowest
     * (highest) finite value, as the emitted code does (TVM's
     * min_value / max_value), and skip NaN as fmaxf / __hmax do. */
    double lowest = db->dtype == TD_F16    ? 65504.0
                    : db->dtype == TD_BF16 ? 3.3895313892515355e+38
                    : db->dtype == TD_F64  ? 1.7976931348623157e+308
                                           : 3.4028234663852886e+38;
    td__buf_printf(o, "#define TD_SPECIALS %d\n#define TD_FINITE_MAX %.17g\n",
                   p->specials ? 1 : 0, lowest);
    td__kp_region_arrays(o, "src", sb, &c->src);
    td__kp_region_arrays(o, "dst", db, &c->dst);
    td__buf_puts(o, "static const int td_red[] = ");
    kp_int_list(o, p->reduce, p->nreduce);
    td__buf_puts(o, ";\nstatic const int td_spa[] = ");
    kp_int_list(o, p->spatial, p->nspatial);
    td__buf_puts(o, ";\n\n");
}

static void kp_write_maps(td_buf *o, const kp_plan *p)
{
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        if (kb->shared || kb->map == NULL)
            continue;
        const char *n = kb->b->name;
        td__buf_printf(o,
                       "/* %s: logical element held by (thread in instance, "
                       "register slot); -1 = none.\n   layout: %s */\n",
                       n, kb->b->layout_text[0] ? kb->b->layout_text : "?");
        td__buf_printf(o, "#define TD_MAP_%s_INIT {", n);
        int64_t total = kb->slots * p->tpi;
        for (int64_t j = 0; j < total; j++) {
            if (j % 16 == 0)
                td__buf_puts(o, " \\\n    ");
            td__buf_printf(o, "%d,", kb->map[j]);
        }
        td__buf_puts(o, " \\\n}\n");
        td__buf_printf(o,
                       "__device__ const int td_map_%s_dev[] = TD_MAP_%s_INIT;\n"
                       "static const int td_map_%s_host[] = TD_MAP_%s_INIT;\n\n",
                       n, n, n, n);
    }
}

static void kp_write_kernel(td_buf *o, const kp_plan *p, const char *body)
{
    bool any_shared = false;
    td__buf_puts(o, "__global__ void td_kernel(");
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *t = td__kp_ctype(kb->b->dtype);
        td__buf_printf(o, "%sconst %s *__restrict__ td_in_%s, %s *td_out_%s",
                       i ? ",\n                          " : "", t,
                       kb->b->name, t, kb->b->name);
        any_shared |= kb->shared;
    }
    /* Named scalars of elementwise calls: the body reads them by name. */
    for (int i = 0; i < p->nscalars; i++)
        td__buf_printf(o, ",\n                          const %s %s",
                       td__kp_ctype(p->scalars[i].dtype), p->scalars[i].name);
    td__buf_puts(o, ")\n{\n");
    td__buf_puts(o,
                 "    const int td_tid = (int)(threadIdx.x + blockDim.x * "
                 "(threadIdx.y + blockDim.y * threadIdx.z));\n"
                 "    const long long td_blk = (long long)(blockIdx.x + "
                 "gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z));\n"
                 "    const int td_t = td_tid % TD_TPI;\n"
                 "    const long long td_inst = td_blk * TD_IPB + td_tid / "
                 "TD_TPI;\n"
                 "    (void)td_t;\n"
                 "    (void)td_inst;\n");
    if (any_shared)
        td__buf_puts(o, "    extern __shared__ __align__(16) unsigned char "
                        "td_smem[];\n");
    int64_t smem_off = 0;
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        if (kb->shared) {
            /* One copy per instance in dynamic shared memory, each
             * 16-byte aligned; the body indexes NAME_ptr, which points at
             * this thread's instance's copy. */
            int64_t pitch = kp_pitch(kb);
            td__buf_printf(o,
                           "    /* %s: shared, one copy per scope instance "
                           "(%" PRId64 " bytes each), staged by the "
                           "instance's threads. */\n"
                           "    %s *const %s_ptr = (%s *)(td_smem + %" PRId64
                           "LL + (td_tid / TD_TPI) * %" PRId64 "LL);\n"
                           "    for (int i = td_t; i < %" PRId64
                           "; i += TD_TPI)\n"
                           "        %s_ptr[i] = td_in_%s[td_inst * %" PRId64
                           "LL + i];\n",
                           n, pitch, t, n, t, smem_off, pitch, kb->elems, n,
                           n, kb->elems);
            smem_off += pitch * p->ipb;
            continue;
        }
        td__buf_printf(o, "    /* %s: registers, %" PRId64 " slot(s) per "
                          "thread%s. */\n",
                       n, kb->slots,
                       kb->map ? ", filled through the layout"
                               : ", each thread holds the whole buffer");
        td__buf_printf(o, "    %s %s_ptr[%" PRId64 "];\n", t, n, kb->slots);
        td__buf_printf(o, "    for (int s = 0; s < %" PRId64 "; ++s) {\n",
                       kb->slots);
        if (kb->map)
            td__buf_printf(o, "        const int e = td_map_%s_dev[td_t * %"
                              PRId64 " + s];\n", n, kb->slots);
        else
            td__buf_puts(o, "        const int e = s;\n");
        td__buf_printf(o,
                       "        %s_ptr[s] = e >= 0 ? td_in_%s[td_inst * %"
                       PRId64 "LL + e] : %s;\n    }\n",
                       n, n, kb->elems, kp_gap(kb->b->dtype));
    }
    if (any_shared)
        td__buf_puts(o, "    __syncthreads();\n");
    td__buf_printf(o, "    /* The emitted body (variant %s). */\n    {\n",
                   p->variant);
    td__buf_puts(o, body);
    size_t bl = strlen(body);
    if (bl > 0 && body[bl - 1] != '\n')
        td__buf_puts(o, "\n");
    td__buf_puts(o, "    }\n");
    if (any_shared)
        td__buf_puts(o, "    __syncthreads();\n");
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        if (kb->shared)
            td__buf_printf(o,
                           "    for (int i = td_t; i < %" PRId64
                           "; i += TD_TPI)\n"
                           "        td_out_%s[td_inst * %" PRId64
                           "LL + i] = %s_ptr[i];\n",
                           kb->elems, n, kb->elems, n);
        else
            td__buf_printf(o,
                           "    for (int s = 0; s < %" PRId64 "; ++s)\n"
                           "        td_out_%s[(td_inst * TD_TPI + td_t) * %"
                           PRId64 "LL + s] = %s_ptr[s];\n",
                           kb->slots, n, kb->slots, n);
    }
    td__buf_puts(o, "}\n\n");
}

static void kp_write_main(td_buf *o, const kp_plan *p)
{
    const td_call *c = p->call;
    td__buf_puts(o,
                 "int main(int argc, char **argv)\n{\n"
                 "    if (!td_options(argc, argv)) {\n"
                 "        fprintf(stderr, \"usage: %s [--data exact|random] "
                 "[--seed N]\\n\", argv[0]);\n"
                 "        return TD_EXIT_USAGE;\n    }\n"
                 "    const unsigned long long td_seed = td_rng_state;\n"
                 "    /* No usable device: SKIP (exit 77), never FAIL. */\n"
                 "    int td_ndev = 0;\n"
                 "    const cudaError_t td_dev_err = cudaGetDeviceCount(&td_ndev);\n"
                 "    if (td_dev_err != cudaSuccess) {\n"
                 "        printf(\"SKIP %s: no CUDA device (%s: %s)\\n\", TD_NAME,\n"
                 "               cudaGetErrorName(td_dev_err), "
                 "cudaGetErrorString(td_dev_err));\n"
                 "        return TD_EXIT_SKIP;\n    }\n"
                 "    if (td_ndev < 1) {\n"
                 "        printf(\"SKIP %s: no CUDA device (cudaGetDeviceCount "
                 "found none)\\n\", TD_NAME);\n"
                 "        return TD_EXIT_SKIP;\n    }\n");
    /* Host arrays: inputs (device type and exact double copies) and the
     * staged-back outputs. */
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        int64_t nin = kb->elems * p->instances;
        int64_t nout = kb->shared ? nin : kb->slots * p->tpi * p->instances;
        td__buf_printf(o,
                       "    const long long td_nin_%s = %" PRId64 "LL, "
                       "td_nout_%s = %" PRId64 "LL;\n"
                       "    %s *h_in_%s = (%s *)malloc(sizeof(%s) * td_nin_%s);\n"
                       "    %s *h_out_%s = (%s *)malloc(sizeof(%s) * td_nout_%s);\n"
                       "    double *v_in_%s = (double *)malloc(sizeof(double) * "
                       "td_nin_%s);\n"
                       "    if (h_in_%s == NULL || h_out_%s == NULL || v_in_%s == "
                       "NULL) {\n"
                       "        printf(\"FAIL %%s host out of memory\\n\", TD_NAME);\n"
                       "        return 1;\n    }\n",
                       n, nin, n, nout, t, n, t, t, n, t, n, t, t, n, n, n, n,
                       n, n);
        td__buf_printf(o, "    for (long long i = 0; i < td_nin_%s; ++i) {\n"
                          "        h_in_%s[i] = td_from_double<%s>(",
                       n, n, t);
        bool special = p->specials && kb->is_src;
        if (special)
            td__buf_puts(o, "td_special(");
        if (p->gen_expr != NULL)
            p->gen_expr(o, p, kb);
        else
            kp_gen_expr(o, p, kb->b->dtype);
        td__buf_printf(o, "%s);\n        v_in_%s[i] = td_to_double(h_in_%s[i]);\n"
                          "    }\n",
                       special ? ")" : "", n, n);
    }
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        td__buf_printf(o,
                       "    %s *d_in_%s = NULL, *d_out_%s = NULL;\n"
                       "    TD_CHECK(cudaMalloc((void **)&d_in_%s, sizeof(%s) * "
                       "td_nin_%s));\n"
                       "    TD_CHECK(cudaMalloc((void **)&d_out_%s, sizeof(%s) * "
                       "td_nout_%s));\n"
                       "    TD_CHECK(cudaMemcpy(d_in_%s, h_in_%s, sizeof(%s) * "
                       "td_nin_%s, cudaMemcpyHostToDevice));\n"
                       "    TD_CHECK(cudaMemset(d_out_%s, 0xff, sizeof(%s) * "
                       "td_nout_%s));\n",
                       t, n, n, n, t, n, n, t, n, n, n, t, n, n, t, n);
    }
    if (p->smem + p->scratch > KP_SHARED_DEFAULT) {
        int64_t all = p->smem + p->scratch;
        char extra[64] = "";
        if (p->scratch > 0)
            snprintf(extra, sizeof extra, " and %" PRId64 " of the body's own "
                     "scratch", p->scratch);
        td__buf_printf(o,
                       "    /* %" PRId64 " bytes of dynamic shared memory%s: "
                       "above the default 48 KB, so the kernel opts in. */\n",
                       p->smem, extra);
        td__buf_printf(o,
                       "    int td_optin = 0;\n"
                       "    TD_CHECK(cudaDeviceGetAttribute(&td_optin, "
                       "cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));\n"
                       "    if (td_optin < %" PRId64 ") {\n"
                       "        printf(\"FAIL %%s needs %" PRId64 " bytes of "
                       "shared memory per block, the device allows %%d\\n\", "
                       "TD_NAME, td_optin);\n"
                       "        return 1;\n    }\n"
                       "    TD_CHECK(cudaFuncSetAttribute(td_kernel, "
                       "cudaFuncAttributeMaxDynamicSharedMemorySize, %" PRId64
                       "));\n",
                       all, all, p->smem);
    }
    for (int i = 0; i < p->nscalars; i++) {
        const kp_scalar *sc = &p->scalars[i];
        const char *t = td__kp_ctype(sc->dtype);
        td__buf_printf(o, "    const %s td_sv_%s = td_from_double<%s>(%.17g);\n",
                       t, sc->name, t, sc->value);
    }
    td__buf_printf(o, "    td_kernel<<<dim3(%" PRId64 ", %" PRId64 ", %" PRId64
                      "), dim3(%" PRId64 ", %" PRId64 ", %" PRId64 "), %"
                      PRId64 ">>>(",
                   p->grid[0], p->grid[1], p->grid[2], p->block[0],
                   p->block[1], p->block[2], p->smem);
    for (int i = 0; i < p->nbufs; i++)
        td__buf_printf(o, "%sd_in_%s, d_out_%s", i ? ", " : "",
                       p->bufs[i].b->name, p->bufs[i].b->name);
    for (int i = 0; i < p->nscalars; i++)
        td__buf_printf(o, ", td_sv_%s", p->scalars[i].name);
    td__buf_puts(o, ");\n"
                    "    TD_CHECK(cudaGetLastError());\n"
                    "    TD_CHECK(cudaDeviceSynchronize());\n");
    for (int i = 0; i < p->nbufs; i++) {
        const char *n = p->bufs[i].b->name;
        const char *t = td__kp_ctype(p->bufs[i].b->dtype);
        td__buf_printf(o,
                       "    TD_CHECK(cudaMemcpy(h_out_%s, d_out_%s, sizeof(%s) * "
                       "td_nout_%s, cudaMemcpyDeviceToHost));\n",
                       n, n, t, n);
    }
    /* Expected contents per instance and buffer. */
    const kp_buf *sk = &p->bufs[0];
    const kp_buf *dk = p->nbufs > 1 ? &p->bufs[1] : &p->bufs[0];
    td__buf_printf(o,
                   "    double *td_want = (double *)malloc(sizeof(double) * "
                   "TD_DST_ELEMS);\n"
                   "    double *td_tol = (double *)malloc(sizeof(double) * "
                   "TD_DST_ELEMS);\n"
                   "    if (td_want == NULL || td_tol == NULL) {\n"
                   "        printf(\"FAIL %%s host out of memory\\n\", TD_NAME);\n"
                   "        return TD_EXIT_FAIL;\n    }\n"
                   "    for (long long inst = 0; inst < TD_INSTANCES; ++inst) {\n");
    if (p->ewise)
        td__kp_ewise_ref_call(o, p);
    else
        td__buf_printf(o,
                       "        td_reference(v_in_%s + inst * %" PRId64 "LL, "
                       "v_in_%s + inst * %" PRId64 "LL, td_want, td_tol);\n",
                       sk->b->name, sk->elems, dk->b->name, dk->elems);
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        /* The dst buffer is checked against the reference; a src buffer
         * that is not the dst must come back unchanged. */
        char want[160], tol[160];
        if (kb->is_dst) {
            snprintf(want, sizeof want, "td_want[e]");
            snprintf(tol, sizeof tol, "td_tol[e]");
        } else {
            snprintf(want, sizeof want, "v_in_%s[inst * %" PRId64 "LL + e]", n,
                     kb->elems);
            snprintf(tol, sizeof tol, "0.0");
        }
        /* Elementwise dst values also count their error in ulps. */
        const char *chk = p->ewise && kb->is_dst ? "td_ew_check" : "td_check";
        if (kb->shared) {
            td__buf_printf(o,
                           "        for (long long e = 0; e < %" PRId64 "; ++e)\n"
                           "            %s(\"%s\", inst, e, -1, -1, "
                           "td_to_double(h_out_%s[inst * %" PRId64 "LL + e]), "
                           "%s, %s);\n",
                           kb->elems, chk, n, n, kb->elems, want, tol);
        } else {
            td__buf_printf(o,
                           "        for (long long t = 0; t < TD_TPI; ++t)\n"
                           "            for (long long s = 0; s < %" PRId64
                           "; ++s) {\n",
                           kb->slots);
            if (kb->map)
                td__buf_printf(o, "                const long long e = "
                                  "td_map_%s_host[t * %" PRId64 " + s];\n",
                               n, kb->slots);
            else
                td__buf_puts(o, "                const long long e = s;\n");
            td__buf_printf(o,
                           "                if (e < 0)\n"
                           "                    continue;\n"
                           "                %s(\"%s\", inst, e, t, s, "
                           "td_to_double(h_out_%s[(inst * TD_TPI + t) * %"
                           PRId64 "LL + s]), %s, %s);\n"
                           "            }\n",
                           chk, n, n, kb->slots, want, tol);
        }
    }
    td__buf_puts(o, "    }\n");
    for (int i = 0; i < p->nbufs; i++) {
        const char *n = p->bufs[i].b->name;
        td__buf_printf(o,
                       "    TD_CHECK(cudaFree(d_in_%s));\n"
                       "    TD_CHECK(cudaFree(d_out_%s));\n"
                       "    free(h_in_%s);\n    free(h_out_%s);\n"
                       "    free(v_in_%s);\n",
                       n, n, n, n, n);
    }
    (void)c;
    td__buf_puts(o,
                 "    free(td_want);\n    free(td_tol);\n"
                 "    char td_data[64] = \"\";\n"
                 "    if (td_data_random)\n"
                 "        snprintf(td_data, sizeof td_data, \" data=random "
                 "seed=0x%llx\", td_seed);\n"
                 "    if (td_mismatches != 0) {\n"
                 "        printf(\"FAIL %s %s (%lld mismatches)%s\\n\", TD_NAME, "
                 "td_first, td_mismatches, td_data);\n"
                 "        return TD_EXIT_FAIL;\n    }\n");
    if (p->ewise)
        td__buf_puts(o,
                     "    printf(\"PASS %s max_err=%.3g max_ulp=%.3g%s "
                     "max_err/tol=%.3g\\n\", TD_NAME, td_max_err, td_max_ulp, "
                     "td_data, td_max_ratio);\n"
                     "    return TD_EXIT_PASS;\n}\n");
    else
        td__buf_puts(o,
                     "    if (td_data_random)\n"
                     "        printf(\"PASS %s max_err=%.3g%s max_err/tol=%.3g\\n\", "
                     "TD_NAME, td_max_err, td_data, td_max_ratio);\n"
                     "    else\n"
                     "        printf(\"PASS %s max_err=%.3g\\n\", TD_NAME, td_max_err);\n"
                     "    return TD_EXIT_PASS;\n}\n");
}

int td__kp_write(td_buf *o, const kp_plan *p, const char *body,
                    const char *prelude)
{
    const td_call *c = p->call;
    char script[512];
    td_call_format_script(c, script, sizeof script);
    for (char *s = script; *s; s++)
        if (*s == '\n' || (*s == '*' && s[1] == '/'))
            *s = ' ';
    td__buf_printf(o,
                   "/*\n"
                   " * Self-checking program generated by tiledispatch "
                   "(tiledispatch kernel).\n"
                   " * case:    %s\n"
                   " * call:    %s\n"
                   " * variant: %s\n"
                   " * launch:  grid (%" PRId64 ", %" PRId64 ", %" PRId64
                   "), block (%" PRId64 ", %" PRId64 ", %" PRId64 ");\n"
                   " *          %" PRId64 " scope instance(s) of %" PRId64
                   " thread(s), each with its own data\n"
                   " * Options: --data exact|random (default exact), --seed N.\n"
                   " * Prints \"PASS %s max_err=E\", \"FAIL %s ...\" or \"SKIP %s: "
                   "no CUDA device (...)\";\n"
                   " * exit 0 / 1 / 77 (2: bad option).\n"
                   " */\n",
                   p->name, script, p->variant, p->grid[0], p->grid[1],
                   p->grid[2], p->block[0], p->block[1], p->block[2],
                   p->instances, p->tpi, p->name, p->name, p->name);
    if (p->threads_asked != 0) {
        /* Before the closing line. */
        if (o->err == 0 && o->len >= 4) {
            o->len -= 4;
            o->data[o->len] = '\0';
        }
        td__buf_printf(o,
                       " * The call launches %" PRId64 " threads a block; "
                       "their shared copies do not fit,\n"
                       " * so the program launches %" PRId64 " (thread scope: "
                       "the body does not depend on it).\n */\n",
                       p->threads_asked, p->nthreads);
    }
    if (p->ewise) {
        /* Replaces the closing line: what an elementwise program adds. */
        if (o->err == 0 && o->len >= 4) {
            o->len -= 4;
            o->data[o->len] = '\0';
        }
        td__buf_puts(o, " * Elementwise: PASS also prints max_ulp (the largest error "
                        "in ulps of the\n * compute dtype) and max_err/tol; "
                        "docs/verification.md has the tolerances.\n");
        for (int i = 0; i < p->nscalars; i++)
            td__buf_printf(o, " * scalar:  %s = %.17g (%s), a kernel parameter\n",
                           p->scalars[i].name, p->scalars[i].value,
                           td_dtype_name(p->scalars[i].dtype));
        td__buf_puts(o, " */\n");
    }
    td__buf_puts(o, "#include <cerrno>\n#include <cfloat>\n#include <climits>\n#include <cmath>\n#include <cstdint>\n#include <cstdio>\n"
                    "#include <cstdlib>\n#include <cstring>\n#include <cuda_runtime.h>\n");
    if (p->half)
        td__buf_puts(o, "#include <cuda_fp16.h>\n");
    if (p->bf16)
        td__buf_puts(o, "#include <cuda_bf16.h>\n");
    td__buf_puts(o, "\n");
    if (prelude != NULL && prelude[0] != '\0') {
        td__buf_puts(o, prelude);
        size_t pl = strlen(prelude);
        if (prelude[pl - 1] != '\n')
            td__buf_puts(o, "\n");
        td__buf_puts(o, "\n");
    }
    td__buf_printf(o, "static const char TD_NAME[] = \"%s\";\n", p->name);
    td__buf_printf(o,
                   "#define TD_THREADS %" PRId64 " /* threads per block */\n"
                   "#define TD_TPI %" PRId64 " /* threads per scope instance */\n"
                   "#define TD_IPB %" PRId64 " /* instances per block */\n"
                   "#define TD_INSTANCES %" PRId64 "LL\n\n",
                   p->nthreads, p->tpi, p->ipb, p->instances);
    td__buf_puts(o, kp_helpers);
    if (p->half)
        td__buf_puts(o, kp_helpers_half);
    if (p->bf16)
        td__buf_puts(o, kp_helpers_bf16);
    td__buf_puts(o, "\n");
    if (p->ewise) {
        /* The reduction's reference text in three parts: td_flat and the
         * tolerance switches are shared, td_reference is not. */
        const char *red = strstr(kp_reference, "/*\n * The expected contents");
        const char *sw = strstr(kp_reference, "#ifndef TD_TOL_SCALE");
        const char *fn = strstr(kp_reference, "static inline void td_reference(");
        const char *common = strstr(kp_reference, "static double td_max_err");
        td__kp_ewise_tables(o, p);
        td__buf_printf(o, "%.*s", (int)(red - kp_reference), kp_reference);
        td__buf_printf(o, "%.*s", (int)(fn - sw), sw);
        td__buf_puts(o, td__kp_ewise_reference_text());
        td__buf_puts(o, "\n");
        td__buf_puts(o, common);
        td__buf_puts(o, "\n");
        td__kp_ewise_helpers(o, p);
        td__buf_puts(o, "\n");
    } else {
        kp_write_tables(o, p);
        td__buf_puts(o, kp_reference);
        td__buf_puts(o, "\n");
    }
    kp_write_maps(o, p);
    kp_write_kernel(o, p, body);
    kp_write_main(o, p);
    return o->err;
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
    const td_op_desc *op = td_registry_op(reg, call->op);
    if (op == NULL || (op->kind != TD_OP_KIND_REDUCTION &&
                       op->kind != TD_OP_KIND_ELEMENTWISE)) {
        td_ir_free(res.ir);
        return td__fail(diag, TD_EINVAL, call->file,
                        "kernel: op '%.*s' is neither a reduction nor "
                        "elementwise",
                        (int)TD_NAME_MAX, call->op);
    }

    kp_plan *p = td__calloc(1, sizeof *p);
    if (p == NULL) {
        td_ir_free(res.ir);
        return td__fail(diag, TD_ENOMEM, call->file, "out of memory");
    }
    p->call = call;
    p->variant = res.variant != NULL ? res.variant : "?";
    p->comb = op->combiner;
    kp_case_name(call, p->name, sizeof p->name);

    char *body = NULL, *prelude = NULL;
    td_buf o;
    td__buf_init(&o);
    err = kp_launch(p, diag);
    bool ewise = op->kind == TD_OP_KIND_ELEMENTWISE;
    if (err == 0 && ewise)
        err = td__kp_ewise_plan(p, op, res.ir, diag);
    if (err == 0 && !ewise)
        err = kp_buffers(p, res.ir, diag);
    if (err == 0 && !ewise)
        err = kp_reduction(p, diag);
    if (err == 0 && !ewise) {
        const td_buffer *db = td__region_buffer(call, &call->dst);
        p->atol = kp_atol(p, db->dtype);
        /* config kernel_specials: the source gets NaN and infinities. */
        const td_config_entry *sp = td_call_config(call, "kernel_specials");
        if (sp != NULL && sp->kind != TD_VALUE_BOOL)
            err = td__fail(diag, TD_EINVAL, call->file,
                           "kernel: config kernel_specials must be true or "
                           "false");
        else if (sp != NULL && sp->b && !td_dtype_is_float(db->dtype))
            err = td__fail(diag, TD_EINVAL, call->file,
                           "kernel: config kernel_specials needs a float "
                           "dtype, not %s",
                           td_dtype_name(db->dtype));
        p->specials = sp != NULL && sp->kind == TD_VALUE_BOOL && sp->b;
    }
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
    for (int i = 0; i < p->nbufs; i++)
        td__free(p->bufs[i].map);
    td__kp_ewise_free(p);
    td__free(p);
    td_ir_free(res.ir);
    return err;
}
