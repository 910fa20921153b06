/*
 * The two printed forms of a TMA tensor map (model/tensor_map.h): C that a
 * host program compiles to fill a CUtensorMap through
 * cuTensorMapEncodeTiled, and JSON with a fixed key order for tools.  Both
 * append to a td_buf; the buffer's sticky error says whether it all fit.
 */
#ifndef TD_CODEGEN_TENSOR_MAP_PRINT_H
#define TD_CODEGEN_TENSOR_MAP_PRINT_H

#include "td_internal.h"
#include "tensor_map.h"

/*
 * Appends a static function
 *     CUresult NAME(CUtensorMap *map, void *global_base)
 * that encodes m for a global buffer starting at global_base (the view's
 * byte offset is added inside) and returns the driver's result, or
 * CUDA_ERROR_INVALID_VALUE when the view's address is not 16-byte aligned
 * (32 for 32-byte interleave or packed fp4).  The text needs <cuda.h> and
 * <stdint.h>; with_includes adds them.  Returns TD_EINVAL for a name that
 * is not a C identifier, else the buffer's error.
 */
int td__tmap_print_c(const td_tmap *m, const char *name, int with_includes,
                     td_buf *b);

/*
 * Appends m as one JSON object, keys in this order: dtype, cu_dtype, rank,
 * global_dims, global_strides, box_dims, element_strides, interleave,
 * swizzle, l2_promotion, oob_fill, base_byte_offset, coordinates.  The
 * enums are the driver's numbers.
 */
int td__tmap_print_json(const td_tmap *m, td_buf *b);

/* Map i of the IR (td_ir_tensor_map_name's order) as the planner made it,
 * or NULL out of range: what a host program encodes with td__tmap_print_c
 * (the program generator in tools/ reaches it here). */
struct td_ir;
const td_tmap *td__ir_tensor_map_spec(const struct td_ir *ir, int i);

#endif
