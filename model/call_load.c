/*
 * The call file loader (contract section 3): td_call_parse,
 * td_call_load_file and td_call_free, and the walk over the top-level keys
 * (op, target, arch, scope, the sources) that hands each section to its
 * reader (call_sections.c, call_operands.c, region_parse.c).
 *
 * Loading runs in two steps.  The YAML front-end (core/td_yaml.h) builds a
 * tree of nodes that remember their positions, with the policy every file
 * kind shares (tags, anchors and aliases refused, limits, one wording of
 * libyaml's errors); then the schema walk fills a td_call and reports the
 * first problem with FILE:LINE:COL.  A message about an unknown name ends
 * in a hint (the close valid name, or the list: td__yhint and the hints of
 * names.c; an arch's own here).
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "call_reader.h"

/* Reads an identifier-like name (op, target, dispatch). */
static int cl_name(td__cl *c, const td_ynode *n, const char *what, char *out,
                   bool digit_start)
{
    int rc = cl_string(c, n, what, out, TD_NAME_MAX);
    if (rc)
        return rc;
    if (!td__is_ident(out, digit_start))
        return cl_err(c, TD_ESCHEMA, n, "'%s' must be a name, got '%s'", what,
                      out);
    return 0;
}

/* Reads the forced variant of `dispatch:` (td_variant_name_ok). */
static int cl_variant(td__cl *c, const td_ynode *n, char *out)
{
    int rc = cl_string(c, n, "dispatch", out, TD_NAME_MAX);
    if (rc)
        return rc;
    if (!td_variant_name_ok(out))
        return cl_err(c, TD_ESCHEMA, n,
                      "'dispatch' must be a variant name (" TD_VARIANT_NAME_FORM
                      "), got '%s'",
                      out);
    return 0;
}

/* The hint after "arch 'X' has no sm_NN version": the sm_NN spelling of
 * an SM version written another way (SM_90a, sm90, compute_90, 90a) or of
 * a GPU named by its architecture or product, else the expected form. */
static const char *arch_hint(char *buf, size_t cap, const char *arch)
{
    static const struct {
        const char *name, *sm;
    } gpus[] = {{"volta", "sm_70"},      {"v100", "sm_70"},
                {"turing", "sm_75"},     {"t4", "sm_75"},
                {"ampere", "sm_80"},     {"a100", "sm_80"},
                {"a10", "sm_86"},        {"ada", "sm_89"},
                {"l4", "sm_89"},         {"l40", "sm_89"},
                {"l40s", "sm_89"},       {"hopper", "sm_90a"},
                {"h100", "sm_90a"},      {"h200", "sm_90a"},
                {"gh200", "sm_90a"},     {"blackwell", "sm_100a"},
                {"b200", "sm_100a"},     {"gb200", "sm_100a"}};
    char low[TD_NAME_MAX];
    size_t n = 0;
    for (; arch[n] && n + 1 < sizeof low; n++)
        low[n] = (char)tolower((unsigned char)arch[n]);
    low[n] = '\0';
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++)
        if (strcmp(low, gpus[i].name) == 0) {
            snprintf(buf, cap, " (did you mean '%s'?)", gpus[i].sm);
            return buf;
        }
    /* The version's digits and suffix after an optional prefix. */
    static const char *const prefixes[] = {"sm_", "sm", "compute_", ""};
    for (size_t i = 0; i < sizeof prefixes / sizeof *prefixes; i++) {
        size_t pl = strlen(prefixes[i]);
        const char *v = low + pl;
        if (strncmp(low, prefixes[i], pl) != 0 || !isdigit((unsigned char)*v))
            continue;
        size_t d = strspn(v, "0123456789");
        if (d <= 4 && strspn(v + d, "abf") == strlen(v + d) &&
            strlen(v + d) <= 1) {
            snprintf(buf, cap, " (did you mean 'sm_%s'?)", v);
            return buf;
        }
    }
    snprintf(buf, cap, " (expected sm_NN, e.g. sm_80 or sm_90a)");
    return buf;
}

enum {
    K_OP,
    K_TARGET,
    K_ARCH,
    K_SCOPE,
    K_LAUNCH,
    K_BUFFERS,
    K_DST,
    K_SRC,
    K_AXES,
    K_ACCUM,
    K_CONFIG,
    K_DISPATCH,
    K_SRCS,
    K_EXTRAS,
    K_SCALARS,
    K_A,
    K_B,
    K_C,
    K_TRANSPOSE_A,
    K_TRANSPOSE_B,
    K_ALPHA,
    K_BETA,
    K_ACTIVE,
    K_TRANSA,
    K_TRANSB,
    K_SFA,
    K_SFB,
    K_COUNT
};

static const char *const g_keys[K_COUNT] = {
    "op",     "target", "arch",     "scope", "launch", "buffers", "dst",
    "src",    "axes",   "accum",    "config", "dispatch", "srcs", "extras",
    "scalars", "a",     "b",        "c",     "transpose_A", "transpose_B",
    "alpha",  "beta",   "active", "transA", "transB", "sfa", "sfb"};

static void set_pos(td_pos *p, const td_ynode *n)
{
    p->line = n->line;
    p->col = n->col;
}

/* Tensor memory is not addressable: a tmem buffer is an operand of
 * copy_async, whose tcgen05 variants move it, and of gemm_async, whose
 * tcgen05.mma accumulates into it (TVM's copy has tcgen05 forms too; they
 * are not ported, and every other variant would read the buffer as
 * memory). */
static int cl_tmem_operands(td__cl *c, const td_ynode *dst)
{
    const td_call *call = c->call;
    if (strcmp(call->op, "copy_async") == 0 ||
        td__gemm_async_form(call->op))
        return 0;
    const td_buffer *b = &call->buffers[call->dst.buffer];
    if (strcmp(b->scope, "tmem") == 0)
        return cl_err(c, TD_ESCHEMA, dst,
                      "dst: tmem buffer '%s' is tensor memory, which only "
                      "copy_async moves (tcgen05.ld/st), not %s",
                      b->name, call->op);
    /* gemm's sources are its a, b and c. */
    static const char *const gemm_keys[3] = {"a", "b", "c"};
    bool gemm = td__gemm_form(call->op);
    for (int i = 0; i < call->nsrcs; i++) {
        const td_operand *o = &call->srcs[i];
        if (o->kind != TD_OPERAND_REGION)
            continue;
        b = &call->buffers[o->region.buffer];
        if (strcmp(b->scope, "tmem") == 0)
            return cl_err_at(c, TD_ESCHEMA, o->pos.line, o->pos.col,
                             "%s: tmem buffer '%s' is tensor memory, which "
                             "only copy_async moves (tcgen05.ld/st), not %s",
                             gemm && i < 3 ? gemm_keys[i] : "src",
                             b->name, call->op);
    }
    return 0;
}

/* src or srcs, then extras; call->src mirrors srcs[0] when that is a
 * region and has buffer -1 otherwise. */
static int cl_sources(td__cl *c, const td_ynode *const *v,
                      const td_ynode *const *keys)
{
    td_call *call = c->call;
    int rc;
    if (v[K_SRC] != NULL && v[K_SRCS] != NULL) {
        const td_ynode *a = keys[K_SRC], *b = keys[K_SRCS];
        bool a_first = a->line < b->line || (a->line == b->line && a->col < b->col);
        const td_ynode *later = a_first ? b : a;
        return cl_err(c, TD_ESCHEMA, later,
                      "give 'src' (one region) or 'srcs' (a list of "
                      "operands), not both");
    }
    if (v[K_SRC] != NULL) {
        td_operand *o = &call->srcs[0];
        if ((rc = td__cl_region(c, v[K_SRC], "src", &o->region)) != 0)
            return rc;
        o->kind = TD_OPERAND_REGION;
        o->dtype = call->buffers[o->region.buffer].dtype;
        set_pos(&o->pos, v[K_SRC]);
        call->nsrcs = 1;
        set_pos(&call->pos_srcs, v[K_SRC]);
    } else if (v[K_SRCS] != NULL) {
        if ((rc = td__cl_srcs(c, v[K_SRCS])) != 0)
            return rc;
        call->srcs_list = true;
        set_pos(&call->pos_srcs, v[K_SRCS]);
    }
    if (call->nsrcs > 0 && call->srcs[0].kind == TD_OPERAND_REGION) {
        call->src = call->srcs[0].region;
    } else {
        memset(&call->src, 0, sizeof call->src);
        call->src.buffer = -1;
    }
    if (v[K_EXTRAS] != NULL) {
        if ((rc = td__cl_extras(c, v[K_EXTRAS])) != 0)
            return rc;
        set_pos(&call->pos_extras, v[K_EXTRAS]);
    }
    return 0;
}

static int cl_call(td__cl *c, const td_ynode *root)
{
    td_call *call = c->call;
    const td_ynode *v[K_COUNT] = {NULL}, *keys[K_COUNT] = {NULL};
    int rc;

    if (root->kind != TD_YMAP)
        return cl_err(c, TD_ESCHEMA, root,
                      "a call file must be a mapping, not %s",
                      td__ytype_name(yv_kind(root)));
    for (size_t i = 0; i < root->n / 2; i++) {
        const td_ynode *k = root->kids[2 * i];
        rc = td__ykey(&c->doc, k);
        if (rc)
            return rc;
        int which = -1;
        for (int j = 0; j < K_COUNT; j++)
            if (strcmp(k->str, g_keys[j]) == 0)
                which = j;
        if (which < 0) {
            /* A rules file given where a call is expected starts with
             * the keys only rules files have. */
            char hint[256];
            if (strcmp(k->str, "version") == 0 ||
                strcmp(k->str, "variants") == 0)
                snprintf(hint, sizeof hint,
                         " (this looks like a rules file, not a call file)");
            else
                td__yhint(hint, sizeof hint, k->str, g_keys, K_COUNT);
            return cl_err(c, TD_ESCHEMA, k, "unknown key '%.64s'%s", k->str,
                          hint);
        }
        if (v[which] != NULL)
            return cl_err(c, TD_ESCHEMA, k, "duplicate key '%s'", g_keys[which]);
        v[which] = root->kids[2 * i + 1];
        keys[which] = k;
    }
    /* The source is optional here (`zero` takes none): the op's check
     * decides at dispatch (contract section 3). */
    static const int required[] = {K_OP, K_TARGET, K_BUFFERS, K_DST};
    for (size_t j = 0; j < sizeof required / sizeof *required; j++)
        if (v[required[j]] == NULL)
            return cl_err(c, TD_ESCHEMA, root, "missing required key '%s'",
                          g_keys[required[j]]);

    rc = cl_name(c, v[K_OP], "op", call->op, false);
    if (rc)
        return rc;
    set_pos(&call->pos_op, v[K_OP]);
    /* gemm names its operands (call_gemm.c); the other ops' keys are
     * refused there, and gemm's elsewhere. */
    if ((rc = td__cl_form_keys(c, root)) != 0)
        return rc;
    rc = cl_name(c, v[K_TARGET], "target", call->target, false);
    if (rc)
        return rc;
    set_pos(&call->pos_target, v[K_TARGET]);
    if (v[K_ARCH] != NULL) {
        char arch[TD_NAME_MAX];
        rc = cl_string(c, v[K_ARCH], "arch", arch, sizeof arch);
        if (rc)
            return rc;
        char hint[64];
        if (td_call_set_arch(call, arch) != 0)
            return cl_err(c, TD_ESCHEMA, v[K_ARCH],
                          "arch '%s' has no sm_NN version%s", arch,
                          arch_hint(hint, sizeof hint, arch));
    }
    call->scope = TD_SCOPE_THREAD;
    if (v[K_SCOPE] != NULL) {
        char s[TD_NAME_MAX];
        rc = cl_string(c, v[K_SCOPE], "scope", s, sizeof s);
        if (rc)
            return rc;
        char hint[128];
        if (td_exec_scope_parse(s, &call->scope) != 0)
            return cl_err(c, TD_ESCHEMA, v[K_SCOPE],
                          "unknown exec scope '%s'%s", s,
                          td__exec_scope_hint(hint, sizeof hint, s));
    }
    if (v[K_LAUNCH] != NULL && (rc = td__cl_launch(c, v[K_LAUNCH])) != 0)
        return rc;
    if ((rc = td__cl_buffers(c, v[K_BUFFERS])) != 0)
        return rc;
    if (v[K_SCALARS] != NULL && (rc = td__cl_scalars(c, v[K_SCALARS])) != 0)
        return rc;
    if ((rc = td__cl_region(c, v[K_DST], "dst", &call->dst)) != 0)
        return rc;
    set_pos(&call->pos_dst, v[K_DST]);
    if (td__gemm_form(call->op))
        rc = td__cl_gemm(c, root);
    else if (td__gemm_async_form(call->op))
        rc = td__cl_gemm_async(c, root);
    else
        rc = cl_sources(c, v, keys);
    if (rc != 0)
        return rc;
    if ((rc = cl_tmem_operands(c, v[K_DST])) != 0)
        return rc;
    if (v[K_AXES] != NULL) {
        if (call->src.buffer < 0)
            return cl_err(c, TD_ESCHEMA, v[K_AXES],
                          "'axes' needs a region as the first source");
        if ((rc = td__cl_axes(c, v[K_AXES])) != 0)
            return rc;
    } else {
        call->naxes = 1;
        call->axes[0] = -1;
    }
    if (v[K_ACCUM] != NULL && td__gemm_async_form(call->op) &&
        td__yclass(v[K_ACCUM], NULL, NULL, NULL) == TD_YT_STR) {
        if ((rc = td__cl_gemm_async_accum(c, v[K_ACCUM])) != 0)
            return rc;
    } else if (v[K_ACCUM] != NULL) {
        td_ytype t = td__yclass(v[K_ACCUM], NULL, &call->accum, NULL);
        if (t != TD_YT_BOOL)
            return cl_err(c, TD_ESCHEMA, v[K_ACCUM],
                          "'accum' must be a boolean, not %s", td__ytype_name(t));
    }
    if (v[K_CONFIG] != NULL && (rc = td__cl_config(c, v[K_CONFIG])) != 0)
        return rc;
    if (v[K_ACTIVE] != NULL && (rc = td__cl_active(c, v[K_ACTIVE])) != 0)
        return rc;
    if (v[K_DISPATCH] != NULL) {
        rc = cl_variant(c, v[K_DISPATCH], call->dispatch);
        if (rc)
            return rc;
        set_pos(&call->pos_dispatch, v[K_DISPATCH]);
    }
    return td__cl_confined_dtypes(c);
}

/* The limits of a call file. */
static const td_ylimits call_limits = {TD_CALL_FILE_MAX, TD_CALL_DEPTH_MAX, 0};

int td_call_parse(const char *name, const char *text, size_t len,
                  td_call **out, td_diag *diag)
{
    td__cl c;
    memset(&c, 0, sizeof c);
    *out = NULL;
    if (text == NULL)
        return td__fail(diag, TD_EINVAL, name ? name : "",
                        "no call text given");
    int rc = td__ydoc_load(&c.doc, name, "call file", text, len, &call_limits,
                           diag);
    if (rc)
        return rc;
    c.call = td__calloc(1, sizeof *c.call);
    if (c.call == NULL) {
        rc = cl_err_at(&c, TD_ENOMEM, 0, 0, "out of memory");
        td__ydoc_free(&c.doc);
        return rc;
    }
    td__strlcpy(c.call->file, c.doc.file, sizeof c.call->file);
    rc = cl_call(&c, c.doc.root);
    td__ydoc_free(&c.doc);
    if (rc) {
        td__free(c.call);
        return rc;
    }
    *out = c.call;
    return 0;
}

int td_call_load_file(const char *path, td_call **out, td_diag *diag)
{
    char *text = NULL;
    size_t len = 0;
    *out = NULL;
    int rc = td__read_file(path, TD_CALL_FILE_MAX, &text, &len, diag);
    if (rc)
        return rc;
    rc = td_call_parse(path, text, len, out, diag);
    td__free(text);
    return rc;
}

void td_call_free(td_call *call)
{
    td__free(call);
}
