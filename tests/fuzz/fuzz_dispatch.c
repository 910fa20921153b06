/*
 * Structured fuzz target: a rules text and a call text in one input,
 * separated by a line "@@@@" (a character YAML reserves, so real files never
 * hold it).  Without the separator the whole input is the call and the
 * default rules dispatch it, so the real emitters run on fuzzed calls.
 *
 * When both load: td_dispatch, and on a match both printers (TIRx and CUDA)
 * and td_kernel_program; td_explain_call and every td_explain_format style
 * always.  Oracles: no crash, no leak, no hang; dispatch and explain agree on
 * whether something matched and on the variant; printing an accepted IR
 * succeeds; every error has a message.
 */
#include <string.h>

#include "fuzz.h"
#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"
#include "td_internal.h"

#define SEPARATOR "\n@@@@\n"

static td_registry *g_default;

static void run_call(const td_registry *reg, const td_call *call)
{
    td_diag d;
    td_diag_clear(&d);
    td_dispatch_result res;
    memset(&res, 0, sizeof res);
    int rc = td_dispatch(reg, call, &res, &d);
    if (rc == 0) {
        FUZZ_CHECK(res.ir != NULL && res.variant != NULL && res.impl != NULL);
        for (int lang = 0; lang < 2; lang++) {
            char *body = NULL, *prelude = NULL;
            int prc = td_ir_print(res.ir, (td_lang)lang, lang, &body,
                                  &prelude);
            if (prc != 0)
                fprintf(stderr, "print failed: %s\n", td_err_name(prc));
            /* Only a size cap may stop printing an accepted body. */
            FUZZ_CHECK(prc == 0 || prc == TD_ELIMIT);
            if (prc == 0)
                FUZZ_CHECK(body != NULL && prelude != NULL);
            td_free(body);
            td_free(prelude);
        }
        td_ir_free(res.ir);
        char *program = NULL;
        td_diag_clear(&d);
        int krc = td_kernel_program(reg, call, &program, &d);
        if (krc == 0)
            FUZZ_CHECK(program != NULL && strstr(program, "__global__"));
        else
            FUZZ_CHECK(program == NULL && d.msg[0] != '\0');
        td_free(program);
    } else {
        FUZZ_CHECK(rc < 0 && d.msg[0] != '\0');
    }

    td_explain *ex = NULL;
    td_diag_clear(&d);
    int erc = td_explain_call(reg, call, &ex, &d);
    if (erc != 0) {
        FUZZ_CHECK(ex == NULL);
        return;
    }
    const td_explain_row *sel = td_explain_selected(ex);
    if (rc == 0) {
        FUZZ_CHECK(sel != NULL && strcmp(sel->variant, res.variant) == 0);
    } else if (rc == TD_ENOMATCH) {
        FUZZ_CHECK(sel == NULL);
    }
    size_t n = td_explain_nrows(ex);
    if (n == 0)
        FUZZ_CHECK(td_explain_empty_reason(ex)[0] != '\0');
    for (size_t i = 0; i < n; i++) {
        const td_explain_row *row = td_explain_get(ex, i);
        FUZZ_CHECK(row != NULL && row->variant != NULL && row->message);
        for (size_t k = 0; k < row->npreds; k++)
            FUZZ_CHECK(row->preds[k].name != NULL && row->preds[k].reason);
    }
    FUZZ_CHECK(td_explain_get(ex, n) == NULL);
    const td_explain_style styles[] = {TD_EXPLAIN_TEXT, TD_EXPLAIN_JSON,
                                       TD_EXPLAIN_TVM};
    for (size_t k = 0; k < sizeof styles / sizeof *styles; k++) {
        char *text = NULL;
        FUZZ_CHECK(td_explain_format(ex, styles[k], &text) == 0);
        FUZZ_CHECK(text != NULL && text[0] != '\0');
        td_free(text);
    }
    td_explain_free(ex);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    td_diag d;
    if (g_default == NULL) {
        td_diag_clear(&d);
        FUZZ_CHECK(td_registry_new(&g_default) == 0);
        FUZZ_CHECK(td_registry_load_default_rules(g_default, &d) == 0);
    }
    if (size > 64 * 1024)
        return 0;
    char *text = fuzz_exact_copy(data, size);
    const char *sep = NULL;
    for (size_t i = 0; i + sizeof SEPARATOR - 1 <= size; i++)
        if (memcmp(text + i, SEPARATOR, sizeof SEPARATOR - 1) == 0) {
            sep = text + i;
            break;
        }
    td_registry *reg = g_default, *own = NULL;
    const char *call_text = text;
    size_t call_len = size;
    if (sep != NULL) {
        size_t rules_len = (size_t)(sep - text);
        call_text = sep + sizeof SEPARATOR - 1;
        call_len = size - rules_len - (sizeof SEPARATOR - 1);
        FUZZ_CHECK(td_registry_new(&own) == 0);
        td_diag_clear(&d);
        if (td_registry_load_rules_text(own, "rules.yaml", text, rules_len,
                                        &d) != 0) {
            td_registry_free(own);
            free(text);
            return 0;
        }
        reg = own;
    }
    td_call *call = NULL;
    td_diag_clear(&d);
    if (td_call_parse("call.yaml", call_text, call_len, &call, &d) == 0) {
        run_call(reg, call);
        td_call_free(call);
    }
    td_registry_free(own);
    free(text);
    return 0;
}
