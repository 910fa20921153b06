/*
 * The elementwise ops, one row each, in upstream's ALL_OPS order: the one
 * place that says what an op is.  X(name, ...) receives the op's name and
 * the designated initialisers of its ew_info (ewise.h has the columns).
 * variants/ewise_ops.c expands the rows into the op descriptors the
 * registry registers (registry/builtin.c) and the variants read
 * (td__ewise_info); the program generator (tools/kernel/kernel_ewise.c)
 * reads the same rows through td__ewise_info, so a new op is one row here
 * plus, when it computes something new, its case in td__ewise_compute.
 */
#ifndef TILEDISPATCH_EWISE_TABLE_H
#define TILEDISPATCH_EWISE_TABLE_H

#include "ewise.h"

/* The error that rounding the arguments carries into a sum or a
 * maximum, and into a product or a quotient. */
#define EW_DT_SUM "dt = u * (fabs(a) * wa + fabs(b) * wb);"
#define EW_DT_PROD "dt = u * fabs(r) * (wa + wb);"

#define TD_EWISE_OPS(X)                                                      \
    X(zero, .fn = EW_ZERO, .kind = EW_KIND_UNARY, .src_optional = true,     \
      .ref = EW_REF_ZERO, .f = "r = 0.0;")                                  \
    X(fill, .fn = EW_FILL, .kind = EW_KIND_UNARY, .src_scalar_ok = true,    \
      .reads_src = true, .ref = EW_REF_COPY, .f = "r = t;")                 \
    X(reciprocal, .fn = EW_RECIPROCAL, .kind = EW_KIND_UNARY,               \
      .src_optional = true, .float_only = true, .reads_src = true,          \
      .ref = EW_REF_MATH, .f = "r = 1.0 / t; d = 1.0 / (t * t);",           \
      .x = EW_ROLE_POS, .ulps32 = 1, .ulps16 = 1)                           \
    X(sqrt, .fn = EW_SQRT, .kind = EW_KIND_UNARY, .src_optional = true,     \
      .extras = true, .float_only = true, .reads_src = true,                \
      .ref = EW_REF_MATH,                                                   \
      .f = "r = sqrt(t); d = t > 0.0 ? 0.5 / sqrt(t) : 0.0;",               \
      .x = EW_ROLE_SQRT, .ulps32 = 1, .ulps16 = 1)                          \
    X(exp, .fn = EW_EXP, .kind = EW_KIND_UNARY, .src_optional = true,       \
      .extras = true, .float_only = true, .reads_src = true,                \
      .ref = EW_REF_MATH, .f = "r = exp(t); d = r;", .x = EW_ROLE_EXP,      \
      .ulps32 = 2, .ulps16 = 2, .ulps_grow = true)                          \
    X(exp2, .fn = EW_EXP2, .kind = EW_KIND_UNARY, .src_optional = true,     \
      .extras = true, .float_only = true, .reads_src = true,                \
      .ref = EW_REF_MATH, .f = "r = exp2(t); d = 0.6931471805599453 * r;",  \
      .x = EW_ROLE_EXP2, .ulps32 = 4, .ulps16 = 2)                          \
    X(log2, .fn = EW_LOG2, .kind = EW_KIND_UNARY, .src_optional = true,     \
      .extras = true, .float_only = true, .reads_src = true,                \
      .ref = EW_REF_MATH,                                                   \
      .f = "r = log2(t); d = 1.0 / (fabs(t) * 0.6931471805599453);",        \
      .x = EW_ROLE_POS, .ulps32 = 2, .ulps16 = 2, .tiny32 = 0x1p-22)        \
    X(silu, .fn = EW_SILU, .kind = EW_KIND_UNARY, .float_only = true,       \
      .reads_src = true, .ref = EW_REF_MATH,                                \
      .f = "{ const double sg = 1.0 / (1.0 + exp(-t)); r = t * sg;"         \
           " d = fabs(sg * (1.0 + t * (1.0 - sg))); }",                     \
      .x = EW_ROLE_SILU, .ulps32 = 4, .ulps16 = 6, .ulps_grow = true)       \
    X(add, .fn = EW_ADD, .kind = EW_KIND_BINARY, .commutative = true,       \
      .reads_src = true, .pack = EW_PACK_F32X2, .ptx = "add",               \
      .ref = EW_REF_BINARY, .f = "r = a + b;", .dt = EW_DT_SUM,             \
      .ulps16 = 1)                                                          \
    X(sub, .fn = EW_SUB, .kind = EW_KIND_BINARY, .reads_src = true,         \
      .pack = EW_PACK_F32X2, .ptx = "sub", .ref = EW_REF_BINARY,            \
      .f = "r = a - b;", .dt = EW_DT_SUM, .ulps16 = 1)                      \
    X(mul, .fn = EW_MUL, .kind = EW_KIND_BINARY, .commutative = true,       \
      .reads_src = true, .pack = EW_PACK_F32X2, .ptx = "mul",               \
      .ref = EW_REF_BINARY, .f = "r = a * b;", .dt = EW_DT_PROD,            \
      .ulps16 = 1, .int_product = true)                                     \
    X(fdiv, .fn = EW_FDIV, .kind = EW_KIND_BINARY, .float_only = true,      \
      .reads_src = true, .ref = EW_REF_BINARY, .f = "r = a / b;",           \
      .dt = EW_DT_PROD, .y = EW_ROLE_DIVISOR, .ulps32 = 2, .ulps16 = 1)     \
    X(maximum, .fn = EW_MAXIMUM, .kind = EW_KIND_BINARY,                    \
      .commutative = true, .reads_src = true, .ref = EW_REF_BINARY,         \
      .f = "r = a != a ? b : b != b ? a : (a > b ? a : b);",                \
      .dt = EW_DT_SUM)                                                      \
    X(cast, .fn = EW_CAST, .kind = EW_KIND_CAST, .reads_src = true,         \
      .pack = EW_PACK_CAST2, .ref = EW_REF_COPY, .f = "r = t;")             \
    X(fma, .fn = EW_FMA, .kind = EW_KIND_FMA, .reads_src = true,            \
      .pack = EW_PACK_F32X2, .ptx = "fma", .ref = EW_REF_FMA,               \
      .f = "r = a * b + c;",                                                \
      .dt = "dt = u * (fabs(a * b) * (1.0 + td_ew_opnds[0].wider + "        \
            "td_ew_opnds[1].wider) + fabs(c) * td_ew_opnds[2].wider);",     \
      .x = EW_ROLE_FMA, .y = EW_ROLE_FMA, .ulps32 = 1, .ulps16 = 1,         \
      .int_product = true)

#endif
