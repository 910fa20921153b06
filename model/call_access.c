/*
 * The public accessors of a loaded (or hand-built) call: its arch, its dst
 * and src buffers, its config entries by key and type, its reduce and
 * spatial dimensions, and a region's element count.  They never trust the
 * indices of a call built by hand.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model.h"

int td_call_set_arch(td_call *call, const char *arch)
{
    if (call == NULL || arch == NULL || strlen(arch) >= TD_NAME_MAX)
        return TD_EINVAL;
    for (const char *p = strstr(arch, "sm_"); p != NULL;
         p = strstr(p + 1, "sm_")) {
        const char *q = p + 3;
        long v = 0;
        int digits = 0;
        while (isdigit((unsigned char)q[digits]) && digits < 7) {
            v = v * 10 + (q[digits] - '0');
            digits++;
        }
        if (digits == 0)
            continue;
        if (isdigit((unsigned char)q[digits]))
            return TD_EINVAL; /* an absurdly long version number */
        td__strlcpy(call->arch, arch, sizeof call->arch);
        call->sm_version = (int)v;
        return 0;
    }
    return TD_EINVAL;
}

const td_buffer *td_call_dst_buffer(const td_call *call)
{
    if (call == NULL || call->dst.buffer < 0 ||
        call->dst.buffer >= call->nbuffers)
        return NULL;
    return &call->buffers[call->dst.buffer];
}

const td_buffer *td_call_src_buffer(const td_call *call)
{
    if (call == NULL || call->src.buffer < 0 ||
        call->src.buffer >= call->nbuffers)
        return NULL;
    return &call->buffers[call->src.buffer];
}

const td_config_entry *td_call_config(const td_call *call, const char *key)
{
    if (call == NULL || key == NULL)
        return NULL;
    for (int i = 0; i < call->nconfig && i < TD_MAX_CONFIG; i++)
        if (strcmp(call->config[i].key, key) == 0)
            return &call->config[i];
    return NULL;
}

bool td_call_config_bool(const td_call *call, const char *key, bool dflt)
{
    const td_config_entry *e = td_call_config(call, key);
    return e != NULL && e->kind == TD_VALUE_BOOL ? e->b : dflt;
}

int64_t td_call_config_int(const td_call *call, const char *key, int64_t dflt)
{
    const td_config_entry *e = td_call_config(call, key);
    return e != NULL && e->kind == TD_VALUE_INT ? e->i : dflt;
}

int td_call_axes(const td_call *call, int *reduce, int *nreduce, int *spatial,
                 int *nspatial, char *why, size_t whylen)
{
    int ndim = call->src.ndim;
    bool red[TD_MAX_RANK] = {false};
    if (ndim < 0 || ndim > TD_MAX_RANK) {
        if (why != NULL && whylen > 0)
            snprintf(why, whylen, "source rank %d is out of range", ndim);
        return TD_EINVAL;
    }
    for (int i = 0; i < call->naxes && i < TD_MAX_AXES; i++) {
        int ax = call->axes[i];
        long a = ax < 0 ? (long)ax + ndim : ax;
        if (a < 0 || a >= ndim) {
            if (why != NULL && whylen > 0)
                snprintf(why, whylen, "reduce axis %d out of range for ndim=%d",
                         ax, ndim);
            return TD_EINVAL;
        }
        red[a] = true;
    }
    int nr = 0, ns = 0;
    for (int d = 0; d < ndim; d++) {
        if (red[d])
            reduce[nr++] = d;
        else
            spatial[ns++] = d;
    }
    *nreduce = nr;
    *nspatial = ns;
    return 0;
}

int64_t td_region_size(const td_region *r)
{
    int64_t n = 1;
    for (int d = 0; d < r->ndim && d < TD_MAX_RANK; d++)
        n *= r->extent[d];
    return n;
}
