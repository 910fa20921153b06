/*
 * The reduction ops' descriptors, made from the rows of reduce_ops.h, and
 * the lookup of a row by combiner.  Public headers only.
 */
#include "reduce_ops.h"

#define RED_INFO(nm, comb, r, gr)                                            \
    static const red_info red_info_##nm = {#nm, comb, r, gr};
TD_REDUCE_OPS(RED_INFO)
#undef RED_INFO

#define RED_DESC(nm, comb, r, gr)                                            \
    {.name = #nm, .kind = TD_OP_KIND_REDUCTION, .combiner = comb,            \
     .data = &red_info_##nm},
const td_op_desc td__reduce_ops[] = {TD_REDUCE_OPS(RED_DESC)};
#undef RED_DESC
const size_t td__reduce_ops_count = sizeof td__reduce_ops / sizeof *td__reduce_ops;

const red_info *td__reduce_info(td_combiner c)
{
    for (size_t i = 0; i < td__reduce_ops_count; i++) {
        const red_info *r = td__reduce_ops[i].data;
        if (r->combiner == c)
            return r;
    }
    return NULL;
}
