/*
 * Fuzz target: the TileLayout notation parser.  Oracles: no crash; an error
 * always carries a code, a message and a column inside the text; an accepted
 * layout formats to text that parses again to the same canonical text
 * (format is a fixed point), and the internal model accepts it.
 */
#include <string.h>

#include "fuzz.h"
#include "layout.h"
#include "td_internal.h"

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
    if (td__lay_check(&l, why, sizeof why) == 0) {
        td_layout c;
        int64_t v;
        if (td__lay_canonicalize(&l, &c) == 0) {
            (void)td__lay_size(&c, &v);
            (void)td__lay_span(&c, TD_LAY_ALL_MEMORY, &v);
            (void)td__lay_replica_count(&c, &v);
            int64_t nthreads, nslots;
            (void)td__lay_bounds(&c, &nthreads, &nslots);
        }
    }
    free(canon2);
    free(canon);
    free(text);
    return 0;
}
