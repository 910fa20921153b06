/*
 * Fuzz target: the TileLayout notation parser.  Oracles: no crash; an error
 * always carries a code, a message and a column inside the text; an accepted
 * layout formats to text that parses again to the same canonical text
 * (format is a fixed point); the layout model (model/layout.h: group,
 * local regions, element and owner maps) and the `local` variant's
 * analysis of it (variants/local_layout.h: dims, shuffle masks and
 * pattern, the reduction check) cope with every layout the parser accepts.
 */
#include <string.h>

#include "fuzz.h"
#include "tiledispatch.h"
#include "layout.h"
#include "local_layout.h"
#include "td_internal.h"

static int count_owner(void *u, int64_t tid, int64_t slot)
{
    (void)tid;
    (void)slot;
    ++*(int64_t *)u;
    return 0;
}

/* Runs the layout model and the local variant's analysis over a checked
 * layout with the shapes the layout suggests: its size as one dimension,
 * its shard extents as dimensions, and the first extent split off.  Only
 * crashes, sanitizer reports and hangs count here; every function may
 * refuse. */
static void exercise_model(const td_layout *l)
{
    char why[256];
    td_layout c, st;
    int64_t size = 0, v;
    if (td__lay_canonicalize(l, &c) != 0 || td__lay_size(&c, &size) != 0)
        return;
    (void)td__lay_span(&c, TD_LAY_ALL_MEMORY, &v);
    for (int a = 0; a < TD_AXIS_COUNT; a++)
        (void)td__lay_span(&c, a, &v);
    if (td__lay_storage(&c, &st) != 0)
        st = c;
    int64_t nrep = 0, nthreads, nslots;
    (void)td__lay_replica_count(&c, &nrep);
    (void)td__lay_bounds(&c, &nthreads, &nslots);

    int64_t shapes[3][TD_MAX_RANK];
    int ndims[3] = {1, 0, 0};
    shapes[0][0] = size;
    if (c.nshard >= 1 && c.nshard <= TD_MAX_RANK) {
        ndims[1] = c.nshard;
        for (int i = 0; i < c.nshard; i++)
            shapes[1][i] = c.shard[i].extent;
    }
    if (c.nshard >= 1 && c.shard[0].extent > 0 &&
        size % c.shard[0].extent == 0) {
        ndims[2] = 2;
        shapes[2][0] = c.shard[0].extent;
        shapes[2][1] = size / c.shard[0].extent;
    }
    for (int k = 0; k < 3; k++) {
        int nd = ndims[k];
        if (nd == 0)
            continue;
        const int64_t *shape = shapes[k];
        td_layout g;
        int seps[TD_MAX_RANK + 1];
        (void)td__lay_group(l, shape, nd, &g, seps);
        td_local_dim dims[TD_MAX_RANK];
        if (td__local_analyze_dims(l, shape, nd, dims) == 0) {
            int reduce[1] = {nd - 1};
            int64_t masks[64];
            int nmasks = 0;
            (void)td__local_shuffle_masks(dims, nd, reduce, 1, masks, &nmasks,
                                          64);
            FUZZ_CHECK(nmasks >= 0 && nmasks <= 64);
        }
        int map[TD_MAX_RANK];
        (void)td__local_dim_map(l, shape, nd, map);
        int64_t start[TD_MAX_RANK] = {0}, ext[TD_MAX_RANK], one[TD_MAX_RANK];
        for (int d = 0; d < nd; d++) {
            ext[d] = shape[d];
            one[d] = 1;
        }
        td_lay_local loc;
        if (td__lay_local_region(l, shape, nd, start, ext, &loc, why,
                                 sizeof why) == 0)
            FUZZ_CHECK(loc.ndim >= 1 && loc.ndim <= TD_MAX_RANK);
        (void)td__lay_local_region(l, shape, nd, start, one, &loc, why,
                                   sizeof why);
        int reduce[1] = {nd - 1};
        int64_t dshape[1] = {1};
        (void)td__local_validate_reduction(l, &st, shape, nd, dshape, 1, reduce,
                                           1, why, sizeof why);
    }
    int64_t width, local_elems;
    (void)td__local_analyze_shuffle(&c, &st, &width, &local_elems, why,
                                    sizeof why);
    (void)td__local_analyze_shuffle(&c, &c, &width, &local_elems, why,
                                    sizeof why);

    int64_t elems[3] = {0, size / 2, size - 1};
    for (int i = 0; i < 3 && size > 0; i++) {
        int64_t coords[TD_AXIS_COUNT], tid;
        if (td__lay_map(&c, elems[i], coords) == 0)
            (void)td__lay_thread_id(coords, &tid);
        /* Enumerating owners costs one call per replica combination (up
         * to TD_LAY_MAX_OWNERS, bounded by design); keep executions fast. */
        if (nrep < 1 || nrep > 4096)
            continue;
        int64_t owners = 0;
        if (td__lay_owner_slots(&c, elems[i], count_owner, &owners) == 0)
            FUZZ_CHECK(owners >= 1 && owners <= TD_LAY_MAX_OWNERS);
    }
    int64_t coords[TD_AXIS_COUNT];
    if (nrep > 0) {
        (void)td__lay_replica(&c, 0, coords);
        (void)td__lay_replica(&c, nrep - 1, coords);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > 4096)
        return 0;
    /* The parser takes a NUL-terminated string: it stops at the first NUL. */
    char *text = malloc(size + 1);
    FUZZ_CHECK(text != NULL);
    memcpy(text, data, size);
    text[size] = '\0';
    size_t tlen = strlen(text);

    td_layout l;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_layout_parse(text, &l, &d);
    if (rc != 0) {
        FUZZ_CHECK(rc < 0 && d.code == rc && d.msg[0] != '\0');
        FUZZ_CHECK(d.col >= 1 && (size_t)d.col <= tlen + 1);
        char buf[1024];
        td_diag_format(&d, buf, sizeof buf);
        free(text);
        return 0;
    }
    FUZZ_CHECK(l.nshard >= 0 && l.nshard <= TD_MAX_LAYOUT_ITERS);
    FUZZ_CHECK(l.nrep >= 0 && l.nrep <= TD_MAX_LAYOUT_ITERS);

    /* Format into a too-small buffer first: it must stay in bounds. */
    char small[8];
    size_t need = td_layout_format(&l, small, sizeof small);
    FUZZ_CHECK(strlen(small) < sizeof small);
    char *canon = malloc(need + 1);
    FUZZ_CHECK(canon != NULL);
    FUZZ_CHECK(td_layout_format(&l, canon, need + 1) == need);
    FUZZ_CHECK(strlen(canon) == need);

    td_layout l2;
    td_diag_clear(&d);
    int rc2 = td_layout_parse(canon, &l2, &d);
    if (rc2 != 0)
        fprintf(stderr, "canonical text '%s' does not parse: %s\n", canon,
                d.msg);
    FUZZ_CHECK(rc2 == 0);
    size_t need2 = td_layout_format(&l2, NULL, 0);
    FUZZ_CHECK(need2 == need);
    char *canon2 = malloc(need2 + 1);
    FUZZ_CHECK(canon2 != NULL);
    td_layout_format(&l2, canon2, need2 + 1);
    if (strcmp(canon, canon2) != 0)
        fprintf(stderr, "format is not a fixed point: '%s' -> '%s'\n", canon,
                canon2);
    FUZZ_CHECK(strcmp(canon, canon2) == 0);

    /* The model's own functions must cope with whatever the parser built. */
    char why[256];
    if (td__lay_check(&l, why, sizeof why) == 0)
        exercise_model(&l);
    free(canon2);
    free(canon);
    free(text);
    return 0;
}
