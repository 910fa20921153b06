/*
 * The name tables of the call model: dtypes, execution scopes, launch axes
 * and launch tags (the spellings call files and printers use), the names
 * the generated code reserves, and what counts as an identifier in a call
 * file.
 */
#include <ctype.h>
#include <stdbool.h>
#include <string.h>

#include "model.h"
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
    return t == TD_F32 || t == TD_F16 || t == TD_BF16 || t == TD_F64;
}

bool td_dtype_is_signed(td_dtype t)
{
    return td_dtype_is_float(t) || t == TD_I8 || t == TD_I16 || t == TD_I32 ||
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
