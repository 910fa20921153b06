/*
 * The permute_layout op (upstream tirx.tile.permute_layout): its
 * descriptor and its operand check, which the registry runs before any
 * variant (td_op_desc.check).
 *
 * Upstream's front end only promotes buffers to regions; everything else
 * (dtypes, shapes, layouts) is its one variant's decline.  Here the op
 * refuses what no variant could lower: anything but one region source,
 * extras, axes, accum, and config keys (upstream ignores keyword
 * arguments it does not read, and its variant reads none: docs/upstream.md,
 * D4 of design/gemm/plan.md).
 */
#include "args.h"
#include "permute.h"

static bool permute_check(const td_call *call, const td_op_desc *op,
                          td_pos *where, td_reason *why);

const td_op_desc td__permute_ops[] = {
    {.name = "permute_layout", .kind = TD_OP_KIND_PERMUTE,
     .check = permute_check},
};
const size_t td__permute_ops_count =
    sizeof td__permute_ops / sizeof *td__permute_ops;

static bool permute_check(const td_call *call, const td_op_desc *op,
                          td_pos *where, td_reason *why)
{
    if (!td__one_region_source(call, where, why))
        return false;
    if (!(call->naxes == 1 && call->axes[0] == -1)) {
        td_reason_set(why, "takes no axes (a permute moves every element "
                           "of its region)");
        return false;
    }
    if (call->accum) {
        td_reason_set(why, "takes no accum (a permute overwrites its "
                           "destination)");
        return false;
    }
    return td__known_config(call, op, NULL, 0, where, why);
}
