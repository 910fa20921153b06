/*
 * td_ir_print: the printers' front door.  It checks the IR, sets up the
 * printer context and hands the tree to the TIRx or CUDA printer.
 */
#include <string.h>

#include "codegen_internal.h"

const char *td_cuda_type_name(td_dtype t)
{
    return (unsigned)t < TD_DTYPE_COUNT ? td__cuda_type(t) : NULL;
}

/* ---- printing ----------------------------------------------------------- */

int td_lang_parse(const char *name, td_lang *out)
{
    if (name == NULL || out == NULL)
        return TD_EINVAL;
    if (strcmp(name, "cuda") == 0)
        *out = TD_LANG_CUDA;
    else if (strcmp(name, "tirx") == 0)
        *out = TD_LANG_TIRX;
    else
        return TD_EINVAL;
    return 0;
}

int td_ir_print(const td_ir *ir, td_lang lang, int indent, char **body,
                char **prelude)
{
    if (body != NULL)
        *body = NULL;
    if (prelude != NULL)
        *prelude = NULL;
    if (ir == NULL || (lang != TD_LANG_TIRX && lang != TD_LANG_CUDA) ||
        indent < 0 || indent > 1024)
        return TD_EINVAL;
    if (ir->status != 0)
        return ir->status;
    if (ir->depth != 0)
        return TD_EINVAL;

    td__pctx p;
    memset(&p, 0, sizeof p);
    p.ir = ir;
    td__buf_init(&p.body);
    td__buf_init(&p.prelude);
    size_t nv = (size_t)(ir->nvars > 0 ? ir->nvars : 1);
    p.live = td__calloc(nv, 1);
    p.zero = td__calloc(nv, 1);
    int err = 0;
    if (p.live == NULL || p.zero == NULL) {
        err = TD_ENOMEM;
    } else {
        td__w_init(&p.w, &p.body, lang, indent);
        err = lang == TD_LANG_CUDA ? td__print_cuda(&p) : td__print_tirx(&p);
    }
    if (err == 0 && (p.body.err || p.prelude.err))
        err = p.body.err ? p.body.err : p.prelude.err;
    /* The texts are handed over in allocator-hook memory; the caller
     * releases them with td_free (td_ir.h). */
    char *b = NULL, *pr = NULL;
    if (err == 0 && body != NULL)
        err = td__buf_take(&p.body, &b);
    if (err == 0 && prelude != NULL)
        err = td__buf_take(&p.prelude, &pr);
    if (err != 0) {
        td__free(b);
        td__free(pr);
    } else {
        if (body != NULL)
            *body = b;
        if (prelude != NULL)
            *prelude = pr;
    }
    td__free(p.live);
    td__free(p.zero);
    td__buf_free(&p.body);
    td__buf_free(&p.prelude);
    td__arena_free(&p.arena);
    return err;
}
