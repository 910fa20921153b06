/*
 * The reader of tests/tma/cases.txt shared by the tensor-map test and its
 * nvcc/driver check: key=value words and the request a line describes.
 */
#include <stdlib.h>
#include <string.h>

#include "cases_read.h"

/* Parses "a,b,c" into v; returns the count. */
int td__test_ints(const char *s, int64_t *v, int cap)
{
    int n = 0;
    while (*s && n < cap) {
        char *end;
        v[n++] = strtoll(s, &end, 10);
        if (*end != ',')
            break;
        s = end + 1;
    }
    return n;
}

/* The value of key in the space-separated key=value words of s (up to
 * stop, when given); NULL when absent.  Copies into buf. */
const char *td__test_value(const char *s, const char *stop, const char *key,
                         char *buf, size_t cap)
{
    size_t k = strlen(key);
    for (const char *p = s; (p = strstr(p, key)) != NULL; p++) {
        if (stop != NULL && p >= stop)
            return NULL;
        if ((p == s || p[-1] == ' ') && p[k] == '=') {
            const char *v = p + k + 1;
            size_t n = strcspn(v, " \n");
            if (n >= cap)
                n = cap - 1;
            memcpy(buf, v, n);
            buf[n] = '\0';
            return buf;
        }
    }
    return NULL;
}

void td__test_tmap_request(const char *line, const char *stop, td_tmap_request *r,
                    char *dtype, char *oob)
{
    char b[256];
    td__tmap_request_init(r);
    if (td__test_value(line, stop, "variant", b, sizeof b))
        r->explicit_map = strcmp(b, "explicit") == 0;
    r->dtype = td__test_value(line, stop, "dtype", dtype, 32);
    if (td__test_value(line, stop, "dir", b, sizeof b) && strcmp(b, "s2g") == 0) {
        r->direction = TD_TMAP_S2G;
        r->has_mbar = 0;
    }
    r->rank = td__test_ints(td__test_value(line, stop, "shape", b, sizeof b) ? b : "", r->shape,
                   TD_TMAP_MAX_IN);
    if (td__test_value(line, stop, "strides", b, sizeof b))
        td__test_ints(b, r->strides, TD_TMAP_MAX_IN);
    if (td__test_value(line, stop, "start", b, sizeof b))
        td__test_ints(b, r->start, TD_TMAP_MAX_IN);
    if (td__test_value(line, stop, "extent", b, sizeof b))
        td__test_ints(b, r->extent, TD_TMAP_MAX_IN);
    if (td__test_value(line, stop, "order", b, sizeof b)) {
        int64_t o[TD_TMAP_MAX_IN];
        int n = td__test_ints(b, o, TD_TMAP_MAX_IN);
        for (int i = 0; i < n; i++)
            r->order[i] = (int)o[i];
        r->order_set = 1;
    }
    if (td__test_value(line, stop, "sstrides", b, sizeof b)) {
        td__test_ints(b, r->smem_strides, TD_TMAP_MAX_IN);
        r->smem_strides_set = 1;
    }
    if (td__test_value(line, stop, "splits", b, sizeof b)) {
        /* dim:extent:stride triples, each copy dimension outermost first */
        for (char *c = b; *c; c++)
            if (*c == ':')
                *c = ',';
        int64_t t[3 * TD_TMAP_MAX_DIMS];
        int n = td__test_ints(b, t, 3 * TD_TMAP_MAX_DIMS) / 3;
        for (int i = 0; i < n; i++) {
            r->splits[i].dim = (int)t[3 * i];
            r->splits[i].extent = t[3 * i + 1];
            r->splits[i].stride = t[3 * i + 2];
        }
        r->nsplits = n;
    }
    if (td__test_value(line, stop, "smem", b, sizeof b)) {
        static const char *const kinds[] = {"row", "atom16", "sw32", "sw64",
                                            "sw128"};
        for (int i = 0; i < 5; i++)
            if (strcmp(b, kinds[i]) == 0)
                r->smem = (td_tmap_smem)i;
    }
    if (td__test_value(line, stop, "oob", oob, 32))
        r->oob = oob;
    if (td__test_value(line, stop, "offset", b, sizeof b))
        r->elem_offset = strtoll(b, NULL, 10);
    if (td__test_value(line, stop, "sm", b, sizeof b))
        r->sm = atoi(b);
    if (td__test_value(line, stop, "l2", b, sizeof b))
        r->l2_promotion = atoi(b);
}

