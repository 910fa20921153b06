/*
 * Fuzz target: the call-file loader.  Oracles: no crash, no read past the
 * given length; an error carries its code, a message and a position inside
 * the text; an accepted call satisfies the model's invariants (counts within
 * the limits, regions inside their buffers, names terminated, operands of a
 * known kind, call->src mirroring a region first source) and every
 * function that reads a call copes with it.
 */
#include <string.h>

#include "fuzz.h"
#include "tiledispatch.h"
#include "td_internal.h"

static size_t count_lines(const char *s, size_t n)
{
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n')
            lines++;
    return lines;
}

static void check_name(const char *s, size_t cap)
{
    FUZZ_CHECK(memchr(s, '\0', cap) != NULL);
}

static void check_region(const td_call *c, const td_region *r)
{
    FUZZ_CHECK(r->buffer >= 0 && r->buffer < c->nbuffers);
    const td_buffer *b = &c->buffers[r->buffer];
    FUZZ_CHECK(r->ndim == b->ndim);
    for (int d = 0; d < r->ndim; d++) {
        FUZZ_CHECK(r->extent[d] >= 1 && r->start[d] >= 0);
        FUZZ_CHECK(r->start[d] + r->extent[d] <= b->shape[d]);
    }
    FUZZ_CHECK(td_region_size(r) >= 1);
}

static void check_operand(const td_call *c, const td_operand *o,
                          bool may_be_absent)
{
    char text[256];
    switch (o->kind) {
    case TD_OPERAND_NONE:
        FUZZ_CHECK(may_be_absent);
        break;
    case TD_OPERAND_REGION:
        check_region(c, &o->region);
        FUZZ_CHECK(o->dtype == c->buffers[o->region.buffer].dtype);
        break;
    case TD_OPERAND_LITERAL:
        FUZZ_CHECK((unsigned)o->dtype < TD_DTYPE_COUNT);
        break;
    case TD_OPERAND_SCALAR:
        FUZZ_CHECK((unsigned)o->dtype < TD_DTYPE_COUNT);
        check_name(o->name, sizeof o->name);
        FUZZ_CHECK(o->name[0] != '\0');
        for (int i = 0; i < c->nbuffers; i++)
            FUZZ_CHECK(strcmp(o->name, c->buffers[i].name) != 0);
        break;
    default:
        FUZZ_CHECK(!"unknown operand kind");
    }
    if (o->kind != TD_OPERAND_NONE)
        FUZZ_CHECK(o->pos.line >= 1 && o->pos.col >= 1);
    size_t need = td_operand_format(c, o, text, sizeof text);
    FUZZ_CHECK(need > 0 && (need >= sizeof text || strlen(text) == need));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > TD_CALL_FILE_MAX + 16)
        return 0;
    char *text = fuzz_exact_copy(data, size);
    td_call *call = NULL;
    td_diag d;
    td_diag_clear(&d);
    int rc = td_call_parse("fuzz.yaml", text, size, &call, &d);
    if (rc != 0) {
        FUZZ_CHECK(rc < 0 && call == NULL && d.code == rc && d.msg[0]);
        FUZZ_CHECK(d.line >= 0 && (size_t)d.line <= count_lines(text, size));
        FUZZ_CHECK(d.col >= 0);
        char buf[2048];
        size_t need = td_diag_format(&d, buf, sizeof buf);
        FUZZ_CHECK(need > 0 && strlen(buf) < sizeof buf);
        free(text);
        return 0;
    }
    FUZZ_CHECK(call != NULL);
    FUZZ_CHECK(call->nbuffers >= 1 && call->nbuffers <= TD_MAX_BUFFERS);
    FUZZ_CHECK(call->naxes >= 0 && call->naxes <= TD_MAX_AXES);
    FUZZ_CHECK(call->nconfig >= 0 && call->nconfig <= TD_MAX_CONFIG);
    FUZZ_CHECK((unsigned)call->scope < TD_SCOPE_COUNT);
    check_name(call->op, sizeof call->op);
    check_name(call->target, sizeof call->target);
    check_name(call->arch, sizeof call->arch);
    check_name(call->dispatch, sizeof call->dispatch);
    for (int i = 0; i < call->nbuffers; i++) {
        const td_buffer *b = &call->buffers[i];
        check_name(b->name, sizeof b->name);
        check_name(b->scope, sizeof b->scope);
        check_name(b->layout_text, sizeof b->layout_text);
        FUZZ_CHECK((unsigned)b->dtype < TD_DTYPE_COUNT);
        FUZZ_CHECK(b->ndim >= 1 && b->ndim <= TD_MAX_RANK);
        for (int k = 0; k < b->ndim; k++)
            FUZZ_CHECK(b->shape[k] >= 1 && b->shape[k] <= TD_MAX_EXTENT);
        if (b->has_layout) {
            char lay[512];
            td_layout_format(&b->layout, lay, sizeof lay);
        }
    }
    for (int i = 0; i < call->nconfig; i++) {
        check_name(call->config[i].key, sizeof call->config[i].key);
        check_name(call->config[i].s, sizeof call->config[i].s);
        FUZZ_CHECK(td_call_config(call, call->config[i].key) != NULL);
    }
    check_region(call, &call->dst);
    FUZZ_CHECK(td_call_dst_buffer(call) == &call->buffers[call->dst.buffer]);
    /* Operands: call->src mirrors a first source that is a region and has
     * buffer -1 otherwise; scale is never a region. */
    FUZZ_CHECK(call->nsrcs >= 0 && call->nsrcs <= TD_MAX_SRCS);
    for (int i = 0; i < call->nsrcs; i++)
        check_operand(call, &call->srcs[i], false);
    check_operand(call, &call->bias, true);
    check_operand(call, &call->scale, true);
    FUZZ_CHECK(call->scale.kind != TD_OPERAND_REGION);
    if (call->nsrcs > 0 && call->srcs[0].kind == TD_OPERAND_REGION) {
        FUZZ_CHECK(memcmp(&call->src, &call->srcs[0].region,
                          sizeof call->src) == 0);
        FUZZ_CHECK(td_call_src_buffer(call) ==
                   &call->buffers[call->src.buffer]);
    } else {
        FUZZ_CHECK(call->src.buffer == -1);
        FUZZ_CHECK(td_call_src_buffer(call) == NULL);
    }

    int red[TD_MAX_RANK], spa[TD_MAX_RANK], nr = -1, ns = -1;
    char why[256];
    if (td_call_axes(call, red, &nr, spa, &ns, why, sizeof why) == 0)
        FUZZ_CHECK(nr >= 0 && ns >= 0 && nr + ns == call->src.ndim);

    for (int form = TD_SCRIPT_AUTO; form <= TD_SCRIPT_OPERANDS; form++) {
        char small[64];
        size_t n = td_call_format_script_as(call, (td_script_form)form, small,
                                            sizeof small);
        FUZZ_CHECK(n > 0 && strlen(small) == (n < sizeof small
                                                  ? n
                                                  : sizeof small - 1));
    }
    char tiny[4];
    size_t need = td_call_format_script(call, tiny, sizeof tiny);
    FUZZ_CHECK(strlen(tiny) < sizeof tiny);
    char *script = malloc(need + 1);
    FUZZ_CHECK(script != NULL);
    FUZZ_CHECK(td_call_format_script(call, script, need + 1) == need);
    FUZZ_CHECK(strlen(script) == need);
    free(script);

    (void)td_call_config_bool(call, "x", false);
    (void)td_call_config_int(call, "x", 0);
    td_call_free(call);
    free(text);
    return 0;
}
