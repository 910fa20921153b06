/*
 * The text of a self-checking program, for every family: the header
 * comment, the includes, the shared helpers, then the family's tables and
 * reference (its hooks), the shared checks, the layout tables, the kernel
 * that stages every buffer in, runs the emitted body and stages it out,
 * and main, which runs the family's rounds (each fills the inputs,
 * launches, computes the reference per instance and checks) and prints
 * one line.  The fixed text comes from
 * fragments/ (kp_fragments.h); what depends on the call is written
 * here.  The family is called only through p->fam.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kp.h"
#include "kp_fragments.h"
#include "model.h"
#include "tiledispatch.h"

/* A value of dtype t written as a device expression (the gap filler); a
 * bit-exact family's gap bits. */
static const char *kp_gap(const kp_plan *p, td_dtype t, char *buf, size_t cap)
{
    if (p->fam->bits) {
        snprintf(buf, cap, "td_from_bits<%s>(0x%llxULL)", td__kp_ctype(t),
                 p->fam->gap_bits(t));
        return buf;
    }
    switch (t) {
    case TD_F16: return "__float2half(77.0f)";
    case TD_BF16: return "__float2bfloat16(77.0f)";
    case TD_F8E4M3: return "__nv_fp8_e4m3(7.0f)";
    case TD_F8E5M2: return "__nv_fp8_e5m2(7.0f)";
    default: return "77";
    }
}

static int kp_gxor(int i)
{
    return 2 * (i % 4);
}

/* The guard byte of buffer i: the round's pattern; in a bit-exact family
 * one of its own per buffer, so that a copy that reads past the end of
 * one buffer and writes past the end of another changes the bytes it
 * writes. */
static const char *kp_gpat(const kp_plan *p, int i, char *buf, size_t cap)
{
    /* Bit-exact families take a whole-byte mask per buffer; the others a
     * small even one (kp_gxor), so a guard read as a value keeps its sign
     * and size (see the round patterns where the kernel is launched). */
    if (!p->fam->bits)
        snprintf(buf, cap, "(unsigned char)(td_gpat ^ %d)", kp_gxor(i));
    else
        snprintf(buf, cap, "(unsigned char)(td_gpat ^ 0x%02x)",
                 (unsigned)(0x11 * (i + 1)) & 0xffu);
    return buf;
}

int td__kp_rounds(const kp_plan *p)
{
    int r = p->fam->rounds != NULL ? p->fam->rounds(p) : 1;
    /* Every set of scalar values in two rounds (kp_plan.nsv). */
    if (p->nsv > 1 && r < 2 * p->nsv)
        r = 2 * p->nsv;
    return r;
}

/* Owner words of the one-writer check at most (a word per dst element of
 * every instance, in the guard array). */
#define KP_MAX_OWNERS 16384

/* The staged buffer whose writes the one-writer check records (kp_family.
 * one_writer): the shared dst, when the body names it only as NAME_ptr[
 * (never &NAME_ptr[...]: the address of a proxy)
 * and its elements over every instance fit KP_MAX_OWNERS; else -1. */
static int kp_one_writer(const kp_plan *p, const char *body)
{
    if (!p->fam->one_writer || p->fam->body_close != NULL ||
        p->fam->body_open != NULL)
        return -1;
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        if (!kb->is_dst || !kb->shared)
            continue;
        if (td__mul_sat(p->instances, td__kp_shared_elems(kb)) >
            KP_MAX_OWNERS)
            return -1;
        char name[TD_NAME_MAX + 8];
        snprintf(name, sizeof name, "%s_ptr", kb->b->name);
        size_t nl = strlen(name);
        for (const char *q = strstr(body, name); q != NULL;
             q = strstr(q + nl, name)) {
            char before = q == body ? ' ' : q[-1];
            if (isalnum((unsigned char)before) || before == '_')
                continue;
            if (isalnum((unsigned char)q[nl]) || q[nl] == '_')
                continue;
            /* &NAME_ptr[i] would take a proxy's address. */
            const char *b = q;
            while (b > body && (b[-1] == ' ' || b[-1] == '('))
                b--;
            if (q[nl] != '[' || (b > body && b[-1] == '&'))
                return -1;
        }
        return i;
    }
    return -1;
}

/* The words of the guard array: a flag per buffer, then with the
 * one-writer check three conflict words and the owner words. */
static int64_t kp_guard_words(const kp_plan *p, int ow)
{
    if (ow < 0)
        return p->nbufs;
    return p->nbufs + 3 +
           p->instances * td__kp_shared_elems(&p->bufs[ow]);
}

/* The padding after the body's own __shared__ scratch that the program
 * guards on the GPU: CUDA places a kernel's static shared memory first
 * and the dynamic memory after it, the dynamic base 16-byte aligned (at
 * least), so with one static array of S bytes (S not a multiple of 16)
 * the 16 - S % 16 bytes right before td_smem lie between the array's end
 * and the dynamic base whatever that alignment is: no byte of the array,
 * and with a 16-byte aligned base the bytes a store one past its end
 * hits.  Returns that count (S in *bytes), or 0 (no scratch, a multiple
 * of 16, more than one __shared__ declaration in the body, a type this
 * does not know, no dynamic memory). */
static int64_t kp_scratch_pad(const kp_plan *p, const char *body,
                              bool any_shared, int64_t *bytes)
{
    static const struct {
        const char *t;
        int size;
    } types[] = {{"float", 4}, {"double", 8}, {"__half", 2},
                 {"__nv_bfloat16", 2}, {"int", 4}, {"unsigned int", 4},
                 {"long long", 8}, {"unsigned long long", 8}};
    *bytes = 0;
    const char *q = strstr(body, "__shared__ ");
    if (!any_shared || p->scratch <= 0 || q == NULL ||
        strstr(q + 1, "__shared__") != NULL)
        return 0;
    /* `__shared__ TYPE NAME[N];`: the array's own bytes (p->scratch
     * rounds each array up to 16). */
    q += strlen("__shared__ ");
    const char *br = strchr(q, '[');
    const char *nl = strchr(q, '\n');
    if (br == NULL || (nl != NULL && nl < br))
        return 0;
    const char *name = br;
    while (name > q && name[-1] != ' ')
        name--;
    size_t tl = name > q ? (size_t)(name - q - 1) : 0;
    int size = 0;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strlen(types[i].t) == tl && strncmp(types[i].t, q, tl) == 0)
            size = types[i].size;
    char *end = NULL;
    long long n = strtoll(br + 1, &end, 10);
    if (size == 0 || end == NULL || strncmp(end, "];", 2) != 0 || n <= 0 ||
        n > p->scratch)
        return 0;
    *bytes = n * size;
    return *bytes % 16 != 0 ? 16 - *bytes % 16 : 0;
}

void td__kp_i64_list(td_buf *o, const int64_t *v, int n)
{
    td__buf_puts(o, "{");
    for (int i = 0; i < n; i++)
        td__buf_printf(o, "%s%" PRId64, i ? ", " : "", v[i]);
    if (n == 0)
        td__buf_puts(o, "0");
    td__buf_puts(o, "}");
}

void td__kp_int_table(td_buf *o, const char *name, const int *v, int64_t n)
{
    td__buf_printf(o, "static const int %s[] = {", name);
    for (int64_t i = 0; i < n; i++) {
        bool line = i % 16 == 0;
        td__buf_append(o, line ? "\n    " : " ", line ? 5 : 1);
        td__buf_int(o, v[i]);
        td__buf_append(o, ",", 1);
    }
    td__buf_puts(o, "\n};\n");
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

/* The (thread, slot) -> element table of each register buffer with a
 * layout, for the device (staging) and the host (checking). */
static void kp_write_maps(td_buf *o, const kp_plan *p)
{
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        if (kb->inv != NULL) {
            const char *n = kb->b->name;
            td__buf_printf(o,
                           "/* %s: logical element at each offset of its "
                           "shared storage; -1 = a hole.\n   layout: %s */\n"
                           "#define TD_INV_%s_INIT {",
                           n, kb->b->layout_text[0] ? kb->b->layout_text : "?",
                           n);
            for (int64_t j = 0; j < kb->span; j++) {
                if (j % 16 == 0)
                    td__buf_puts(o, " \\\n    ");
                td__buf_printf(o, "%d,", kb->inv[j]);
            }
            td__buf_printf(o, " \\\n}\n"
                              "__device__ const int td_inv_%s_dev[] = "
                              "TD_INV_%s_INIT;\n"
                              "static const int td_inv_%s_host[] = "
                              "TD_INV_%s_INIT;\n\n",
                           n, n, n, n);
            continue;
        }
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

/* Buffer i's guard byte is the round's pattern XOR this: a different byte
 * for each of four neighbouring buffers (0x4F, 0x4D, 0x4B, 0x49, or 0xCF
 * to 0xC9 by round: still large, float16 10.6 at least, and of the
 * round's sign), so a body that copies one buffer's guard bytes past the
 * end of another (a loop one step too far, elementwise) still changes
 * the other's. */
/* The kernel: every buffer staged in from its instance's global copy, the
 * emitted body, every buffer staged out. */
static void kp_write_kernel(td_buf *o, const kp_plan *p, const char *body,
                            int ow, int64_t pad, int64_t sbytes, int64_t sg)
{
    bool any_shared = false;
    td__buf_puts(o, "__global__ void td_kernel(");
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *t = td__kp_ctype(kb->b->dtype);
        /* A global buffer is the body's NAME_ptr itself: every instance
         * addresses the one array. */
        if (kb->global)
            td__buf_printf(o, "%s%s *%s_ptr",
                           i ? ",\n                          " : "", t,
                           kb->b->name);
        else
            td__buf_printf(o, "%sconst %s *__restrict__ td_in_%s, %s *td_out_%s",
                           i ? ",\n                          " : "", t,
                           kb->b->name, t, kb->b->name);
        any_shared |= kb->shared;
    }
    /* One flag per buffer: set when the body wrote past its end. */
    td__buf_puts(o, ",\n                          int *td_guard, int td_gpat");
    /* Named scalars: the body reads them by name. */
    for (int i = 0; i < p->nscalars; i++)
        td__buf_printf(o, ",\n                          const %s %s",
                       td__kp_ctype(p->scalars[i].dtype), p->scalars[i].name);
    if (p->fam->kernel_params != NULL)
        p->fam->kernel_params(o, p);
    td__buf_puts(o, ")\n{\n");
    td__buf_puts(o, td__kp_frag_kernel_ids);
    if (any_shared)
        td__buf_puts(o, "    extern __shared__ __align__(16) unsigned char "
                        "td_smem[];\n");
    /* A TMA tile swizzles by address bits: its base must sit on the
     * swizzle's whole pattern (1024 bytes for 128B), more than the 16
     * bytes CUDA promises for dynamic shared memory; the family asked
     * for the slack. */
    const char *sbase = "td_smem";
    if (any_shared && p->smem_align > 16) {
        sbase = "td_smem_al";
        td__buf_printf(o, "    unsigned char *const td_smem_al = (unsigned "
                          "char *)(((unsigned long long)td_smem + %" PRId64
                          "ULL) & ~%" PRId64 "ULL);\n",
                       p->smem_align - 1, p->smem_align - 1);
    }
    int64_t smem_off = 0;
    char gap[96], gpat[48];
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        if (kb->global) {
            td__buf_printf(o, "    /* %s: global, one array for every "
                              "instance (a kernel parameter). */\n", n);
            continue;
        }
        if (kb->shared) {
            /* One copy per instance in dynamic shared memory, each
             * 16-byte aligned; the body indexes NAME_ptr, which points at
             * this thread's instance's copy. */
            int64_t pitch = td__kp_pitch(kb), stride = td__kp_stride(p, kb);
            int64_t used = td__kp_shared_elems(kb) *
                           (td_dtype_bits(kb->b->dtype) / 8);
            char at[96];
            td__kp_shared_at(kb, at, sizeof at);
            td__buf_printf(o,
                           "    /* %s: shared, one copy per scope instance "
                           "(%" PRId64 " bytes each), staged by the "
                           "instance's threads. */\n"
                           "    %s *const %s_ptr = (%s *)(%s + %" PRId64
                           "LL + (td_tid / TD_TPI) * %" PRId64 "LL);\n",
                           n, pitch, t, n, t, sbase, smem_off, stride);
            if (kb->inv != NULL)
                /* Through its layout: every offset of the storage, the
                 * holes with the gap bits. */
                td__buf_printf(o,
                               "    for (int i = td_t; i < %" PRId64
                               "; i += TD_TPI) {\n"
                               "        const int e = td_inv_%s_dev[i];\n"
                               "        %s_ptr[i] = e >= 0 ? td_in_%s[td_inst * %"
                               PRId64 "LL + e] : %s;\n    }\n",
                               kb->span, n, n, n, kb->elems,
                               kp_gap(p, kb->b->dtype, gap, sizeof gap));
            else
                td__buf_printf(o,
                               "    for (int i = td_t; i < %" PRId64
                               "; i += TD_TPI)\n"
                               "        %s_ptr[%s] = td_in_%s[td_inst * %" PRId64
                               "LL + i];\n",
                               kb->elems, n, at, n, kb->elems);
            if (stride > used)
                td__buf_printf(o,
                               "    /* the guard bytes after %s (checked "
                               "after the body) */\n"
                               "    for (int i = td_t; i < %" PRId64
                               "; i += TD_TPI)\n"
                               "        ((unsigned char *)%s_ptr)[%" PRId64
                               " + i] = %s;\n",
                               n, stride - used, n, used,
                               kp_gpat(p, i, gpat, sizeof gpat));
            smem_off += stride * p->ipb;
            continue;
        }
        td__buf_printf(o, "    /* %s: registers, %" PRId64 " slot(s) per "
                          "thread%s. */\n",
                       n, kb->slots,
                       kb->map ? ", filled through the layout"
                               : ", each thread holds the whole buffer");
        /* Guard slots after the thread's slots, filled with a byte
         * pattern and checked after the body. */
        int64_t g = td__kp_reg_guard(kb);
        if (p->reg_align > 0)
            td__buf_printf(o, "    __align__(%" PRId64 ")", p->reg_align);
        td__buf_printf(o, "%s%s %s_ptr[%" PRId64 " + %" PRId64 "];\n"
                          "    for (int i = 0; i < (int)sizeof(%s) * %" PRId64
                          "; ++i)\n"
                          "        ((unsigned char *)&%s_ptr[%" PRId64
                          "])[i] = %s;\n",
                       p->reg_align > 0 ? " " : "    ", t, n, kb->slots, g,
                       t, g, n, kb->slots, kp_gpat(p, i, gpat, sizeof gpat));
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
                       n, n, kb->elems,
                       kp_gap(p, kb->b->dtype, gap, sizeof gap));
    }
    if (pad > 0)
        td__buf_printf(o,
                       "#ifdef __CUDA_ARCH__\n"
                       "    /* the %" PRId64 " bytes between the body's own "
                       "__shared__ scratch (%" PRId64 " bytes)\n"
                       "     * and td_smem: padding on the GPU, guard bytes "
                       "here (checked after the body) */\n"
                       "    if (td_tid < %" PRId64 ")\n"
                       "        ((volatile unsigned char *)td_smem)[td_tid - "
                       "%" PRId64 "] = (unsigned char)(td_gpat ^ 0x5A);\n"
                       "#endif\n",
                       pad, sbytes, pad, pad);
    if (any_shared)
        td__buf_puts(o, "    __syncthreads();\n");
    /* Adversarial timing: in every other round (the guard pattern's high
     * bit) the block's warps after the first start the body some 20 us
     * late, so a body whose first warp reads what later warps write with
     * no barrier between reads it before it is written; the GPU's usual
     * schedule, every warp as fast, hides such a race.  Not on the CPU
     * stand-in, whose host threads interleave anyway. */
    td__buf_puts(o, "#ifdef __CUDA_ARCH__\n"
                    "    if ((td_gpat & 0x80) && td_tid >= 32) {\n"
                    "        const long long td_t0 = clock64();\n"
                    "        while (clock64() - td_t0 < 40000)\n"
                    "            ;\n"
                    "    }\n"
                    "#endif\n");
    /* A family's protocol around the body (kp.h: body_open, body_close)
     * stays outside the marked braces: the mutation suite mutates what
     * the marker's braces hold (tests/mutation/mutate.py), and that must
     * be the emitted body alone, never the harness. */
    if (p->fam->body_open != NULL)
        p->fam->body_open(o, p);
    if (ow >= 0) {
        /* The dst through td_one_writer: a scope of its own around the
         * body, which closes after the harness's barrier (the barrier
         * stays the statement right after the body). */
        const kp_buf *kb = &p->bufs[ow];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        int64_t ne = td__kp_shared_elems(kb);
        td__buf_printf(o,
                       "    {\n"
                       "    /* %s: each element written by one thread "
                       "(td_one_writer). */\n"
                       "    %s *const td_raw_%s = %s_ptr;\n"
                       "    const td_one_writer<%s> %s_ptr = {td_raw_%s, "
                       "td_guard + %d + td_inst * %" PRId64 "LL, "
                       "td_guard + %d, %" PRId64 "LL, td_tid};\n",
                       n, t, n, n, t, n, n, p->nbufs + 3, ne, p->nbufs, ne);
    }
    td__buf_printf(o, "    /* The emitted body (variant %s). */\n",
                   p->variant);
    td__buf_puts(o, "    {\n");
    td__buf_puts(o, body);
    size_t bl = strlen(body);
    if (bl > 0 && body[bl - 1] != '\n')
        td__buf_puts(o, "\n");
    td__buf_puts(o, "    }\n");
    if (p->fam->body_close != NULL)
        p->fam->body_close(o, p);
    /* copy_async leaves the wait to its caller (TVM's ldgsts emits no
     * commit or wait): the program commits the group and waits for all of
     * it before the barrier.  A host build copied at once. */
    if (strncmp(p->call->op, "copy_async", TD_NAME_MAX) == 0 &&
        p->fam->body_close == NULL)
        td__buf_puts(o, "#ifdef __CUDA_ARCH__\n"
                        "    asm volatile(\"cp.async.commit_group;\" : : : "
                        "\"memory\");\n"
                        "    asm volatile(\"cp.async.wait_all;\" : : : "
                        "\"memory\");\n"
                        "#else\n"
                        "    /* the host helpers copied at once */\n"
                        "#endif\n");
    if (any_shared)
        td__buf_puts(o, "    __syncthreads();\n");
    if (ow >= 0)
        td__buf_puts(o, "    }\n");
    if (pad > 0)
        td__buf_printf(o,
                       "#ifdef __CUDA_ARCH__\n"
                       "    if (td_tid < %" PRId64 " && ((volatile unsigned "
                       "char *)td_smem)[td_tid - %" PRId64 "] != "
                       "(unsigned char)(td_gpat ^ 0x5A))\n"
                       "        td_guard[%" PRId64 "] = 1;\n"
                       "#endif\n",
                       pad, pad, sg);
    /* A write past the end of a buffer changed its guard bytes. */
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        if (kb->global)
            continue; /* its guards are checked by the host */
        if (kb->shared) {
            int64_t used = td__kp_shared_elems(kb) *
                           (td_dtype_bits(kb->b->dtype) / 8);
            int64_t stride = td__kp_stride(p, kb);
            if (stride > used)
                td__buf_printf(o,
                               "    for (int i = td_t; i < %" PRId64
                               "; i += TD_TPI)\n"
                               "        if (((const unsigned char *)%s_ptr)[%"
                               PRId64 " + i] != %s)\n"
                               "            td_guard[%d] = 1;\n",
                               stride - used, n, used,
                               kp_gpat(p, i, gpat, sizeof gpat), i);
        } else {
            td__buf_printf(o,
                           "    for (int i = 0; i < (int)sizeof(%s) * %" PRId64
                           "; ++i)\n"
                           "        if (((const unsigned char *)&%s_ptr[%"
                           PRId64 "])[i] != %s)\n"
                           "            td_guard[%d] = 1;\n",
                           td__kp_ctype(kb->b->dtype), td__kp_reg_guard(kb), n,
                           kb->slots, kp_gpat(p, i, gpat, sizeof gpat), i);
        }
    }
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        char at[96];
        td__kp_shared_at(kb, at, sizeof at);
        if (kb->global)
            continue;
        if (kb->inv != NULL)
            td__buf_printf(o,
                           "    for (int i = td_t; i < %" PRId64
                           "; i += TD_TPI)\n"
                           "        td_out_%s[td_inst * %" PRId64
                           "LL + i] = %s_ptr[i];\n",
                           kb->span, n, kb->span, n);
        else if (kb->shared)
            td__buf_printf(o,
                           "    for (int i = td_t; i < %" PRId64
                           "; i += TD_TPI)\n"
                           "        td_out_%s[td_inst * %" PRId64
                           "LL + i] = %s_ptr[%s];\n",
                           kb->elems, n, kb->elems, n, at);
        else
            td__buf_printf(o,
                           "    for (int s = 0; s < %" PRId64 "; ++s)\n"
                           "        td_out_%s[(td_inst * TD_TPI + td_t) * %"
                           PRId64 "LL + s] = %s_ptr[s];\n",
                           kb->slots, n, kb->slots, n);
    }
    td__buf_puts(o, "}\n\n");
}

/* main: the host and device arrays, then TD_ROUNDS rounds, each with new
 * inputs from the family's generators (and its fill), the launch and per
 * instance the family's reference and a check of every staged value; the
 * first round with a mismatch ends the loop. */
static void kp_write_main(td_buf *o, const kp_plan *p, int ow, int64_t sg)
{
    const bool bits = p->fam->bits;
    /* The host's copy of the inputs: exact doubles, or raw bits. */
    const char *vt = bits ? "unsigned long long" : "double";
    const char *from = bits ? "td_from_bits" : "td_from_double";
    const char *to = bits ? "td_bits" : "td_to_double";
    td__buf_puts(o, td__kp_frag_main_start);
    /* Host arrays: inputs (device type and exact double copies) and the
     * staged-back outputs. */
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        int64_t nin = td__kp_nin(p, kb);
        int64_t nout = kb->inv != NULL ? kb->span * p->instances
                       : kb->shared || kb->global
                           ? nin
                           : kb->slots * p->tpi * p->instances;
        td__buf_printf(o,
                       "    const long long td_nin_%s = %" PRId64 "LL, "
                       "td_nout_%s = %" PRId64 "LL;\n"
                       "    %s *h_in_%s = (%s *)malloc(sizeof(%s) * td_nin_%s);\n"
                       "    %s *h_out_%s = (%s *)malloc(sizeof(%s) * td_nout_%s);\n"
                       "    %s *v_in_%s = (%s *)malloc(sizeof(%s) * "
                       "td_nin_%s);\n"
                       "    if (h_in_%s == NULL || h_out_%s == NULL || v_in_%s == "
                       "NULL) {\n"
                       "        printf(\"FAIL %%s host out of memory\\n\", TD_NAME);\n"
                       "        return 1;\n    }\n",
                       n, nin, n, nout, t, n, t, t, n, t, n, t, t, n, vt, n,
                       vt, vt, n, n, n, n);
    }
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        if (kb->global)
            td__buf_printf(o, "    %s *d_in_%s = NULL;\n", t, n);
        else
            td__buf_printf(o, "    %s *d_in_%s = NULL, *d_out_%s = NULL;\n",
                           t, n, n);
        td__buf_printf(o,
                       "    TD_CHECK(cudaMalloc((void **)&d_in_%s, sizeof(%s) * "
                       "td_nin_%s));\n",
                       n, t, n);
        /* A global buffer is one array, read back from where it is. */
        if (kb->global)
            td__buf_printf(o,
                           "    /* %s: global, %" PRId64 " elements of "
                           "storage between %" PRId64 " guard elements on "
                           "each side. */\n",
                           n, kb->span, kb->gpad);
        else
            td__buf_printf(o,
                           "    TD_CHECK(cudaMalloc((void **)&d_out_%s, "
                           "sizeof(%s) * td_nout_%s));\n",
                           n, t, n);
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
    td__buf_printf(o,
                   "    int *d_guard = NULL, h_guard[%" PRId64 "];\n"
                   "    TD_CHECK(cudaMalloc((void **)&d_guard, sizeof h_guard));\n",
                   kp_guard_words(p, ow) + (sg >= 0));
    if (p->nsv > 1) {
        td__buf_printf(o,
                       "    /* The declared scalars' values: round r passes "
                       "set r / 2 %% %d (each set\n"
                       "     * in two rounds, both guard patterns); the "
                       "tables follow (td_sv_use). */\n"
                       "    static const double td_sv_set[%d][%d] = {\n",
                       p->nsv, p->nsv, p->nscalars);
        for (int s = 0; s < p->nsv; s++) {
            td__buf_puts(o, "        {");
            for (int i = 0; i < p->nscalars; i++)
                td__buf_printf(o, "%s%.17g", i ? ", " : "", p->sv[s][i]);
            td__buf_puts(o, "},\n");
        }
        td__buf_puts(o, "    };\n");
    } else {
        for (int i = 0; i < p->nscalars; i++) {
            const kp_scalar *sc = &p->scalars[i];
            const char *t = td__kp_ctype(sc->dtype);
            td__buf_printf(o, "    const %s td_sv_%s = td_from_double<%s>(%.17g);\n",
                           t, sc->name, t, sc->value);
        }
    }
    if (p->fam->host_setup != NULL)
        p->fam->host_setup(o, p);
    td__buf_puts(o, bits ? td__kp_frag_main_want_bits
                         : td__kp_frag_main_want);
    if (p->nsv > 1) {
        td__buf_printf(o, "        const int td_svi = td_round / 2 %% %d;\n"
                          "        td_sv_use(td_svi);\n",
                       p->nsv);
        for (int i = 0; i < p->nscalars; i++) {
            const kp_scalar *sc = &p->scalars[i];
            const char *t = td__kp_ctype(sc->dtype);
            td__buf_printf(o, "        const %s td_sv_%s = td_from_double<%s>"
                              "(td_sv_set[td_svi][%d]);\n",
                           t, sc->name, t, i);
        }
    }
    /* The rounds: new inputs (the family's generators, then its fill,
     * then each value as the buffer's dtype stores it), launch, check. */
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        td__buf_printf(o, "        for (long long i = 0; i < td_nin_%s; ++i)\n"
                          "            v_in_%s[i] = ",
                       n, n);
        p->fam->gen_expr(o, p, kb);
        td__buf_puts(o, ";\n");
    }
    if (p->fam->fill != NULL)
        p->fam->fill(o, p);
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        const char *t = td__kp_ctype(kb->b->dtype);
        td__buf_printf(o,
                       "        for (long long i = 0; i < td_nin_%s; ++i) {\n"
                       "            h_in_%s[i] = %s<%s>(v_in_%s[i]);\n"
                       "            v_in_%s[i] = %s(h_in_%s[i]);\n"
                       "        }\n"
                       "        TD_CHECK(cudaMemcpy(d_in_%s, h_in_%s, sizeof(%s) * "
                       "td_nin_%s, cudaMemcpyHostToDevice));\n",
                       n, n, from, t, n, n, to, n, n, n, t, n);
        if (!kb->global)
            td__buf_printf(o,
                           "        TD_CHECK(cudaMemset(d_out_%s, 0xff, "
                           "sizeof(%s) * td_nout_%s));\n",
                           n, t, n);
    }
    td__buf_puts(o, "        TD_CHECK(cudaMemset(d_guard, 0, sizeof h_guard));\n");
    if (p->cluster[0] > 0)
        /* A cluster launch: the CTAs of a cluster run together and reach
         * each other's shared memory; only cudaLaunchKernelEx takes the
         * cluster's shape at run time. */
        td__buf_printf(o,
                       "        cudaLaunchConfig_t td_cfg;\n"
                       "        memset(&td_cfg, 0, sizeof td_cfg);\n"
                       "        td_cfg.gridDim = dim3(%" PRId64 ", %" PRId64
                       ", %" PRId64 ");\n"
                       "        td_cfg.blockDim = dim3(%" PRId64 ", %" PRId64
                       ", %" PRId64 ");\n"
                       "        td_cfg.dynamicSmemBytes = %" PRId64 ";\n"
                       "        cudaLaunchAttribute td_attr[1];\n"
                       "        memset(td_attr, 0, sizeof td_attr);\n"
                       "        td_attr[0].id = "
                       "cudaLaunchAttributeClusterDimension;\n"
                       "        td_attr[0].val.clusterDim.x = %" PRId64 ";\n"
                       "        td_attr[0].val.clusterDim.y = %" PRId64 ";\n"
                       "        td_attr[0].val.clusterDim.z = %" PRId64 ";\n"
                       "        td_cfg.attrs = td_attr;\n"
                       "        td_cfg.numAttrs = 1;\n"
                       "        TD_CHECK(cudaLaunchKernelEx(&td_cfg, td_kernel, ",
                       p->grid[0], p->grid[1], p->grid[2], p->block[0],
                       p->block[1], p->block[2], p->smem, p->cluster[0],
                       p->cluster[1], p->cluster[2]);
    else
        td__buf_printf(o, "        td_kernel<<<dim3(%" PRId64 ", %" PRId64
                          ", %" PRId64 "), dim3(%" PRId64 ", %" PRId64
                          ", %" PRId64 "), %" PRId64 ">>>(",
                       p->grid[0], p->grid[1], p->grid[2], p->block[0],
                       p->block[1], p->block[2], p->smem);
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        if (kb->global)
            td__buf_printf(o, "%sd_in_%s + %" PRId64, i ? ", " : "",
                           kb->b->name, kb->gpad);
        else
            td__buf_printf(o, "%sd_in_%s, d_out_%s", i ? ", " : "",
                           kb->b->name, kb->b->name);
    }
    /* The guard bytes alternate by round between 0x4F and 0xCF: read as
     * a value they are large and positive (float32 3.5e9, float16 29.2,
     * int8 79), then large and negative, so a read past the end changes
     * a sum, and wins a max in one round and a min in the next.  Each
     * buffer XORs its own small mask in (kp_gxor). */
    td__buf_puts(o, ", d_guard, td_round % 2 ? 0xCF : 0x4F");
    for (int i = 0; i < p->nscalars; i++)
        td__buf_printf(o, ", td_sv_%s", p->scalars[i].name);
    if (p->fam->launch_args != NULL)
        p->fam->launch_args(o, p);
    td__buf_puts(o, p->cluster[0] > 0 ? "));\n" : ");\n");
    td__buf_puts(o, "        TD_CHECK(cudaGetLastError());\n"
                    "        TD_CHECK(cudaDeviceSynchronize());\n"
                    "        TD_CHECK(cudaMemcpy(h_guard, d_guard, sizeof h_guard, "
                    "cudaMemcpyDeviceToHost));\n");
    for (int i = 0; i < p->nbufs; i++)
        td__buf_printf(o, "        td_guard_check(\"%s\", h_guard[%d]);\n",
                       p->bufs[i].b->name, i);
    if (ow >= 0)
        td__buf_printf(o, "        td_writer_check(\"%s\", h_guard + %d);\n",
                       p->bufs[ow].b->name, p->nbufs);
    if (sg >= 0)
        td__buf_printf(o, "        td_guard_check(\"__shared__ scratch of the "
                          "body\", h_guard[%" PRId64 "]);\n",
                       sg);
    for (int i = 0; i < p->nbufs; i++) {
        const char *n = p->bufs[i].b->name;
        const char *t = td__kp_ctype(p->bufs[i].b->dtype);
        td__buf_printf(o,
                       "        TD_CHECK(cudaMemcpy(h_out_%s, d_%s_%s, sizeof(%s) * "
                       "td_nout_%s, cudaMemcpyDeviceToHost));\n",
                       n, p->bufs[i].global ? "in" : "out", n, t, n);
    }
    /* Expected contents per instance and buffer. */
    td__buf_puts(o, "        for (long long inst = 0; inst < TD_INSTANCES; "
                    "++inst) {\n");
    p->fam->ref_call(o, p);
    const char *same = bits ? "td_check_bits" : "td_check";
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        if (kb->global)
            continue; /* after the instances: one array for all */
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
        /* The family may check its dst values its own way. */
        const char *chk = kb->is_dst ? p->fam->dst_check : same;
        if (kb->inv != NULL) {
            /* Every offset of the storage: a hole must hold the gap bits
             * (its offset goes where a register slot would). */
            td__buf_printf(o,
                           "            for (long long i = 0; i < %" PRId64
                           "; ++i) {\n"
                           "                const long long e = "
                           "td_inv_%s_host[i];\n"
                           "                if (e < 0) {\n"
                           "                    %s(\"%s\", inst, -1, -1, i, "
                           "td_bits(h_out_%s[inst * %" PRId64 "LL + i]), "
                           "0x%llxULL, 0.0);\n"
                           "                    continue;\n"
                           "                }\n"
                           "                %s(\"%s\", inst, e, -1, -1, "
                           "td_bits(h_out_%s[inst * %" PRId64 "LL + i]), "
                           "%s, %s);\n"
                           "            }\n",
                           kb->span, n, chk, n, n, kb->span,
                           p->fam->gap_bits(kb->b->dtype), chk, n, n, kb->span,
                           want, tol);
        } else if (kb->shared) {
            td__buf_printf(o,
                           "            for (long long e = 0; e < %" PRId64 "; ++e)\n"
                           "                %s(\"%s\", inst, e, -1, -1, "
                           "%s(h_out_%s[inst * %" PRId64 "LL + e]), "
                           "%s, %s);\n",
                           kb->elems, chk, n, to, n, kb->elems, want, tol);
        } else {
            td__buf_printf(o,
                           "            for (long long t = 0; t < TD_TPI; ++t)\n"
                           "                for (long long s = 0; s < %" PRId64
                           "; ++s) {\n",
                           kb->slots);
            if (kb->map)
                td__buf_printf(o, "                    const long long e = "
                                  "td_map_%s_host[t * %" PRId64 " + s];\n",
                               n, kb->slots);
            else
                td__buf_puts(o, "                    const long long e = s;\n");
            /* A bit-exact family checks that a slot no element owns
             * still holds the gap bits. */
            if (bits)
                td__buf_printf(o,
                               "                    if (e < 0) {\n"
                               "                        %s(\"%s\", inst, -1, t, s, "
                               "td_bits(h_out_%s[(inst * TD_TPI + t) * %"
                               PRId64 "LL + s]), 0x%llxULL, 0.0);\n"
                               "                        continue;\n"
                               "                    }\n",
                               chk, n, n, kb->slots,
                               p->fam->gap_bits(kb->b->dtype));
            else
                td__buf_puts(o, "                    if (e < 0)\n"
                                "                        continue;\n");
            td__buf_printf(o,
                           "                    %s(\"%s\", inst, e, t, s, "
                           "%s(h_out_%s[(inst * TD_TPI + t) * %"
                           PRId64 "LL + s]), %s, %s);\n"
                           "                }\n",
                           chk, n, to, n, kb->slots, want, tol);
        }
    }
    td__buf_puts(o, "        }\n");
    /* Global buffers, once: every instance addressed the same array (the
     * dst's reference is the same for every instance; the family's data
     * sees to it), guard elements included. */
    for (int i = 0; i < p->nbufs; i++) {
        const kp_buf *kb = &p->bufs[i];
        const char *n = kb->b->name;
        if (!kb->global)
            continue;
        td__buf_printf(o,
                       "        for (long long e = 0; e < td_nin_%s; ++e)\n"
                       "            %s(\"%s\", -1, e, -1, -1, "
                       "%s(h_out_%s[e]), %s%s[e], 0.0);\n",
                       n, kb->is_dst ? p->fam->dst_check : same, n, to, n,
                       kb->is_dst ? "td_want" : "v_in_",
                       kb->is_dst ? "" : n);
    }
    td__buf_puts(o, "    }\n");
    for (int i = 0; i < p->nbufs; i++) {
        const char *n = p->bufs[i].b->name;
        td__buf_printf(o, "    TD_CHECK(cudaFree(d_in_%s));\n", n);
        if (!p->bufs[i].global)
            td__buf_printf(o, "    TD_CHECK(cudaFree(d_out_%s));\n", n);
        td__buf_printf(o,
                       "    free(h_in_%s);\n    free(h_out_%s);\n"
                       "    free(v_in_%s);\n",
                       n, n, n);
    }
    td__buf_puts(o, "    TD_CHECK(cudaFree(d_guard));\n");
    td__buf_puts(o, td__kp_frag_main_end);
    p->fam->pass(o, p);
}

/* The header comment: what the program checks and how to run it; the
 * family adds its own lines before the closing one. */
static void kp_write_header(td_buf *o, const kp_plan *p)
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
                   " * rounds:  %d (each stages new data, launches and checks)\n"
                   " * Options: --data exact|random (default exact), --seed N, --rounds N\n"
                   " *          (at most N rounds).\n"
                   " * Prints \"PASS %s max_err=E\", \"FAIL %s ...\" or \"SKIP %s: "
                   "no CUDA device (...)\";\n"
                   " * exit 0 / 1 / 77 (2: bad option).\n",
                   p->name, script, p->variant, p->grid[0], p->grid[1],
                   p->grid[2], p->block[0], p->block[1], p->block[2],
                   p->instances, p->tpi, td__kp_rounds(p), p->name, p->name,
                   p->name);
    if (p->cluster[0] > 0)
        td__buf_printf(o,
                       " * cluster: (%" PRId64 ", %" PRId64 ", %" PRId64
                       ") CTAs, launched with cudaLaunchKernelEx.\n",
                       p->cluster[0], p->cluster[1], p->cluster[2]);
    if (p->threads_asked != 0)
        td__buf_printf(o,
                       " * The call launches %" PRId64 " threads a block; "
                       "their shared copies do not fit,\n"
                       " * so the program launches %" PRId64 " (thread scope: "
                       "the body does not depend on it).\n",
                       p->threads_asked, p->nthreads);
    if (p->fam->header != NULL)
        p->fam->header(o, p);
    td__buf_puts(o, " */\n");
}

int td__kp_write(td_buf *o, const kp_plan *p, const char *body,
                 const char *prelude)
{
    kp_write_header(o, p);
    td__buf_puts(o, td__kp_frag_includes);
    if (p->half)
        td__buf_puts(o, "#include <cuda_fp16.h>\n");
    if (p->bf16)
        td__buf_puts(o, "#include <cuda_bf16.h>\n");
    if (p->fp8)
        td__buf_puts(o, "#include <cuda_fp8.h>\n");
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
                   "#define TD_INSTANCES %" PRId64 "LL\n"
                   "#define TD_ROUNDS %d /* each: new data, launch, check */\n\n",
                   p->nthreads, p->tpi, p->ipb, p->instances, td__kp_rounds(p));
    td__buf_puts(o, td__kp_frag_helpers);
    if (p->half)
        td__buf_puts(o, td__kp_frag_helpers_half);
    if (p->bf16)
        td__buf_puts(o, td__kp_frag_helpers_bf16);
    /* A float8 value read by the reference (kp_family.float8): the
     * conversions of each float8 dtype the program stages. */
    for (int t = 0; t < 2 && p->fp8 && !p->fam->bits; t++) {
        bool used = false;
        for (int i = 0; i < p->nbufs; i++)
            used |= p->bufs[i].b->dtype == (t ? TD_F8E5M2 : TD_F8E4M3);
        if (used)
            td__buf_puts(o, t ? td__kp_frag_helpers_e5m2
                              : td__kp_frag_helpers_e4m3);
    }
    if (p->fam->bits)
        td__buf_puts(o, td__kp_frag_bits);
    td__buf_puts(o, "\n");
    /* The family's reference, then the checks, generators and options
     * every program shares, then what the family adds after them. */
    p->fam->tables(o, p);
    p->fam->reference(o, p);
    td__buf_puts(o, td__kp_frag_host_common);
    if (p->fam->bits)
        td__buf_puts(o, td__kp_frag_bits_check);
    td__buf_puts(o, "\n");
    if (p->fam->helpers != NULL)
        p->fam->helpers(o, p);
    int ow = kp_one_writer(p, body);
    if (ow >= 0)
        td__buf_puts(o, td__kp_frag_one_writer);
    bool any_shared = false;
    for (int i = 0; i < p->nbufs; i++)
        any_shared |= p->bufs[i].shared;
    int64_t sbytes = 0;
    int64_t pad = kp_scratch_pad(p, body, any_shared, &sbytes);
    int64_t sg = pad > 0 ? kp_guard_words(p, ow) : -1;
    kp_write_maps(o, p);
    kp_write_kernel(o, p, body, ow, pad, sbytes, sg);
    kp_write_main(o, p, ow, sg);
    return o->err;
}
