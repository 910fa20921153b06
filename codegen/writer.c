/*
 * The indenting line writer the printers share.  Lines go to a td_buf
 * whose error flag is sticky, so printers check once at the end; the
 * writer tracks the block depth so an unbalanced printer is caught
 * (TD_EINTERNAL) instead of producing misindented code.
 */
#include <stdarg.h>
#include <string.h>

#include "codegen_internal.h"

void td__w_init(td__writer *w, td_buf *out, td_lang lang, int base)
{
    memset(w, 0, sizeof *w);
    w->out = out;
    w->lang = lang;
    w->base = base;
    w->unit = lang == TD_LANG_TIRX ? 4 : 2;
}

static void indent(td__writer *w)
{
    /* Sixteen spaces at a time keeps deep bodies cheap without a buffer
     * that could overflow. */
    static const char spaces[] = "                ";
    long n = (long)(w->base + w->depth) * w->unit;
    while (n > 0) {
        size_t k = n > 16 ? 16 : (size_t)n;
        td__buf_append(w->out, spaces, k);
        n -= (long)k;
    }
}

static void vline(td__writer *w, const char *suffix, const char *fmt,
                  va_list ap)
{
    indent(w);
    td__buf_vprintf(w->out, fmt, ap);
    td__buf_puts(w->out, suffix);
    td__buf_append(w->out, "\n", 1);
    w->fresh = false;
}

void td__w_line(td__writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(w, "", fmt, ap);
    va_end(ap);
}

void td__w_open(td__writer *w, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vline(w, w->lang == TD_LANG_TIRX ? ":" : " {", fmt, ap);
    va_end(ap);
    w->depth++;
    w->fresh = true;
}

/* A Python block may not be empty. */
static void end_block(td__writer *w)
{
    if (w->lang == TD_LANG_TIRX && w->fresh)
        td__w_line(w, "pass");
}

void td__w_mid(td__writer *w, const char *fmt, ...)
{
    if (w->depth <= 0) {
        w->err = TD_EINTERNAL;
        return;
    }
    end_block(w);
    w->depth--;
    va_list ap;
    va_start(ap, fmt);
    indent(w);
    if (w->lang != TD_LANG_TIRX)
        td__buf_puts(w->out, "} ");
    td__buf_vprintf(w->out, fmt, ap);
    td__buf_puts(w->out, w->lang == TD_LANG_TIRX ? ":\n" : " {\n");
    va_end(ap);
    w->depth++;
    w->fresh = true;
}

void td__w_close(td__writer *w)
{
    if (w->depth <= 0) {
        w->err = TD_EINTERNAL;
        return;
    }
    end_block(w);
    w->depth--;
    if (w->lang != TD_LANG_TIRX)
        td__w_line(w, "}");
    w->fresh = false;
}

int td__w_finish(td__writer *w)
{
    if (w->err)
        return w->err;
    if (w->depth != 0)
        return TD_EINTERNAL;
    return w->out->err;
}
