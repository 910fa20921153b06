/*
 * Fuzz target: the rules loader.  The registry holds the default rules;
 * each input is loaded over them.  Oracles: no crash; a failed load returns
 * a code with a message and a position inside the text and leaves the table
 * exactly as it was (td_registry_rules before and after); a successful load
 * gives a table whose every entry and predicate can be read back.  After a
 * successful load the default rules are loaded again, so every input starts
 * from the same state.  Each input is then added as an overlay over the
 * default rules, with the same oracles.
 */
#include <string.h>

#include "fuzz.h"
#include "tiledispatch.h"
#include "td_internal.h"

static td_registry *g_reg;
static char *g_default_dump;

/* The whole table as text. */
static char *dump(const td_registry *reg)
{
    td_buf b;
    td__buf_init(&b);
    size_t n = td_registry_rules(reg, NULL, 0);
    td_rule_info *infos = calloc(n ? n : 1, sizeof *infos);
    FUZZ_CHECK(infos != NULL);
    FUZZ_CHECK(td_registry_rules(reg, infos, n) == n);
    for (size_t i = 0; i < n; i++) {
        const td_rule_info *r = &infos[i];
        td__buf_printf(&b, "%s/%s %s impl=%s prio=%d%s %s:%d", r->op,
                       r->target, r->name, r->impl, r->priority,
                       r->enabled ? "" : " off", r->file, r->line);
        for (size_t k = 0; k < r->npreds; k++) {
            const char *name = NULL;
            char args[4096];
            FUZZ_CHECK(td_registry_rule_pred(reg, r, k, &name, args,
                                             sizeof args) == 0);
            FUZZ_CHECK(name != NULL && strlen(args) < sizeof args);
            td__buf_printf(&b, " %s%s", name, args);
        }
        /* A too-small argument buffer must stay in bounds. */
        if (r->npreds > 0) {
            const char *name = NULL;
            char small[3];
            (void)td_registry_rule_pred(reg, r, 0, &name, small, sizeof small);
            FUZZ_CHECK(strlen(small) < sizeof small);
        }
        const char *none = NULL;
        char nbuf[8];
        FUZZ_CHECK(td_registry_rule_pred(reg, r, r->npreds, &none, nbuf,
                                         sizeof nbuf) != 0);
        td__buf_puts(&b, "\n");
    }
    free(infos);
    char *out = NULL;
    FUZZ_CHECK(td__buf_take(&b, &out) == 0);
    return out;
}

static void setup(void)
{
    td_diag d;
    td_diag_clear(&d);
    FUZZ_CHECK(td_registry_new(&g_reg) == 0);
    FUZZ_CHECK(td_registry_load_default_rules(g_reg, &d) == 0);
    g_default_dump = dump(g_reg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (g_reg == NULL)
        setup();
    if (size > TD_RULES_FILE_MAX + 16)
        return 0;
    char *text = fuzz_exact_copy(data, size);
    td_diag d;
    td_diag_clear(&d);
    int rc = td_registry_load_rules_text(g_reg, "fuzz.yaml", text, size, &d);
    if (rc != 0) {
        FUZZ_CHECK(rc < 0 && d.code == rc && d.msg[0] != '\0');
        FUZZ_CHECK(d.line >= 0 && d.col >= 0);
        char buf[2048];
        td_diag_format(&d, buf, sizeof buf);
        char *after = dump(g_reg);
        FUZZ_CHECK(strcmp(after, g_default_dump) == 0);
        td__free(after);
    } else {
        td__free(dump(g_reg));
        td_diag_clear(&d);
        FUZZ_CHECK(td_registry_load_default_rules(g_reg, &d) == 0);
    }
    /* The same text as an overlay over the default rules: the same oracles,
     * and a successful add keeps the default layer under it. */
    td_diag_clear(&d);
    rc = td_registry_add_rules_text(g_reg, "fuzz.yaml", text, size, &d);
    if (rc != 0) {
        FUZZ_CHECK(rc < 0 && d.code == rc && d.msg[0] != '\0');
        FUZZ_CHECK(d.line >= 0 && d.col >= 0);
        char *after = dump(g_reg);
        FUZZ_CHECK(strcmp(after, g_default_dump) == 0);
        td__free(after);
    } else {
        FUZZ_CHECK(td_registry_rules_layers(g_reg, NULL, 0) == 2);
        td__free(dump(g_reg));
        td_diag_clear(&d);
        FUZZ_CHECK(td_registry_load_default_rules(g_reg, &d) == 0);
    }
    free(text);
    return 0;
}
