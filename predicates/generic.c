/*
 * The generic predicates: named checks over a call that rules files bind
 * with arguments (upstream's storage_scope, exec_scope and the packed
 * variants' checks).  Each one answers pass, or fail with a one-line reason
 * whose wording follows upstream TIRx's reduction predicates, so that
 * explain tables read like upstream's.
 *
 * Predicates run on the dispatch fast path from several threads at once:
 * they allocate nothing, keep no state and format reasons into the
 * caller's fixed-size td_reason.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <string.h>

#include "predicates.h"

/* Both operand buffers, or a reason when the call is malformed. */
static bool operands(const td_call *call, const td_buffer **dst,
                     const td_buffer **src, td_reason *why)
{
    *dst = td__region_buffer(call, &call->dst);
    *src = td__region_buffer(call, &call->src);
    if (*dst == NULL || *src == NULL) {
        td_reason_set(why, "%s", td__regions_missing(call));
        return false;
    }
    return true;
}

/* upstream match_scope: a pattern ending in '*' matches by prefix, any
 * other pattern only by equality ("local" does not match local.fragment). */
static bool scope_matches(const char *scope, const char *pattern)
{
    size_t n = strlen(pattern);
    size_t len = strnlen(scope, TD_NAME_MAX);
    if (n > 0 && pattern[n - 1] == '*')
        return len >= n - 1 && memcmp(scope, pattern, n - 1) == 0;
    return len == n && memcmp(scope, pattern, n) == 0;
}

/* ---- storage_scope ----------------------------------------------------- */

static const td_arg_spec storage_scope_args[] = {
    {"expected_scope", TD_ARG_STRING_LIST, true},
};

/* Passes iff one pattern matches both the dst and the src scope: a
 * reduction must not mix register and shared operands. */
static bool pred_storage_scope(const td_call *call, const td_args *args,
                               void *user, td_reason *why)
{
    (void)user;
    const td_buffer *dst, *src;
    if (!operands(call, &dst, &src, why))
        return false;
    const char *const *items = NULL;
    size_t n = td_args_list(args, "expected_scope", &items);
    for (size_t i = 0; i < n; i++) {
        if (items[i] != NULL && scope_matches(dst->scope, items[i]) &&
            scope_matches(src->scope, items[i]))
            return true;
    }
    char list[TD_REASON_MAX];
    td_args_list_text(args, "expected_scope", list, sizeof list);
    td_reason_set(why, "storage scope mismatch: dst %.*s, src %.*s; expected %s",
                  TD__FIELD(dst->scope), TD__FIELD(src->scope), list);
    return false;
}

/* ---- exec_scope -------------------------------------------------------- */

static const td_arg_spec exec_scope_args[] = {
    {"expected_scopes", TD_ARG_STRING_LIST, true},
};

static bool pred_exec_scope(const td_call *call, const td_args *args,
                            void *user, td_reason *why)
{
    (void)user;
    const char *name = td_exec_scope_name(call->scope);
    const char *const *items = NULL;
    size_t n = td_args_list(args, "expected_scopes", &items);
    for (size_t i = 0; i < n; i++) {
        if (items[i] != NULL && strcmp(items[i], name) == 0)
            return true;
    }
    td_reason_set(why, "unsupported exec_scope %s", name);
    return false;
}

/* ---- local_scope ------------------------------------------------------- */

static bool pred_local_scope(const td_call *call, const td_args *args,
                             void *user, td_reason *why)
{
    (void)args;
    (void)user;
    const td_buffer *dst, *src;
    if (!operands(call, &dst, &src, why))
        return false;
    if (td__name_is(dst->scope, "local") && td__name_is(src->scope, "local") &&
        dst->dtype == src->dtype && td__name_is(call->target, "cuda"))
        return true;
    td_reason_set(why, "src/dst must be local scope with matching dtype on CUDA");
    return false;
}

/* ---- dst_len ----------------------------------------------------------- */

static const td_arg_spec dst_len_args[] = {
    {"expected_len", TD_ARG_INT, true},
};

static bool pred_dst_len(const td_call *call, const td_args *args, void *user,
                         td_reason *why)
{
    (void)user;
    const td_buffer *dst, *src;
    if (!operands(call, &dst, &src, why))
        return false;
    int64_t n = td__region_elems(&call->dst);
    int64_t want = td_args_int(args, "expected_len", 1);
    if (n == want)
        return true;
    td_reason_set(why, "dst_len %" PRId64 " != %" PRId64, n, want);
    return false;
}

/* ---- src_ndim ---------------------------------------------------------- */

static const td_arg_spec src_ndim_args[] = {
    {"expected_ndim", TD_ARG_INT, true},
};

static bool pred_src_ndim(const td_call *call, const td_args *args,
                          void *user, td_reason *why)
{
    (void)user;
    const td_buffer *dst, *src;
    if (!operands(call, &dst, &src, why))
        return false;
    int64_t want = td_args_int(args, "expected_ndim", 1);
    if (call->src.ndim == want)
        return true;
    td_reason_set(why, "src ndim %d != %" PRId64, call->src.ndim, want);
    return false;
}

/* ---- dtype ------------------------------------------------------------- */

static const td_arg_spec dtype_args[] = {
    {"expected_dtype", TD_ARG_STRING, true},
};

/* Checks the source dtype (the packed variants need float32 input). */
static bool pred_dtype(const td_call *call, const td_args *args, void *user,
                       td_reason *why)
{
    (void)user;
    const td_buffer *dst, *src;
    if (!operands(call, &dst, &src, why))
        return false;
    const char *want = td_args_string(args, "expected_dtype", "float32");
    const char *have = td_dtype_name(src->dtype);
    if (want != NULL && strcmp(have, want) == 0)
        return true;
    td_reason_set(why, "dtype %s != %s", have, want != NULL ? want : "");
    return false;
}

/* ---- sm_version -------------------------------------------------------- */

static const td_arg_spec sm_version_args[] = {
    {"min_version", TD_ARG_INT, true},
};

/* An unknown arch reads as version 0, so it never passes a minimum above
 * zero: nothing is guessed about the GPU. */
static bool pred_sm_version(const td_call *call, const td_args *args,
                            void *user, td_reason *why)
{
    (void)user;
    int64_t min = td_args_int(args, "min_version", 0);
    if ((int64_t)call->sm_version >= min)
        return true;
    td_reason_set(why, "sm_version %d < %" PRId64, call->sm_version, min);
    return false;
}

/* ---- reduction_len ----------------------------------------------------- */

static const td_arg_spec reduction_len_args[] = {
    {"min_len", TD_ARG_INT, true},
};

/* Upstream counts every source element here, not only the reduced ones. */
static bool pred_reduction_len(const td_call *call, const td_args *args,
                               void *user, td_reason *why)
{
    (void)user;
    const td_buffer *dst, *src;
    if (!operands(call, &dst, &src, why))
        return false;
    int64_t n = td__region_elems(&call->src);
    int64_t min = td_args_int(args, "min_len", 0);
    if (n >= min)
        return true;
    td_reason_set(why, "reduction_len %" PRId64 " < %" PRId64, n, min);
    return false;
}

/* ---- the table --------------------------------------------------------- */

#define TD__NARGS(a) (sizeof(a) / sizeof((a)[0]))

const td_pred_desc td__generic_predicates[] = {
    {"storage_scope", storage_scope_args, TD__NARGS(storage_scope_args),
     pred_storage_scope, NULL, NULL},
    {"exec_scope", exec_scope_args, TD__NARGS(exec_scope_args),
     pred_exec_scope, NULL, NULL},
    {"local_scope", NULL, 0, pred_local_scope, NULL, NULL},
    {"dst_len", dst_len_args, TD__NARGS(dst_len_args), pred_dst_len, NULL, NULL},
    {"src_ndim", src_ndim_args, TD__NARGS(src_ndim_args), pred_src_ndim,
     NULL, NULL},
    {"dtype", dtype_args, TD__NARGS(dtype_args), pred_dtype, NULL, NULL},
    {"sm_version", sm_version_args, TD__NARGS(sm_version_args),
     pred_sm_version, NULL, NULL},
    {"reduction_len", reduction_len_args, TD__NARGS(reduction_len_args),
     pred_reduction_len, NULL, NULL},
};

const size_t td__generic_predicates_count =
    sizeof(td__generic_predicates) / sizeof(td__generic_predicates[0]);
