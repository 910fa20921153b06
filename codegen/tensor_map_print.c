/*
 * Printers of a TMA tensor map: the C function a host program calls to
 * encode it with cuTensorMapEncodeTiled, and its JSON form (see
 * tensor_map_print.h).  The values come from the planner in
 * model/tensor_map.c unchanged; the printers only spell them.
 */
#include <inttypes.h>
#include <string.h>

#include "model.h"
#include "tensor_map_print.h"

static const char *const interleave_names[] = {
    "CU_TENSOR_MAP_INTERLEAVE_NONE", "CU_TENSOR_MAP_INTERLEAVE_16B",
    "CU_TENSOR_MAP_INTERLEAVE_32B"};
static const char *const swizzle_names[] = {
    "CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_32B",
    "CU_TENSOR_MAP_SWIZZLE_64B", "CU_TENSOR_MAP_SWIZZLE_128B"};
static const char *const l2_names[] = {
    "CU_TENSOR_MAP_L2_PROMOTION_NONE", "CU_TENSOR_MAP_L2_PROMOTION_L2_64B",
    "CU_TENSOR_MAP_L2_PROMOTION_L2_128B", "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"};
static const char *const oob_names[] = {
    "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
    "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"};

/* The printers print only maps the validator accepts, so every enum
 * indexes its table; anything else is the caller's mistake. */
static int printable(const td_tmap *m)
{
    const char *cu = NULL;
    td__tmap_cu_dtype(m, &cu);
    return cu != NULL && m->rank >= 1 && m->rank <= TD_TMAP_MAX_RANK &&
           m->interleave >= 0 && m->interleave <= 2 && m->swizzle >= 0 &&
           m->swizzle <= 3 && m->l2_promotion >= 0 && m->l2_promotion <= 3 &&
           m->oob_fill >= 0 && m->oob_fill <= 1;
}

static void c_array(td_buf *b, const char *type, const char *name,
                    const int64_t *v, int n, const char *suffix)
{
    td__buf_printf(b, "    static const %s %s[%d] = {", type, name, n);
    for (int i = 0; i < n; i++)
        td__buf_printf(b, "%s%" PRId64 "%s", i ? ", " : "", v[i], suffix);
    td__buf_puts(b, "};\n");
}

int td__tmap_print_c(const td_tmap *m, const char *name, int with_includes,
                     td_buf *b)
{
    if (name == NULL || !td__is_ident(name, false) || !printable(m))
        return TD_EINVAL;
    const char *cu = NULL;
    td__tmap_cu_dtype(m, &cu);
    int align = (m->interleave == 2 || m->packed) ? 32 : 16;
    if (with_includes)
        td__buf_puts(b, "#include <cuda.h>\n#include <stdint.h>\n\n");
    td__buf_printf(b,
                   "/* The %s tensor map: rank %d, %s, box", m->dtype,
                   m->rank, swizzle_names[m->swizzle] + 14);
    for (int i = 0; i < m->rank; i++)
        td__buf_printf(b, "%s%" PRId64, i ? "x" : " ", m->box_dims[i]);
    td__buf_puts(b, " (innermost first).\n * global_base is the buffer's "
                    "first element; the view's offset is added here. */\n");
    td__buf_printf(b, "static CUresult %s(CUtensorMap *map, void *global_base)\n{\n",
                   name);
    c_array(b, "cuuint64_t", "global_dim", m->global_dims, m->rank, "u");
    if (m->rank > 1) {
        c_array(b, "cuuint64_t", "global_strides", m->global_strides,
                m->rank - 1, "u");
    } else {
        /* A rank-1 map has no strides, but the driver refuses a NULL
         * globalStrides (CUDA_ERROR_INVALID_VALUE on the H200, driver 580:
         * design/copy_async/gpu/rank1_probe.cu); it reads none of this one. */
        const int64_t none[1] = {0};
        c_array(b, "cuuint64_t", "global_strides", none, 1, "u");
    }
    c_array(b, "cuuint32_t", "box_dim", m->box_dims, m->rank, "u");
    c_array(b, "cuuint32_t", "element_strides", m->element_strides, m->rank,
            "u");
    td__buf_printf(b,
                   "    char *address = (char *)global_base + %" PRId64 ";\n"
                   "    if (((uintptr_t)address %% %d) != 0)\n"
                   "        return CUDA_ERROR_INVALID_VALUE;\n",
                   m->base_byte_offset, align);
    td__buf_printf(b,
                   "    return cuTensorMapEncodeTiled(map, %s, %d, address,\n"
                   "        global_dim, %s, box_dim, element_strides,\n"
                   "        %s, %s,\n        %s, %s);\n}\n",
                   cu, m->rank, "global_strides",
                   interleave_names[m->interleave], swizzle_names[m->swizzle],
                   l2_names[m->l2_promotion], oob_names[m->oob_fill]);
    return b->err;
}

static void json_array(td_buf *b, const char *key, const int64_t *v, int n)
{
    td__buf_printf(b, ", \"%s\": [", key);
    for (int i = 0; i < n; i++)
        td__buf_printf(b, "%s%" PRId64, i ? ", " : "", v[i]);
    td__buf_puts(b, "]");
}

int td__tmap_print_json(const td_tmap *m, td_buf *b)
{
    if (!printable(m))
        return TD_EINVAL;
    const char *cu = NULL;
    td__tmap_cu_dtype(m, &cu);
    td__buf_puts(b, "{\"dtype\": ");
    td__buf_json_str(b, m->dtype);
    td__buf_puts(b, ", \"cu_dtype\": ");
    td__buf_json_str(b, cu);
    td__buf_printf(b, ", \"rank\": %d", m->rank);
    json_array(b, "global_dims", m->global_dims, m->rank);
    json_array(b, "global_strides", m->global_strides, m->rank - 1);
    json_array(b, "box_dims", m->box_dims, m->rank);
    json_array(b, "element_strides", m->element_strides, m->rank);
    td__buf_printf(b,
                   ", \"interleave\": %d, \"swizzle\": %d, \"l2_promotion\": %d"
                   ", \"oob_fill\": %d, \"base_byte_offset\": %" PRId64,
                   m->interleave, m->swizzle, m->l2_promotion, m->oob_fill,
                   m->base_byte_offset);
    json_array(b, "coordinates", m->coordinates, m->ncoordinates);
    td__buf_puts(b, "}");
    return b->err;
}
