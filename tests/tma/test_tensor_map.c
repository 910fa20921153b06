/*
 * The tensor-map planner and validator (model/tensor_map.c) against data:
 * TVM's 52-case tensor-map golden matrix and 24-case validator matrix from
 * its test_tma.py, with the outputs recorded by running apache-tvm 0.27 on
 * each case, plus each rule's boundary (cases.txt says how a line reads).
 * Every golden case must give the same encoded parameters, every rejection
 * the same message; the printers (codegen/tensor_map_print.c) must print
 * every accepted map.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "td_internal.h"
#include "tensor_map.h"
#include "tensor_map_print.h"
#include "cases_read.h"

static int failures;
static int lineno;

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            fprintf(stderr, "cases.txt:%d: ", lineno);                          \
            fprintf(stderr, __VA_ARGS__);                                       \
            fputc('\n', stderr);                                                \
            failures++;                                                         \
        }                                                                       \
    } while (0)

static void expect_array(const char *line, const char *key, const int64_t *got,
                         int n)
{
    char b[256];
    int64_t want[TD_TMAP_MAX_DIMS];
    if (!td__test_value(line, NULL, key, b, sizeof b)) {
        CHECK(0, "no %s in the expectation", key);
        return;
    }
    int m = td__test_ints(b, want, TD_TMAP_MAX_DIMS);
    int same = m == n;
    for (int i = 0; same && i < n; i++)
        same = want[i] == got[i];
    if (!same) {
        char g[256] = "";
        td_sbuf o = {g, sizeof g, 0};
        for (int i = 0; i < n; i++)
            td__sbuf_printf(&o, "%s%" PRId64, i ? "," : "", got[i]);
        CHECK(0, "%s: want %s, got %s", key, b, g);
    }
}

static void golden(const char *line)
{
    const char *expect = strstr(line, " expect: ");
    td_tmap_request r;
    char dtype[32], oob[32], b[256];
    td__test_tmap_request(line, expect, &r, dtype, oob);
    td_tmap m;
    td_diag d;
    td_diag_clear(&d);
    int rc = td__tmap_plan(&r, &m, &d);
    CHECK(rc == 0, "planning failed: %s", d.msg);
    if (rc != 0 || expect == NULL)
        return;
    CHECK(td__test_value(expect, NULL, "dtype", b, sizeof b) && strcmp(b, m.dtype) == 0,
          "dtype: want %s, got %s", b, m.dtype);
    expect_array(expect, "dims", m.global_dims, m.rank);
    expect_array(expect, "gstrides", m.global_strides, m.nglobal_strides);
    expect_array(expect, "box", m.box_dims, m.rank);
    expect_array(expect, "coords", m.coordinates, m.ncoordinates);
    expect_array(expect, "estrides", m.element_strides, m.rank);
    int64_t enums[4] = {m.interleave, m.swizzle, m.l2_promotion, m.oob_fill};
    expect_array(expect, "enums", enums, 4);
    CHECK(m.inner_stride == 1, "inner stride %" PRId64, m.inner_stride);
    /* Issue loops, as extent:shared stride:dimension triples. */
    int64_t issues[3 * TD_TMAP_MAX_DIMS];
    for (int i = 0; i < m.nissue; i++) {
        issues[3 * i] = m.issue[i].extent;
        issues[3 * i + 1] = m.issue[i].smem_stride;
        issues[3 * i + 2] = m.issue[i].dim;
    }
    if (td__test_value(expect, NULL, "issues", b, sizeof b) != NULL) {
        for (char *c = b; *c; c++)
            if (*c == ':')
                *c = ',';
        int64_t want[3 * TD_TMAP_MAX_DIMS];
        int nw = td__test_ints(b, want, 3 * TD_TMAP_MAX_DIMS);
        int same = nw == 3 * m.nissue;
        for (int i = 0; same && i < nw; i++)
            same = want[i] == issues[i];
        CHECK(same, "issue loops differ (%d planned)", m.nissue);
    } else {
        CHECK(m.nissue == 0, "%d issue loops planned; TVM plans none",
              m.nissue);
    }

    td_buf c, j;
    td__buf_init(&c);
    td__buf_init(&j);
    CHECK(td__tmap_print_c(&m, "encode_map", 1, &c) == 0 &&
              td__tmap_print_json(&m, &j) == 0,
          "a printer failed");
    CHECK(c.data != NULL && strstr(c.data, "cuTensorMapEncodeTiled(") != NULL,
          "the C form calls no cuTensorMapEncodeTiled");
    /* The driver refuses a NULL globalStrides even at rank 1 (found on the
     * H200: design/copy_async/gpu/rank1_probe.cu). */
    CHECK(c.data != NULL && strstr(c.data, "global_dim, NULL") == NULL &&
              strstr(c.data, "global_dim, global_strides,") != NULL,
          "the C form passes no globalStrides array (rank %d)", m.rank);
    td__buf_free(&c);
    td__buf_free(&j);
}

static void reject(const char *line)
{
    const char *err = strstr(line, " error=");
    td_tmap_request r;
    char dtype[32], oob[32];
    td__test_tmap_request(line, err, &r, dtype, oob);
    td_tmap m;
    td_diag d;
    td_diag_clear(&d);
    int rc = td__tmap_plan(&r, &m, &d);
    CHECK(rc == TD_EINVAL, "accepted a case TVM rejects");
    if (rc == 0 || err == NULL)
        return;
    const char *want = err + 7;
    CHECK(strcmp(d.msg, want) == 0, "message:\n  want %s\n  got  %s", want,
          d.msg);
}

/* TVM's _make_spec: a legal float16 map of 16x64 with a 8x4 box. */
static void base_spec(td_tmap *m)
{
    memset(m, 0, sizeof *m);
    strcpy(m->dtype, "float16");
    m->bits = 16;
    m->effective_bytes = 2;
    m->force_cu_dtype = -1;
    m->rank = 2;
    m->global_dims[0] = 16;
    m->global_dims[1] = 64;
    m->global_strides[0] = 32;
    m->nglobal_strides = 1;
    m->inner_stride = 1;
    m->box_dims[0] = 8;
    m->box_dims[1] = 4;
    m->element_strides[0] = m->element_strides[1] = 1;
    m->ncoordinates = 2;
    m->l2_promotion = 2;
    m->direction = TD_TMAP_G2S;
    m->sm = 90;
    m->cta_group = 1;
    m->has_mbar = 1;
}

static void validator(const char *line)
{
    const char *expect = strstr(line, " expect=");
    td_tmap m;
    char b[256];
    base_spec(&m);
    if (td__test_value(line, expect, "dims", b, sizeof b))
        td__test_ints(b, m.global_dims, 2);
    if (td__test_value(line, expect, "gstrides", b, sizeof b))
        td__test_ints(b, m.global_strides, 1);
    if (td__test_value(line, expect, "base", b, sizeof b))
        m.base_byte_offset = strtoll(b, NULL, 10);
    if (td__test_value(line, expect, "box", b, sizeof b))
        td__test_ints(b, m.box_dims, 2);
    if (td__test_value(line, expect, "estrides", b, sizeof b))
        td__test_ints(b, m.element_strides, 2);
    if (td__test_value(line, expect, "inner", b, sizeof b))
        m.inner_stride = strtoll(b, NULL, 10);
    if (td__test_value(line, expect, "interleave", b, sizeof b))
        m.interleave = atoi(b);
    if (td__test_value(line, expect, "swizzle", b, sizeof b))
        m.swizzle = atoi(b);
    if (td__test_value(line, expect, "l2", b, sizeof b))
        m.l2_promotion = atoi(b);
    if (td__test_value(line, expect, "oob", b, sizeof b))
        m.oob_fill = atoi(b);
    if (td__test_value(line, expect, "sm", b, sizeof b))
        m.sm = atoi(b);
    if (td__test_value(line, expect, "cta", b, sizeof b))
        m.cta_group = atoi(b);
    if (td__test_value(line, expect, "ncoords", b, sizeof b))
        m.ncoordinates = atoi(b);
    if (td__test_value(line, expect, "force", b, sizeof b))
        m.force_cu_dtype = atoi(b);
    if (td__test_value(line, expect, "dtype", b, sizeof b))
        td__strlcpy(m.dtype, b, sizeof m.dtype);
    if (td__test_value(line, expect, "bits", b, sizeof b))
        m.bits = atoi(b);
    if (td__test_value(line, expect, "eb", b, sizeof b))
        m.effective_bytes = atoi(b);
    td_tmap_finding f[32];
    int n = td__tmap_validate(&m, f, 32);
    char got[1024];
    td__tmap_join(f, n, got, sizeof got);
    const char *want = expect != NULL ? expect + 8 : "";
    while (*want == ' ')
        want++;
    CHECK(strcmp(got, want) == 0, "findings:\n  want %s\n  got  %s", want, got);
}

/* The printers' exact text for TVM's first golden case (8x256 float16,
 * 128-byte swizzle) and one bad name. */
static void printers_exact(void)
{
    static const char json[] =
        "{\"dtype\": \"float16\", \"cu_dtype\": "
        "\"CU_TENSOR_MAP_DATA_TYPE_FLOAT16\", \"rank\": 3, \"global_dims\": "
        "[64, 8, 4], \"global_strides\": [512, 128], \"box_dims\": [64, 8, 4], "
        "\"element_strides\": [1, 1, 1], \"interleave\": 0, \"swizzle\": 3, "
        "\"l2_promotion\": 2, \"oob_fill\": 0, \"base_byte_offset\": 0, "
        "\"coordinates\": [0, 0, 0]}";
    static const char c[] =
        "/* The float16 tensor map: rank 3, SWIZZLE_128B, box 64x8x4 "
        "(innermost first).\n"
        " * global_base is the buffer's first element; the view's offset is "
        "added here. */\n"
        "static CUresult enc(CUtensorMap *map, void *global_base)\n{\n"
        "    static const cuuint64_t global_dim[3] = {64u, 8u, 4u};\n"
        "    static const cuuint64_t global_strides[2] = {512u, 128u};\n"
        "    static const cuuint32_t box_dim[3] = {64u, 8u, 4u};\n"
        "    static const cuuint32_t element_strides[3] = {1u, 1u, 1u};\n"
        "    char *address = (char *)global_base + 0;\n"
        "    if (((uintptr_t)address % 16) != 0)\n"
        "        return CUDA_ERROR_INVALID_VALUE;\n"
        "    return cuTensorMapEncodeTiled(map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, "
        "3, address,\n"
        "        global_dim, global_strides, box_dim, element_strides,\n"
        "        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,\n"
        "        CU_TENSOR_MAP_L2_PROMOTION_L2_128B, "
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);\n}\n";
    td_tmap_request r;
    char dtype[32], oob[32];
    td__test_tmap_request("golden x dtype=float16 shape=8,256 start=0,0 "
                          "extent=8,256 smem=sw128",
                          NULL, &r, dtype, oob);
    td_tmap m;
    td_diag d;
    td_diag_clear(&d);
    lineno = 0;
    CHECK(td__tmap_plan(&r, &m, &d) == 0, "printers: %s", d.msg);
    td_buf b;
    td__buf_init(&b);
    CHECK(td__tmap_print_json(&m, &b) == 0 && b.data != NULL &&
              strcmp(b.data, json) == 0,
          "json:\n  want %s\n  got  %s", json, b.data ? b.data : "");
    td__buf_free(&b);
    td__buf_init(&b);
    CHECK(td__tmap_print_c(&m, "enc", 0, &b) == 0 && b.data != NULL &&
              strcmp(b.data, c) == 0,
          "c:\n  want %s\n  got  %s", c, b.data ? b.data : "");
    td__buf_free(&b);
    td__buf_init(&b);
    CHECK(td__tmap_print_c(&m, "1bad", 0, &b) == TD_EINVAL,
          "a name that is no C identifier was printed");
    td__buf_free(&b);
}

/* One planned map's coordinates: constant parts and non-constant ones
 * (coord_src, coord_mul, coord_div), innermost first. */
static void expect_coords(const char *what, const td_tmap *m, int rank,
                          const int64_t *coord, const int *src,
                          const int64_t *mul, const int64_t *div)
{
    CHECK(m->rank == rank, "%s: rank %d, want %d", what, m->rank, rank);
    for (int i = 0; i < rank && i < m->rank; i++)
        CHECK(m->coordinates[i] == coord[i] && m->coord_src[i] == src[i] &&
                  m->coord_mul[i] == mul[i] && m->coord_div[i] == div[i],
              "%s: coordinate %d is %" PRId64 " + start%d * %" PRId64
              " / %" PRId64 ", want %" PRId64 " + start%d * %" PRId64
              " / %" PRId64,
              what, i, m->coordinates[i], m->coord_src[i] - 1,
              m->coord_mul[i], m->coord_div[i], coord[i], src[i] - 1, mul[i],
              div[i]);
}

/* Starts over block ids or scalars (start_align > 0): the map is the one
 * the constant start gives, and each coordinate says how the rest enters
 * it; TVM's lowering of the same calls (tests/conformance/tma_g2s_scalar_*)
 * prints k * 128, k * 64 (a merged row) and k * 256 (a promoted
 * descriptor). */
static void dynamic_starts(void)
{
    td_tmap_request r;
    td_tmap m;
    td_diag d;
    char dtype[32], oob[32];
    lineno = 0;

    /* Rows k * 128 of a [1024, 64] tensor: coordinate 1 is start 0. */
    td__test_tmap_request("golden x dtype=float16 shape=1024,64 start=0,0 "
                          "extent=128,64",
                          NULL, &r, dtype, oob);
    r.start_align[0] = 128;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == 0, "rows: %s", d.msg);
    expect_coords("rows", &m, 2, (const int64_t[]){0, 0},
                  (const int[]){0, 1}, (const int64_t[]){0, 1},
                  (const int64_t[]){0, 1});

    /* Row k + 3 of a [16, 64] tensor: the unit row merges into the
     * columns, its start scaled by 64. */
    td__test_tmap_request("golden x dtype=float16 shape=16,64 start=3,0 "
                          "extent=1,64",
                          NULL, &r, dtype, oob);
    r.start_align[0] = 1;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == 0, "merged: %s", d.msg);
    expect_coords("merged", &m, 1, (const int64_t[]){192},
                  (const int[]){1}, (const int64_t[]){64},
                  (const int64_t[]){1});

    /* A dynamic inner start blocks the merge (its coordinate is not
     * provably 0): the columns, merged with the rows when they start at
     * 0, stay their own dimension. */
    td__test_tmap_request("golden x dtype=float16 shape=4,64 start=0,0 "
                          "extent=4,64",
                          NULL, &r, dtype, oob);
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == 0 && m.rank == 1,
          "columns, constant: %s (rank %d)", d.msg, m.rank);
    r.start_align[1] = 64;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == 0, "columns: %s", d.msg);
    expect_coords("columns", &m, 2, (const int64_t[]){0, 0},
                  (const int[]){2, 0}, (const int64_t[]){1, 0},
                  (const int64_t[]){1, 0});

    /* 512 int8 columns at k * 512: promoted to uint16, the coordinate
     * halved; at k * 511 (odd) no promotion, so no legal box. */
    td__test_tmap_request("golden x dtype=int8 shape=4,4096 start=2,0 "
                          "extent=1,512",
                          NULL, &r, dtype, oob);
    r.start_align[1] = 512;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == 0, "promoted: %s", d.msg);
    CHECK(strcmp(m.dtype, "uint16") == 0, "promoted: dtype %s", m.dtype);
    expect_coords("promoted", &m, 2, (const int64_t[]){0, 2},
                  (const int[]){2, 0}, (const int64_t[]){1, 0},
                  (const int64_t[]){2, 0});
    r.start_align[1] = 511;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == TD_EINVAL &&
              strstr(d.msg, "boxDim[0]=512 must be in [1, 256]") != NULL,
          "odd start: %s", d.msg);

    /* The coordinate stage: a 128B-swizzled tile of two atoms splits the
     * columns by 64, so the start must be a multiple of 64: k * 32 cannot
     * be proved one (unknown), 32 + k * 128 is refuted (disproven). */
    td__test_tmap_request("golden x dtype=float16 shape=64,512 start=0,0 "
                          "extent=64,128 smem=sw128",
                          NULL, &r, dtype, oob);
    r.start_align[1] = 32;
    r.start_text[1] = "k * 32";
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == TD_EINVAL &&
              strstr(d.msg, "tma_auto stage=coordinate: group=1 start=k * 32 "
                            "is not divisible by inner_product=64 (unknown)") ==
                  d.msg,
          "unknown: %s", d.msg);
    r.start[1] = 32;
    r.start_align[1] = 128;
    r.start_text[1] = NULL;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == TD_EINVAL &&
              strstr(d.msg, "start=32 is not divisible by inner_product=64 "
                            "(disproven)") != NULL,
          "disproven: %s", d.msg);
    r.start[1] = 0;
    td_diag_clear(&d);
    CHECK(td__tmap_plan(&r, &m, &d) == 0, "atoms: %s", d.msg);
    int blocks = -1;
    for (int i = 0; i < m.rank; i++)
        if (m.coord_src[i] != 0)
            blocks = i;
    CHECK(blocks >= 0 && m.coord_src[blocks] == 2 &&
              m.coord_mul[blocks] == 1 && m.coord_div[blocks] == 64,
          "atoms: the column blocks' coordinate is not start1 / 64");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s cases.txt\n", argv[0]);
        return 2;
    }
    FILE *fp = fopen(argv[1], "r");
    if (fp == NULL) {
        perror(argv[1]);
        return 2;
    }
    char line[2048];
    int counts[4] = {0};
    while (fgets(line, sizeof line, fp) != NULL) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "golden ", 7) == 0) {
            golden(line);
            counts[0]++;
        } else if (strncmp(line, "reject ", 7) == 0) {
            reject(line);
            counts[1]++;
        } else if (strncmp(line, "validator ", 10) == 0) {
            validator(line);
            counts[2]++;
        } else if (strncmp(line, "unsupported ", 12) == 0) {
            counts[3]++;
        } else if (line[0] != '#' && line[0] != '\0') {
            CHECK(0, "unknown line kind");
        }
    }
    fclose(fp);
    printers_exact();
    dynamic_starts();
    printf("%d golden, %d reject, %d validator cases; %d not expressible; "
           "%d failures\n",
           counts[0], counts[1], counts[2], counts[3], failures);
    return failures == 0 ? 0 : 1;
}
