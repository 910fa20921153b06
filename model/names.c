/*
 * The name tables of the call model: dtypes, execution scopes, launch axes
 * and launch tags (the spellings call files and printers use), the hints
 * that follow a name not in them (the closest name, other tools' spellings
 * such as fp32 or blockDim.x, or the list), the names the generated code
 * reserves, and what counts as an identifier and as a variant name in a
 * call file.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model.h"
#include "td_yaml.h"
#include "tiledispatch/td_call.h"

/* ---- name tables -------------------------------------------------------- */

static const struct {
    const char *name;
    int bits;
} g_dtypes[] = {
#define TD__DT_ROW(id, name, bits) {name, bits},
    TD_DTYPE_MAP(TD__DT_ROW)
#undef TD__DT_ROW
};

const char *td_dtype_name(td_dtype t)
{
    return (unsigned)t < TD_DTYPE_COUNT ? g_dtypes[t].name : "?";
}

int td_dtype_parse(const char *s, td_dtype *out)
{
    for (int i = 0; i < TD_DTYPE_COUNT; i++)
        if (strcmp(s, g_dtypes[i].name) == 0) {
            *out = (td_dtype)i;
            return 0;
        }
    return TD_ENOENT;
}

int td_dtype_bits(td_dtype t)
{
    return (unsigned)t < TD_DTYPE_COUNT ? g_dtypes[t].bits : 0;
}

bool td_dtype_is_float(td_dtype t)
{
    return t == TD_F32 || t == TD_F16 || t == TD_BF16 || t == TD_F64 ||
           td_dtype_is_float8(t) || td_dtype_is_confined(t);
}

bool td_dtype_is_float8(td_dtype t)
{
    return t == TD_F8E4M3 || t == TD_F8E5M2;
}

bool td_dtype_is_confined(td_dtype t)
{
    return t == TD_F8E8M0 || t == TD_F4E2M1;
}

bool td_dtype_is_signed(td_dtype t)
{
    return (td_dtype_is_float(t) && t != TD_F8E8M0) || t == TD_I8 || t == TD_I16 || t == TD_I32 ||
           t == TD_I64;
}

static const char *const g_scopes[TD_SCOPE_COUNT] = {
    "thread", "warp", "warpgroup", "cta", "cluster"};

const char *td_exec_scope_name(td_exec_scope s)
{
    return (unsigned)s < TD_SCOPE_COUNT ? g_scopes[s] : "?";
}

int td_exec_scope_parse(const char *s, td_exec_scope *out)
{
    for (int i = 0; i < TD_SCOPE_COUNT; i++)
        if (strcmp(s, g_scopes[i]) == 0) {
            *out = (td_exec_scope)i;
            return 0;
        }
    return TD_ENOENT;
}

static const struct {
    const char *name;
    bool thread;
} g_axes[] = {
#define TD__AX_ROW(id, name, thr) {name, thr},
    TD_AXIS_MAP(TD__AX_ROW)
#undef TD__AX_ROW
};

const char *td_axis_name(td_axis a)
{
    return (unsigned)a < TD_AXIS_COUNT ? g_axes[a].name : "?";
}

int td_axis_parse(const char *s, td_axis *out)
{
    for (int i = 0; i < TD_AXIS_COUNT; i++)
        if (strcmp(s, g_axes[i].name) == 0) {
            *out = (td_axis)i;
            return 0;
        }
    return TD_ENOENT;
}

bool td_axis_is_thread(td_axis a)
{
    return (unsigned)a < TD_AXIS_COUNT && g_axes[a].thread;
}

static const char *const g_launch[TD_LAUNCH_COUNT] = {
    "threadIdx.x", "threadIdx.y", "threadIdx.z",
    "blockIdx.x",  "blockIdx.y",  "blockIdx.z"};

const char *td_launch_tag_name(td_launch_tag t)
{
    return (unsigned)t < TD_LAUNCH_COUNT ? g_launch[t] : "?";
}

/* ---- hints for unknown names ------------------------------------------ */

/* Another tool's spelling and ours, compared without regard to case. */
typedef struct {
    const char *alias, *name;
} name_alias;

static const name_alias g_dtype_aliases[] = {
    {"fp32", "float32"},   {"f32", "float32"},     {"float", "float32"},
    {"single", "float32"}, {"fp16", "float16"},    {"f16", "float16"},
    {"half", "float16"},   {"bf16", "bfloat16"},   {"bfloat", "bfloat16"},
    {"fp8", "float8_e4m3fn"}, {"float8", "float8_e4m3fn"},
    {"e4m3", "float8_e4m3fn"}, {"fp8_e4m3", "float8_e4m3fn"},
    {"float8_e4m3", "float8_e4m3fn"}, {"e5m2", "float8_e5m2"},
    {"fp8_e5m2", "float8_e5m2"}, {"e8m0", "float8_e8m0fnu"},
    {"float8_e8m0", "float8_e8m0fnu"}, {"fp8_e8m0", "float8_e8m0fnu"},
    {"ue8m0", "float8_e8m0fnu"}, {"fp4", "float4_e2m1fn"},
    {"float4", "float4_e2m1fn"}, {"e2m1", "float4_e2m1fn"},
    {"fp4_e2m1", "float4_e2m1fn"}, {"float4_e2m1", "float4_e2m1fn"},
    {"fp64", "float64"},   {"f64", "float64"},     {"double", "float64"},
    {"i8", "int8"},        {"s8", "int8"},         {"char", "int8"},
    {"i16", "int16"},      {"s16", "int16"},       {"short", "int16"},
    {"i32", "int32"},      {"s32", "int32"},       {"int", "int32"},
    {"i64", "int64"},      {"s64", "int64"},       {"long", "int64"},
    {"u8", "uint8"},       {"byte", "uint8"},      {"u16", "uint16"},
    {"u32", "uint32"},     {"uint", "uint32"},     {"u64", "uint64"},
};

/* Layout axes by the words they abbreviate (lane is too short for two
 * edits to reach laneid). */
static const name_alias g_axis_aliases[] = {
    {"lane", "laneid"}, {"warp", "warpid"},     {"tid", "tx"},
    {"thread", "tx"},   {"warpgroup", "wgid"},
};

/* CUDA's blockDim and gridDim give the extents that launch tags name. */
static const name_alias g_launch_aliases[] = {
    {"blockDim.x", "threadIdx.x"}, {"blockDim.y", "threadIdx.y"},
    {"blockDim.z", "threadIdx.z"}, {"gridDim.x", "blockIdx.x"},
    {"gridDim.y", "blockIdx.y"},   {"gridDim.z", "blockIdx.z"},
};

static bool same_nocase(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b))
            return false;
    return *a == *b;
}

/* The alias's hint when s is one (in any case), else td__yhint over
 * cands. */
static const char *hint(char *buf, size_t cap, const char *s,
                        const name_alias *aliases, size_t naliases,
                        const char *const *cands, size_t n)
{
    const char *known = NULL;
    for (size_t i = 0; i < naliases && known == NULL; i++)
        if (same_nocase(s, aliases[i].alias))
            known = aliases[i].name;
    if (known != NULL) {
        if (cap > 0)
            snprintf(buf, cap, " (did you mean '%s'?)", known);
        return buf;
    }
    return td__yhint(buf, cap, s, cands, n);
}

const char *td__dtype_hint(char *buf, size_t cap, const char *s)
{
    const char *names[TD_DTYPE_COUNT];
    for (int i = 0; i < TD_DTYPE_COUNT; i++)
        names[i] = g_dtypes[i].name;
    return hint(buf, cap, s, g_dtype_aliases,
                sizeof g_dtype_aliases / sizeof *g_dtype_aliases, names,
                TD_DTYPE_COUNT);
}

const char *td__exec_scope_hint(char *buf, size_t cap, const char *s)
{
    return hint(buf, cap, s, NULL, 0, g_scopes, TD_SCOPE_COUNT);
}

const char *td__axis_hint(char *buf, size_t cap, const char *s)
{
    const char *names[TD_AXIS_COUNT];
    for (int i = 0; i < TD_AXIS_COUNT; i++)
        names[i] = g_axes[i].name;
    return hint(buf, cap, s, g_axis_aliases,
                sizeof g_axis_aliases / sizeof *g_axis_aliases, names,
                TD_AXIS_COUNT);
}

const char *td__launch_tag_hint(char *buf, size_t cap, const char *s)
{
    return hint(buf, cap, s, g_launch_aliases,
                sizeof g_launch_aliases / sizeof *g_launch_aliases, g_launch,
                TD_LAUNCH_COUNT);
}

/* ---- reserved names ---------------------------------------------------- */

/* Names the generated code may not give a variable, a scratch buffer or a
 * named scalar: keywords of CUDA C and of TVMScript (Python), names the
 * printed code itself uses (T, Tx, threadIdx, blockIdx) and the math
 * functions the value ops print.  Sorted as strcmp sorts them (searched by
 * halves; the codegen unit test checks the order).  One list for the call
 * loader (named scalars) and the IR builder (td_param, variables). */
const char *const td__reserved_names[] = {
    "False", "None", "T", "True", "Tx", "and", "as", "asm", "assert", "async",
    "auto", "await", "blockIdx", "bool", "break", "case", "char", "class",
    "const", "continue", "def", "default", "del", "do", "double", "elif",
    "else", "enum", "except", "exp", "exp2", "exp2f", "expf", "extern",
    "false", "finally", "float", "fmax", "fmaxf", "fmin", "fminf", "for",
    "from", "global", "goto", "hexp", "hexp2", "hlog2", "hsqrt", "if",
    "import", "in", "inline", "int", "is", "lambda", "log2", "log2f", "long",
    "max", "min", "nonlocal", "not", "or", "pass", "raise", "register",
    "return", "short", "signed", "sizeof", "sqrt", "sqrtf", "static",
    "struct", "switch", "threadIdx", "true", "try", "typedef", "union",
    "unsigned", "void", "volatile", "while", "with", "yield"};
const size_t td__nreserved_names =
    sizeof td__reserved_names / sizeof td__reserved_names[0];

bool td__is_reserved_name(const char *s)
{
    size_t lo = 0, hi = td__nreserved_names;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s, td__reserved_names[mid]);
        if (c == 0)
            return true;
        if (c < 0)
            hi = mid;
        else
            lo = mid + 1;
    }
    return false;
}

/* ---- identifiers ------------------------------------------------------- */

bool td_variant_name_ok(const char *s)
{
    if (s == NULL || strnlen(s, TD_NAME_MAX) >= TD_NAME_MAX)
        return false;
    /* part (sep part)*: a part is never empty, so "a->", "->a", "a-->b"
     * and "a<-b" fail where the next part or separator should start.  A
     * part is words joined by '.', the last may end in one '*' (TVM's gemm
     * variant is `mma.m16n8k*`): "a.", ".a", "a..b", "*", "a*b" fail. */
    const char *p = s;
    for (;;) {
        for (;;) {
            const char *start = p;
            while (isalnum((unsigned char)*p) || *p == '_')
                p++;
            if (p == start)
                return false;
            if (*p != '.')
                break;
            p++;
        }
        if (*p == '*')
            p++;
        if (*p == '\0')
            return true;
        if (p[0] == '-' && p[1] == '>')
            p += 2;
        else if (p[0] == '<' && p[1] == '-' && p[2] == '>')
            p += 3;
        else
            return false;
    }
}

bool td__is_ident(const char *s, bool digit_start)
{
    if (s[0] == '\0')
        return false;
    if (!digit_start && !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return false;
    for (const char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '_'))
            return false;
    return true;
}
