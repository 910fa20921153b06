/*
 * The staged buffers of a self-checking program, for every family: each
 * buffer the call touches is checked (a short C name, a dtype the program
 * can hold, local or shared storage, or global for a family that takes
 * it, a size the program can allocate) and decided (shared memory, one
 * copy per scope instance, or registers through a table made from the
 * layout's inverse map, or one global array with guards around it; a
 * bit-exact family's shared buffer with a layout by offsets).  Also the diagnostics and
 * small spellings the families and the writer share.
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

/* Bytes of one instance's copy of a shared buffer in the block's dynamic
 * shared memory: rounded up to 16, so that every copy starts 16-byte
 * aligned (vector accesses of the emitted code rely on it). */
int64_t td__kp_shared_elems(const kp_buf *kb)
{
    return kb->inv != NULL ? kb->span : kb->elems;
}

int64_t td__kp_pitch(const kp_buf *kb)
{
    int64_t bytes = td__mul_sat(td__kp_shared_elems(kb),
                                td_dtype_bits(kb->b->dtype) / 8);
    return bytes > INT64_MAX - 15 ? INT64_MAX : (bytes + 15) / 16 * 16;
}

int64_t td__kp_stride(const kp_plan *p, const kp_buf *kb)
{
    return td__kp_pitch(kb) + p->sguard;
}

/* As many guard slots as the buffer has (a loop one step too far writes
 * up to a step past the end), 8 to 64. */
int64_t td__kp_reg_guard(const kp_buf *kb)
{
    return kb->slots < 8 ? 8 : kb->slots > 64 ? 64 : kb->slots;
}

/* The CUDA spelling of a dtype for the program's own declarations: the
 * printer's, so that the body's helpers and overloads see the types they
 * were written for.  NULL for a dtype the program cannot stage. */
const char *td__kp_ctype(td_dtype t)
{
    return (unsigned)t < TD_DTYPE_COUNT ? td_cuda_type_name(t) : NULL;
}

void td__kp_shared_at(const kp_buf *kb, char *buf, size_t cap)
{
    const td_layout *l = &kb->b->layout;
    int zb = l->swizzle_bits[0], zm = l->swizzle_bits[1];
    int zs = l->swizzle_bits[2];
    if (!kb->b->has_layout || !l->swizzle || zb == 0 || zm + zs >= 31)
        snprintf(buf, cap, "i");
    else
        snprintf(buf, cap, "(i ^ (i / %lld %% %lld * %lld))",
                 1LL << (zm + zs), 1LL << zb, 1LL << zm);
}

/* Whether s is a C identifier (the program declares it). */
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

void *td__kp_fam_data(kp_plan *p, size_t size)
{
    if (size <= sizeof p->fam_inline) {
        memset(p->fam_inline, 0, size);
        p->fam_data = p->fam_inline;
    } else {
        p->fam_data = td__calloc(1, size);
    }
    return p->fam_data;
}

void td__kp_fam_free(kp_plan *p)
{
    if (p->fam_data != (void *)p->fam_inline)
        td__free(p->fam_data);
    p->fam_data = NULL;
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

int64_t td__kp_nin(const kp_plan *p, const kp_buf *kb)
{
    if (kb->global)
        return kb->span + 2 * kb->gpad;
    return td__mul_sat(kb->elems, p->instances);
}

/* A global buffer, or a shared one with a layout: the layout (none:
 * row-major) must put every logical element at its own non-negative
 * offset of the one memory axis (through a shared buffer's swizzle); the
 * storage is the offsets' span.  A global one has 256 bytes of guard
 * elements on both sides (the device array stays 256-byte aligned); a
 * shared one gets the element at each offset (kp_buf.inv). */
static int kp_phys_map(kp_plan *p, kp_buf *kb, td_diag *diag)
{
    const td_call *c = p->call;
    const td_buffer *b = kb->b;
    const char *what = kb->global ? "global" : "shared";
    kb->gpad = kb->global ? 256 / (td_dtype_bits(b->dtype) / 8) : 0;
    kb->span = kb->elems;
    if (!b->has_layout)
        return 0;
    const td_layout *l = &b->layout;
    bool thread = false;
    for (int i = 0; i < l->nshard; i++)
        thread |= td_axis_is_thread(l->shard[i].axis);
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        thread |= td_axis_is_thread((td_axis)a) && l->offset[a] != 0;
    if (td__lay_check(l, NULL, 0) != 0 || thread || l->nrep != 0 ||
        (l->swizzle && kb->global))
        return td__kp_fail(diag, c, TD_EINVAL,
                           "%s buffer %s: a layout with thread axes, "
                           "replicas%s is not a %s array", what, b->name,
                           kb->global ? " or a swizzle" : "", what);
    int64_t size = 0;
    if (td__lay_size(l, &size) != 0 || size != kb->elems)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "the layout of %s buffer %s does not cover its "
                           "%" PRId64 " elements", what, b->name, kb->elems);
    kb->phys = td__malloc((size_t)kb->elems * sizeof *kb->phys);
    if (kb->phys == NULL)
        return td__fail(diag, TD_ENOMEM, c->file, "out of memory");
    int64_t top = 0;
    for (int64_t e = 0; e < kb->elems; e++) {
        int64_t co[TD_AXIS_COUNT];
        if (td__lay_map(l, e, co) != 0 || co[TD_AXIS_M] < 0 ||
            co[TD_AXIS_M] >= KP_MAX_ELEMS)
            return td__kp_fail(diag, c, TD_EINVAL,
                               "the layout of %s buffer %s puts element %"
                               PRId64 " outside an array of %" PRId64
                               " elements", what, b->name, e, KP_MAX_ELEMS);
        kb->phys[e] = co[TD_AXIS_M];
        if (co[TD_AXIS_M] + 1 > top)
            top = co[TD_AXIS_M] + 1;
    }
    /* Two elements at one offset (a broadcast view) cannot each be
     * checked against their own source. */
    unsigned char *seen = td__calloc((size_t)top, 1);
    if (seen == NULL)
        return td__fail(diag, TD_ENOMEM, c->file, "out of memory");
    int64_t dup = -1;
    for (int64_t e = 0; e < kb->elems && dup < 0; e++) {
        if (seen[kb->phys[e]])
            dup = e;
        seen[kb->phys[e]] = 1;
    }
    td__free(seen);
    if (dup >= 0)
        return td__kp_fail(diag, c, TD_EINVAL,
                           "the layout of %s buffer %s puts element %"
                           PRId64 " at an offset another element has",
                           what, b->name, dup);
    kb->span = top;
    if (kb->global)
        return 0;
    if (top > KP_MAX_TABLE)
        return td__kp_fail(diag, c, TD_ELIMIT,
                           "shared buffer %s spans %" PRId64 " elements (at "
                           "most %" PRId64 ")", b->name, top, KP_MAX_TABLE);
    kb->inv = td__malloc((size_t)top * sizeof *kb->inv);
    if (kb->inv == NULL)
        return td__fail(diag, TD_ENOMEM, c->file, "out of memory");
    for (int64_t i = 0; i < top; i++)
        kb->inv[i] = -1;
    for (int64_t e = 0; e < kb->elems; e++)
        kb->inv[kb->phys[e]] = (int)e;
    return 0;
}

/* Decides how each buffer is staged. */
int td__kp_check_bufs(kp_plan *p, const td_ir *ir, td_diag *diag)
{
    const td_call *c = p->call;
    int nshared = 0, nstaged = 0;
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
        /* Only bit-exact families and those whose reference reads float8
         * values (kp_family.float8) take them; the message makes the
         * conformance runner compile the emitted body alone. */
        if (td_dtype_is_float8(b->dtype) && (p->fam->bits || p->fam->float8))
            p->fp8 = true;
        else if (td_dtype_is_float8(b->dtype))
            return td__kp_fail(diag, c, TD_EINVAL,
                               "no reference for the elementwise op '%s' on "
                               "float8 buffer %s (the program generator has "
                               "no float8 rounding yet)",
                               c->op, b->name);
        /* A swizzled shared buffer is staged through its swizzle
         * (td__kp_shared_at), which must keep every element inside it. */
        if (b->has_layout && b->layout.swizzle &&
            !(p->fam->bits && b->layout.nshard > 0)) {
            int64_t n = 1, at = 0;
            for (int d = 0; d < b->ndim; d++)
                n = td__mul_sat(n, b->shape[d]);
            for (int64_t e = 0; e < n && e < KP_MAX_ELEMS && at < n; e++)
                if (td__lay_swizzle(&b->layout, e, &at) != 0)
                    at = n;
            if (at >= n)
                return td__kp_fail(diag, c, TD_EINVAL,
                                   "the swizzle of %s moves elements past "
                                   "its end", b->name);
        }
        if (strcmp(b->scope, "local") == 0) {
            kb->shared = false;
            nstaged++;
        } else if (strcmp(b->scope, "shared") == 0 ||
                   strcmp(b->scope, "shared.dyn") == 0) {
            kb->shared = true;
            nshared++;
            nstaged++;
        } else if (strcmp(b->scope, "global") == 0 && p->fam->globals) {
            kb->global = true;
        } else {
            return td__kp_fail(diag, c, TD_EINVAL,
                               "buffer %s: storage scope '%s' is not staged by "
                               "kernel programs (local and shared are%s)",
                               b->name, b->scope,
                               p->fam->globals ? "; global is a kernel "
                                                 "parameter"
                                               : "");
        }
        kb->elems = 1;
        for (int d = 0; d < b->ndim; d++)
            kb->elems = td__mul_sat(kb->elems, b->shape[d]);
        if (kb->elems < 1 || kb->elems > KP_MAX_ELEMS)
            return td__kp_fail(diag, c, TD_ELIMIT,
                               "buffer %s has %" PRId64 " elements (at most %"
                               PRId64 ")", b->name, kb->elems, KP_MAX_ELEMS);
        /* A bit-exact family stages a shared buffer with a layout (not a
         * bare swizzle) position by position, holes included. */
        if (kb->shared && p->fam->bits && b->has_layout &&
            b->layout.nshard > 0) {
            int err = kp_phys_map(p, kb, diag);
            if (err != 0)
                return err;
        }
        if (b->dtype == TD_F16)
            p->half = true;
        if (b->dtype == TD_BF16)
            p->bf16 = true;
    }
    /* A bit-exact family stages both side by side (a copy between
     * registers and shared memory). */
    if (nshared != 0 && nshared != nstaged && !p->fam->bits)
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
            if (p->bufs[i].shared)
                bytes += td__kp_pitch(&p->bufs[i]);
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
        /* Guard bytes after every copy, checked after the body (a write
         * past the end of a buffer changes them): as many as fit, from
         * 1 KB down to 16, none when the copies alone fill the room. */
        static const int64_t guards[] = {1024, 256, 64, 16};
        for (size_t g = 0; g < sizeof guards / sizeof *guards; g++) {
            int64_t with = td__mul_sat(per + guards[g] * nshared, p->ipb);
            if (bytes <= room && with <= room) {
                p->sguard = guards[g];
                bytes = with;
                break;
            }
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
        if (kb->global) {
            int err = kp_phys_map(p, kb, diag);
            if (err != 0)
                return err;
            if (td__kp_nin(p, kb) > KP_MAX_ELEMS)
                return td__kp_fail(diag, c, TD_ELIMIT,
                                   "global buffer %s spans %" PRId64
                                   " elements (at most %" PRId64 ")",
                                   kb->b->name, kb->span, KP_MAX_ELEMS);
            continue;
        }
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
