/*
 * The CUDA printer's prelude: the includes and the helper functions a
 * printed body asked for (td__cuda_needs), each once, in a fixed order:
 * the max / min overloads, the pair <-> word reinterpretations, the warp
 * reductions by combiner and width, the inline-PTX helpers, the packed
 * f32x2 ops and the PTX container accesses (ld / st / ldmatrix /
 * stmatrix, one helper per instruction).  print_cuda.c records the needs
 * while it prints the body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegen_internal.h"

const char *const td__comb_names[3] = {"sum", "max", "min"};

/* The packed f32x2 helper of op / rnd: add.rn is the one the reductions
 * use (TD_INTRIN_PTX_ADD_F32X2). */
void td__f32x2_name(td_buf *o, int op, int rnd)
{
    td__buf_printf(o, "tvm_builtin_ptx_%s_%s_ftz_f32x2", td__f32x2_ops[op],
                   td__f32x2_rnds[rnd]);
}

static void helper(td_buf *o, const char *text)
{
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, text);
}

static const char maxmin_helpers[] =
    "template <typename T>\n"
    "__forceinline__ __device__ T td_max(T a, T b) { return a < b ? b : a; }\n"
    "template <typename T>\n"
    "__forceinline__ __device__ T td_min(T a, T b) { return b < a ? b : a; }\n"
    "__forceinline__ __device__ float td_max(float a, float b) { return "
    "fmaxf(a, b); }\n"
    "__forceinline__ __device__ float td_min(float a, float b) { return "
    "fminf(a, b); }\n"
    "__forceinline__ __device__ double td_max(double a, double b) { return "
    "fmax(a, b); }\n"
    "__forceinline__ __device__ double td_min(double a, double b) { return "
    "fmin(a, b); }\n"
    "__forceinline__ __device__ __half td_max(__half a, __half b) { return "
    "__hmax(a, b); }\n"
    "__forceinline__ __device__ __half td_min(__half a, __half b) { return "
    "__hmin(a, b); }\n"
    "__forceinline__ __device__ __nv_bfloat16 td_max(__nv_bfloat16 a, "
    "__nv_bfloat16 b) { return __hmax(a, b); }\n"
    "__forceinline__ __device__ __nv_bfloat16 td_min(__nv_bfloat16 a, "
    "__nv_bfloat16 b) { return __hmin(a, b); }\n";

static const char *const ptx_helpers[TD_INTRIN_COUNT] = {
    /* One lane of the warp, the leader elect.sync picks (sm_90+). */
    [TD_INTRIN_ELECT_SYNC] =
        "__forceinline__ __device__ int td_elect_sync() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  unsigned int r;\n"
        "  asm volatile(\"{ .reg .pred p; elect.sync _|p, 0xFFFFFFFF; "
        "selp.u32 %0, 1, 0, p; }\" : \"=r\"(r));\n"
        "  return (int)r;\n"
        "#else\n"
        "  __builtin_trap(); /* warp-collective: no host stand-in */\n"
        "  return 0;\n"
        "#endif\n"
        "}\n",
    /* The CTA's id in its cluster: the CPU stand-in's (tests/cuda/emu runs
     * a cluster's CTAs together); another host build runs no cluster,
     * every block is alone in its own (id 0). */
    [TD_INTRIN_CLUSTER_CTAID_X] =
        "__forceinline__ __device__ int td_cluster_ctaid_x() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  unsigned int r;\n"
        "  asm volatile(\"mov.u32 %0, %%cluster_ctaid.x;\" : \"=r\"(r));\n"
        "  return (int)r;\n"
        "#elif defined(TD_EMU)\n"
        "  return td_emu_cluster_ctaid(0);\n"
        "#else\n"
        "  return 0;\n"
        "#endif\n"
        "}\n",
    [TD_INTRIN_CLUSTER_CTAID_Y] =
        "__forceinline__ __device__ int td_cluster_ctaid_y() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  unsigned int r;\n"
        "  asm volatile(\"mov.u32 %0, %%cluster_ctaid.y;\" : \"=r\"(r));\n"
        "  return (int)r;\n"
        "#elif defined(TD_EMU)\n"
        "  return td_emu_cluster_ctaid(1);\n"
        "#else\n"
        "  return 0;\n"
        "#endif\n"
        "}\n",
    [TD_INTRIN_CLUSTER_CTAID_Z] =
        "__forceinline__ __device__ int td_cluster_ctaid_z() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  unsigned int r;\n"
        "  asm volatile(\"mov.u32 %0, %%cluster_ctaid.z;\" : \"=r\"(r));\n"
        "  return (int)r;\n"
        "#elif defined(TD_EMU)\n"
        "  return td_emu_cluster_ctaid(2);\n"
        "#else\n"
        "  return 0;\n"
        "#endif\n"
        "}\n",
    /* The cp.async groups: nothing to wait for on a host, whose cp.async
     * helpers copied at once. */
    [TD_INTRIN_CP_ASYNC_COMMIT] =
        "__forceinline__ __device__ void td_cp_async_commit_group() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"cp.async.commit_group;\" : : : \"memory\");\n"
        "#else\n"
        "#endif\n"
        "}\n",
    [TD_INTRIN_CP_ASYNC_WAIT] =
        "template <int N>\n"
        "__forceinline__ __device__ void td_cp_async_wait_group() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"cp.async.wait_group %0;\" : : \"n\"(N) : "
        "\"memory\");\n"
        "#else\n"
        "#endif\n"
        "}\n",
    [TD_INTRIN_CP_ASYNC_WAIT_ALL] =
        "__forceinline__ __device__ void td_cp_async_wait_all() {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  asm volatile(\"cp.async.wait_all;\" : : : \"memory\");\n"
        "#else\n"
        "#endif\n"
        "}\n",
    [TD_INTRIN_PTX_PACK_F32X2] =
        "__forceinline__ __device__ unsigned long long "
        "tvm_builtin_ptx_mov_b64_pack(float lo, float hi) {\n"
        "  unsigned long long r;\n"
        "  asm(\"mov.b64 %0, {%1, %2};\" : \"=l\"(r) : \"f\"(lo), "
        "\"f\"(hi));\n"
        "  return r;\n"
        "}\n",
    [TD_INTRIN_PTX_UNPACK_LO] =
        "__forceinline__ __device__ float "
        "tvm_builtin_ptx_mov_b64_unpack_lo(unsigned long long p) {\n"
        "  float r[2];\n"
        "  asm(\"mov.b64 {%0, %1}, %2;\" : \"=f\"(r[0]), \"=f\"(r[1]) : "
        "\"l\"(p));\n"
        "  return r[0];\n"
        "}\n",
    [TD_INTRIN_PTX_UNPACK_HI] =
        "__forceinline__ __device__ float "
        "tvm_builtin_ptx_mov_b64_unpack_hi(unsigned long long p) {\n"
        "  float r[2];\n"
        "  asm(\"mov.b64 {%0, %1}, %2;\" : \"=f\"(r[0]), \"=f\"(r[1]) : "
        "\"l\"(p));\n"
        "  return r[1];\n"
        "}\n",
    [TD_INTRIN_PTX_MAX3_F32] =
        "__forceinline__ __device__ float tvm_builtin_ptx_max3_f32(float a, "
        "float b, float c) {\n"
        "  float d;\n"
        "  asm(\"max.f32 %0, %1, %2, %3;\" : \"=f\"(d) : \"f\"(a), "
        "\"f\"(b), \"f\"(c));\n"
        "  return d;\n"
        "}\n",
    [TD_INTRIN_PTX_MIN3_F32] =
        "__forceinline__ __device__ float tvm_builtin_ptx_min3_f32(float a, "
        "float b, float c) {\n"
        "  float d;\n"
        "  asm(\"min.f32 %0, %1, %2, %3;\" : \"=f\"(d) : \"f\"(a), "
        "\"f\"(b), \"f\"(c));\n"
        "  return d;\n"
        "}\n",
    /* A = all ones, B = the lanes' values (lane l holds B[l % 4][l / 4]):
     * D[i][j] sums lanes 4j..4j+3, and lane l holds D[l / 4][2 (l % 4)]
     * and D[l / 4][2 (l % 4) + 1], so d0 + d1 sums lanes 8 (l % 4) ..
     * 8 (l % 4) + 7; two shuffles add the four blocks.  Without
     * __CUDA_ARCH__ (the CPU stand-in of the self-checking programs,
     * tests/cuda/emu) an xor butterfly gives every lane the warp's sum,
     * as the mma does (one lane's bits in every lane); device code is
     * the mma alone. */
    [TD_INTRIN_WARP_SUM_F64MMA] =
        "__forceinline__ __device__ float td_warp_sum_f64mma(float x) {\n"
        "#ifdef __CUDA_ARCH__\n"
        "  double d0, d1;\n"
        "  asm(\"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 "
        "{%0, %1}, {%2}, {%3}, {%4, %5};\"\n"
        "      : \"=d\"(d0), \"=d\"(d1)\n"
        "      : \"d\"(1.0), \"d\"((double)x), \"d\"(0.0), \"d\"(0.0));\n"
        "  float s = (float)(d0 + d1);\n"
        "  s += __shfl_xor_sync(0xffffffffu, s, 1, 32);\n"
        "  s += __shfl_xor_sync(0xffffffffu, s, 2, 32);\n"
        "  return s;\n"
        "#else\n"
        "  float s = x;\n"
        "  for (int m = 16; m >= 1; m >>= 1)\n"
        "    s += __shfl_xor_sync(0xffffffffu, s, m, 32);\n"
        "  return s;\n"
        "#endif\n"
        "}\n",
    /* Integer keys in the order of the floats: negative floats have their
     * magnitude bits flipped. NaN lanes become -inf (max) or +inf (min). */
    [TD_INTRIN_WARP_MAX_REDUX] =
        "__forceinline__ __device__ float td_warp_max_redux(float x) {\n"
        "  int k = __float_as_int(x);\n"
        "  k = x != x ? (int)0x807fffff /* -inf */ : k ^ ((k >> 31) & 0x7fffffff);\n"
        "  k = __reduce_max_sync(0xffffffffu, k);\n"
        "  return __int_as_float(k ^ ((k >> 31) & 0x7fffffff));\n"
        "}\n",
    [TD_INTRIN_WARP_MIN_REDUX] =
        "__forceinline__ __device__ float td_warp_min_redux(float x) {\n"
        "  int k = __float_as_int(x);\n"
        "  k = x != x ? 0x7f800000 /* +inf */ : k ^ ((k >> 31) & 0x7fffffff);\n"
        "  k = __reduce_min_sync(0xffffffffu, k);\n"
        "  return __int_as_float(k ^ ((k >> 31) & 0x7fffffff));\n"
        "}\n",
};

/* The helper of a packed f32x2 op (TD_INTRIN_PTX_ADD_F32X2 is add.rn). */
static void f32x2_helper(td_buf *o, int op, int rnd)
{
    bool fma = op == TD__F32X2_FMA;
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, "__forceinline__ __device__ unsigned long long ");
    td__f32x2_name(o, op, rnd);
    td__buf_printf(o,
                   "(unsigned long long a, unsigned long long b%s) {\n"
                   "  unsigned long long d;\n"
                   "  asm(\"%s.%s.ftz.f32x2 %%0, %%1, %%2%s;\" : \"=l\"(d) : "
                   "\"l\"(a), \"l\"(b)%s);\n"
                   "  return d;\n"
                   "}\n",
                   fma ? ", unsigned long long c" : "", td__f32x2_ops[op],
                   td__f32x2_rnds[rnd], fma ? ", %3" : "",
                   fma ? ", \"l\"(c)" : "");
}

static void warp_helper(td_buf *o, td_combiner comb, int width)
{
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_printf(o,
                   "template <typename T>\n"
                   "__forceinline__ __device__ T "
                   "tvm_builtin_cuda_warp_reduce_%s_%d(T val) {\n"
                   "#pragma unroll\n"
                   "  for (int mask = %d; mask >= 1; mask >>= 1) {\n"
                   "    T shuffled = __shfl_xor_sync(0xFFFFFFFFu, val, "
                   "mask);\n",
                   td__comb_names[comb], width, width / 2);
    if (comb == TD_COMBINE_SUM)
        td__buf_puts(o, "    val = (T)(val + shuffled);\n");
    else
        td__buf_printf(o, "    val = td_%s(val, shuffled);\n",
                       td__comb_names[comb]);
    td__buf_puts(o, "  }\n  return val;\n}\n");
}

/* ldmatrix / stmatrix: the words and the lane's shared row address; no
 * host half (one thread cannot stand in for the warp's exchange). */
static void matrix_helper(td_buf *o, const td__ptx *x)
{
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, "__forceinline__ __device__ void ");
    td__ptx_helper_name(o, x);
    td__buf_puts(o, "(");
    if (x->store)
        td__buf_puts(o, "void *addr");
    for (int l = 0; l < x->lanes; l++)
        td__buf_printf(o, "%sunsigned int %s%d", l > 0 || x->store ? ", " : "",
                       x->store ? "s" : "&d", l);
    if (!x->store)
        td__buf_puts(o, ", const void *addr");
    td__buf_puts(o, ") {\n#ifdef __CUDA_ARCH__\n"
                    "  unsigned int a = (unsigned int)"
                    "__cvta_generic_to_shared(addr);\n  asm volatile(\"");
    td__ptx_chain(o, x);
    int first = x->store ? 1 : 0;
    td__buf_puts(o, x->store ? " [%0], {" : " {");
    for (int l = 0; l < x->lanes; l++)
        td__buf_printf(o, "%s%%%d", l ? ", " : "", first + l);
    if (x->store)
        td__buf_puts(o, "};\"\n      : : \"r\"(a)");
    else
        td__buf_printf(o, "}, [%%%d];\"\n      : ", x->lanes);
    for (int l = 0; l < x->lanes; l++) {
        if (x->store)
            td__buf_printf(o, ", \"r\"(s%d)", l);
        else
            td__buf_printf(o, "%s\"=r\"(d%d)", l ? ", " : "", l);
    }
    if (!x->store)
        td__buf_puts(o, " : \"r\"(a)");
    td__buf_puts(o, " : \"memory\");\n#else\n"
                    "  (void)addr;\n  __builtin_trap(); /* warp-collective: no "
                    "host stand-in */\n#endif\n}\n");
}

/* cp.async: the shared address through cvta, the global pointer
 * generic (as TVM passes it); a guard as a predicate register set from
 * the int, or the src-size operand (0: the bytes are zero-filled).  The
 * host half copies (or zero-fills) at once: a host build has nothing to
 * wait for. */
static void cp_async_helper(td_buf *o, const td__ptx *x)
{
    int bytes = x->bits * x->lanes / 8;
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, "__forceinline__ __device__ void ");
    td__ptx_helper_name(o, x);
    td__buf_puts(o, "(void *dst, const void *src");
    if (x->pred != NULL)
        td__buf_puts(o, ", int pred");
    td__buf_puts(o, ") {\n#ifdef __CUDA_ARCH__\n"
                    "  unsigned int a = (unsigned int)"
                    "__cvta_generic_to_shared(dst);\n  asm volatile(\"");
    if (x->pred != NULL && !x->zfill) {
        td__buf_puts(o, "{\\n  .reg .pred p;\\n  setp.ne.b32 p, %2, 0;"
                        "\\n  @p ");
        td__ptx_chain(o, x);
        td__buf_printf(o, " [%%0], [%%1], %d;\\n}\"\n"
                          "      : : \"r\"(a), \"l\"(src), \"r\"(pred)",
                       bytes);
    } else if (x->zfill) {
        td__ptx_chain(o, x);
        td__buf_printf(o, " [%%0], [%%1], %d, %%2;\"\n      : : \"r\"(a), "
                          "\"l\"(src), \"r\"(pred != 0 ? %dU : 0U)",
                       bytes, bytes);
    } else {
        td__ptx_chain(o, x);
        td__buf_printf(o, " [%%0], [%%1], %d;\"\n      : : \"r\"(a), "
                          "\"l\"(src)",
                       bytes);
    }
    td__buf_puts(o, " : \"memory\");\n#else\n");
    if (x->zfill)
        td__buf_printf(o, "  if (pred != 0)\n    memcpy(dst, src, %d);\n"
                          "  else\n    memset(dst, 0, %d);\n",
                       bytes, bytes);
    else if (x->pred != NULL)
        td__buf_printf(o, "  if (pred != 0)\n    memcpy(dst, src, %d);\n",
                       bytes);
    else
        td__buf_printf(o, "  memcpy(dst, src, %d);\n", bytes);
    td__buf_puts(o, "#endif\n}\n");
}

/* The helper of one PTX access (td__ptx_key): the instruction under
 * __CUDA_ARCH__, with TVM's operand constraints ("r" for 32-bit
 * containers and shared addresses, "l" for global pointers, "h" for 16-
 * and 8-bit containers, an 8-bit one through a 16-bit register), and the
 * same bytes moved by memcpy in a host build. */
void td__ptx_helper(td_buf *o, unsigned key)
{
    static const char *const ctype[3] = {"unsigned char", "unsigned short",
                                         "unsigned int"};
    td__ptx x;
    td__ptx_unkey(key, &x);
    if (x.cp_async) {
        cp_async_helper(o, &x);
        return;
    }
    if (x.matrix) {
        matrix_helper(o, &x);
        return;
    }
    int k = x.bits == 8 ? 0 : x.bits == 16 ? 1 : 2;
    const char *con = x.bits == 32 ? "r" : "h";
    int bytes = x.bits / 8;
    if (o->len > 0)
        td__buf_puts(o, "\n");
    td__buf_puts(o, "__forceinline__ __device__ void ");
    td__ptx_helper_name(o, &x);
    td__buf_puts(o, "(");
    if (x.store)
        td__buf_puts(o, "void *addr");
    for (int l = 0; l < x.lanes; l++)
        td__buf_printf(o, "%s%s %s%d", l > 0 || x.store ? ", " : "",
                       ctype[k], x.store ? "s" : "&d", l);
    if (!x.store)
        td__buf_puts(o, ", const void *addr");
    td__buf_puts(o, ") {\n#ifdef __CUDA_ARCH__\n");
    if (x.shared)
        td__buf_puts(o, "  unsigned int a = (unsigned int)"
                        "__cvta_generic_to_shared(addr);\n");
    if (!x.store && x.bits == 8)
        td__buf_puts(o, "  unsigned short t0;\n");
    td__buf_puts(o, "  asm volatile(\"");
    td__ptx_chain(o, &x);
    /* operands: the loads' registers first, then the address */
    int at = x.store ? 0 : x.lanes;
    char regs[128];
    size_t rn = 0;
    int first = x.store ? 1 : 0;
    if (x.lanes > 1)
        rn += (size_t)snprintf(regs + rn, sizeof regs - rn, "{");
    for (int l = 0; l < x.lanes; l++)
        rn += (size_t)snprintf(regs + rn, sizeof regs - rn, "%s%%%d",
                               l ? ", " : "", first + l);
    if (x.lanes > 1)
        snprintf(regs + rn, sizeof regs - rn, "}");
    if (x.store)
        td__buf_printf(o, " [%%0], %s;\"\n      :", regs);
    else
        td__buf_printf(o, " %s, [%%%d];\"\n      : ", regs, at);
    if (!x.store)
        for (int l = 0; l < x.lanes; l++) {
            if (x.bits == 8)
                td__buf_puts(o, "\"=h\"(t0)");
            else
                td__buf_printf(o, "%s\"=%s\"(d%d)", l ? ", " : "", con, l);
        }
    td__buf_printf(o, " : \"%s\"(%s)", x.shared ? "r" : "l",
                   x.shared ? "a" : "addr");
    if (x.store)
        for (int l = 0; l < x.lanes; l++) {
            if (x.bits == 8)
                td__buf_printf(o, ", \"h\"((unsigned short)s%d)", l);
            else
                td__buf_printf(o, ", \"%s\"(s%d)", con, l);
        }
    td__buf_puts(o, " : \"memory\");\n");
    if (!x.store && x.bits == 8)
        td__buf_puts(o, "  d0 = (unsigned char)t0;\n");
    td__buf_puts(o, "#else\n");
    for (int l = 0; l < x.lanes; l++) {
        if (x.store)
            td__buf_printf(o, "  memcpy((char *)addr + %d, &s%d, %d);\n",
                           l * bytes, l, bytes);
        else
            td__buf_printf(o,
                           "  memcpy(&d%d, (const char *)addr + %d, %d);\n",
                           l, l * bytes, bytes);
    }
    td__buf_puts(o, "#endif\n}\n");
}

int td__cuda_type_include(td_dtype t)
{
    switch (t) {
    case TD_F16: return TD__INC_FP16;
    case TD_BF16: return TD__INC_BF16;
    case TD_F8E4M3:
    case TD_F8E5M2:
    case TD_F8E8M0: return TD__INC_FP8;
    case TD_F4E2M1: return TD__INC_FP4;
    case TD_I8:
    case TD_I16:
    case TD_U8:
    case TD_U16: return TD__INC_CSTDINT;
    default: return -1;
    }
}

const char *td__cuda_type(td_dtype t)
{
    switch (t) {
    case TD_F32: return "float";
    case TD_F16: return "__half";
    case TD_BF16: return "__nv_bfloat16";
    case TD_F64: return "double";
    case TD_I8: return "int8_t";
    case TD_I16: return "int16_t";
    case TD_I32: return "int";
    case TD_I64: return "long long";
    case TD_U8: return "uint8_t";
    case TD_U16: return "uint16_t";
    case TD_U32: return "unsigned int";
    case TD_U64: return "unsigned long long";
    case TD_F8E4M3: return "__nv_fp8_e4m3";
    case TD_F8E5M2: return "__nv_fp8_e5m2";
    case TD_F8E8M0: return "__nv_fp8_e8m0";
    case TD_F4E2M1: return "__nv_fp4_e2m1";
    case TD_DTYPE_COUNT: break;
    }
    return "void";
}

static int cmp_key(const void *a, const void *b)
{
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

void td__cuda_prelude(td_buf *o, const td__cuda_needs *c)
{
    static const char *const includes[TD__INC_COUNT] = {
        "#include <cfloat>\n", "#include <cstdint>\n",
        "#include <cuda_fp16.h>\n", "#include <cuda_bf16.h>\n",
        "#include <cuda_fp8.h>\n", "#include <cuda_fp4.h>\n",
        "#include <cstring>\n",
        "#include <cuda.h>\n"};
    /* the overloads of td_max / td_min name __half and __nv_bfloat16 */
    for (int i = 0; i < TD__INC_COUNT; i++)
        if (c->inc[i] || (c->maxmin && (i == TD__INC_FP16 || i == TD__INC_BF16)))
            td__buf_puts(o, includes[i]);
    if (c->maxmin)
        helper(o, maxmin_helpers);
    static const char *const bits2[2] = {
        "__forceinline__ __device__ __half2 td_bits_half2(unsigned int u) "
        "{ return *(const __half2 *)&u; }\n"
        "__forceinline__ __device__ unsigned int td_half2_bits(__half2 v) "
        "{ return *(const unsigned int *)&v; }\n",
        "__forceinline__ __device__ __nv_bfloat162 td_bits_bfloat162("
        "unsigned int u) { return *(const __nv_bfloat162 *)&u; }\n"
        "__forceinline__ __device__ unsigned int td_bfloat162_bits("
        "__nv_bfloat162 v) { return *(const unsigned int *)&v; }\n"};
    for (int k = 0; k < 2; k++)
        if (c->bits2[k])
            helper(o, bits2[k]);
    for (int comb = 0; comb < 3; comb++)
        for (int lg = 1; lg <= 5; lg++)
            if (c->warp[comb] & (1u << lg))
                warp_helper(o, (td_combiner)comb, 1 << lg);
    for (int k = 0; k < TD_INTRIN_COUNT; k++) {
        if (k == TD_INTRIN_PTX_ADD_F32X2) {
            /* Every packed f32x2 helper, in (op, rounding) order. */
            for (int op = 0; op < TD__F32X2_NOPS; op++)
                for (int rnd = 0; rnd < TD__F32X2_NRNDS; rnd++)
                    if (c->f32x2[op] & (1u << rnd))
                        f32x2_helper(o, op, rnd);
        } else if (c->intrin[k] && ptx_helpers[k] != NULL) {
            helper(o, ptx_helpers[k]);
        }
    }
    unsigned keys[sizeof c->ptx / sizeof *c->ptx];
    int n = c->nptx;
    memcpy(keys, c->ptx, sizeof *keys * (size_t)n);
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    for (int i = 0; i < n; i++)
        td__ptx_helper(o, keys[i]);
    td__cuda_async_prelude(o, c);
    td__cuda_mma_prelude(o, c);
    td__cuda_umma_prelude(o, c);
}

