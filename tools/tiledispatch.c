/*
 * tiledispatch: the command line.  Written against the public API only
 * (tiledispatch.h), like Lua's lua.c over lua.h.
 *
 * Exit codes (contract section 5): 0 success; 1 no variant matched (table
 * on stderr, or on stdout for `explain`); 2 bad input or usage; 3 internal
 * error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tiledispatch.h"
#include "tiledispatch/td_kernel.h"

enum {
    EXIT_OK = 0,
    EXIT_NOMATCH = 1,
    EXIT_USAGE = 2,
    EXIT_INTERNAL = 3
};

#define MAX_RULE_FILES 64

typedef struct options {
    const char *cmd;
    const char *inputs[MAX_RULE_FILES]; /* positional arguments */
    int ninputs;
    const char *rules[MAX_RULE_FILES];
    int nrules;
    const char *plugins[MAX_RULE_FILES];
    int nplugins;
    const char *arch;
    const char *lang;
    const char *out;
    const char *format;
    bool json;
    bool no_default_rules; /* --no-default-rules: start from an empty table */
    bool together;         /* validate --together: one combined load */
    bool help;             /* -h/--help: the usage of cmd, or of all */
} options;

static const char *const usage_text =
    "usage: tiledispatch COMMAND [ARGS] [OPTIONS]\n"
    "\n"
    "commands:\n"
    "  help [COMMAND]               this text, or the usage of one command\n"
    "  dispatch CALL.yaml           print the variant chosen for the call\n"
    "  explain  CALL.yaml [--json]  every candidate and why it was or was not "
    "chosen\n"
    "  emit     CALL.yaml [--lang cuda|tirx]\n"
    "                               print the lowered code for the call\n"
    "  kernel   CALL.yaml [-o OUT.cu]\n"
    "                               write a self-checking CUDA program for the "
    "call\n"
    "  tensor-maps CALL.yaml [--format c|json]\n"
    "                               the host's encode of a TMA call's tensor "
    "maps\n"
    "  rules    [--json]            print the loaded dispatch table in try "
    "order\n"
    "  validate RULES.yaml... [--together]\n"
    "                               check each rules file as a layer over the "
    "built-in\n"
    "                               rules (--together: one combined load)\n"
    "  predicates [--json]          the registered predicates and their "
    "arguments\n"
    "  impls    [--json]            the registered variant modules and the "
    "ops\n"
    "                               the rules bind them to\n"
    "\n"
    "options:\n"
    "  --rules FILE    add FILE as a layer over the built-in rules "
    "(repeatable; layers\n"
    "                  load in order, after those of "
    "TILEDISPATCH_RULES=a.yaml:b.yaml);\n"
    "                  an entry with 'override: true' changes an earlier "
    "one\n"
    "  --no-default-rules\n"
    "                  start from an empty table instead of the built-in "
    "rules\n"
    "  --plugin PATH   load a variant-module plugin (a shared object) before "
    "the\n"
    "                  rules (repeatable); TILEDISPATCH_PLUGINS=a.so:b.so "
    "adds more\n"
    "  --arch sm_NN    override the call's arch\n"
    "  --lang L        emit language: cuda (default) or tirx\n"
    "  --json          machine-readable output (explain, rules, predicates, "
    "impls);\n"
    "                  for dispatch, emit and kernel the same as --format "
    "json\n"
    "  --format F      explain table: text (default), tvm (upstream TVM's "
    "table)\n"
    "                  or json; also for the table a failed dispatch prints;\n"
    "                  tensor-maps: c (default) or json\n"
    "  -o FILE         output file (kernel; default stdout)\n"
    "  -h, --help      this text (COMMAND --help: that command's usage);\n"
    "  --version       the version\n"
    "  Options take their value as '--opt VALUE' or '--opt=VALUE'; a CALL.yaml "
    "of\n"
    "  '-' is read from standard input.\n"
    "\n"
    "exit codes: 0 ok, 1 no variant matched, 2 bad input or usage, 3 "
    "internal error\n";

/* The values of --format and --lang. */
static const char *const formats[] = {"text", "tvm", "json"};
static const char *const langs[] = {"cuda", "tirx"};
static const char *const map_formats[] = {"c", "json"};

/* "--format 'jsn': expected text, tvm or json (did you mean 'json'?)". */
static int bad_value(const char *opt, const char *value,
                     const char *const *valid, size_t n)
{
    fprintf(stderr, "tiledispatch: %s '%s': expected ", opt, value);
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 == n ? " or " : ", ",
                valid[i]);
    const char *best = td_suggest(value, valid, n);
    if (best != NULL)
        fprintf(stderr, " (did you mean '%s'?)", best);
    fputs("\nTry 'tiledispatch --help'.\n", stderr);
    return EXIT_USAGE;
}

/* Maps a library error to the command line's exit code. */
static int exit_code_for(int err)
{
    if (err == TD_OK)
        return EXIT_OK;
    if (err == TD_ENOMATCH)
        return EXIT_NOMATCH;
    return td_err_is_input(err) ? EXIT_USAGE : EXIT_INTERNAL;
}

static int report(const td_diag *diag, int err)
{
    char buf[2048];
    if (diag->code == 0 && diag->msg[0] == '\0') {
        fprintf(stderr, "tiledispatch: error: %s\n", td_strerror(err));
    } else {
        /* Messages about a loaded call were raised without its text. */
        td_diag d = *diag;
        td_diag_fill_source_line(&d, NULL, 0);
        td_diag_format(&d, buf, sizeof buf);
        fputs(buf, stderr);
    }
    return exit_code_for(err);
}

static int usage_error(const char *fmt, const char *arg)
{
    fputs("tiledispatch: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs("\nTry 'tiledispatch --help'.\n", stderr);
    return EXIT_USAGE;
}

static const char *const commands[] = {
    "dispatch", "explain",    "emit",  "kernel", "tensor-maps",
    "rules",    "validate",   "predicates", "impls", "help"};

/* One usage per command, for `tiledispatch help CMD` and `CMD --help`
 * (same order as commands[]). */
static const char *const command_usage[] = {
    "usage: tiledispatch dispatch CALL.yaml [--rules FILE]... [--plugin "
    "PATH]...\n"
    "                             [--arch sm_NN] [--format F | --json]\n"
    "Prints the name of the variant chosen for the call.  When none "
    "matches, the\n"
    "explain table goes to stderr (--format text|tvm|json) and the exit "
    "code is 1.\n",
    "usage: tiledispatch explain CALL.yaml [--json | --format text|tvm|json]"
    "\n"
    "                            [--rules FILE]... [--plugin PATH]... "
    "[--arch sm_NN]\n"
    "Prints every candidate of the call's op and target, in try order, and "
    "why it\n"
    "was or was not chosen.  Exit 1 when none matches.\n",
    "usage: tiledispatch emit CALL.yaml [--lang cuda|tirx] [--rules "
    "FILE]...\n"
    "                         [--plugin PATH]... [--arch sm_NN] [--format F "
    "| --json]\n"
    "Prints the code the chosen variant lowers the call to (CUDA by "
    "default).\n",
    "usage: tiledispatch kernel CALL.yaml [-o OUT.cu] [--rules FILE]... "
    "[--plugin PATH]...\n"
    "                           [--arch sm_NN] [--format F | --json]\n"
    "Writes a self-checking CUDA program for the call (stdout by "
    "default).\n",
    "usage: tiledispatch tensor-maps CALL.yaml [--format c|json | --json]\n"
    "                                [--rules FILE]... [--plugin PATH]... "
    "[--arch sm_NN]\n"
    "Prints the tensor maps of the call's lowering as the host builds them: "
    "C (the\n"
    "default), a static function NAME_encode(CUtensorMap *, void "
    "*global_base) per\n"
    "map that calls cuTensorMapEncodeTiled (link with -lcuda), or one JSON "
    "array.\n"
    "A call without a TMA copy has none: a comment line, or [], and exit "
    "0.\n",
    "usage: tiledispatch rules [--json] [--rules FILE]... "
    "[--no-default-rules]\n"
    "                          [--plugin PATH]...\n"
    "Prints the loaded dispatch table, each op and target's variants in try "
    "order.\n",
    "usage: tiledispatch validate RULES.yaml... [--together] "
    "[--no-default-rules]\n"
    "                             [--plugin PATH]...\n"
    "Checks each file as a layer over the built-in rules (--together: all "
    "in one\n"
    "load).  A complete table (a file that starts like rules/rules.yaml, "
    "with\n"
    "'# tiledispatch default dispatch table') is checked in place of the "
    "built-in\n"
    "rules.  Prints 'FILE: ok, N entries' per file; exit 2 on the first "
    "error.\n",
    "usage: tiledispatch predicates [--json] [--plugin PATH]... [--rules "
    "FILE]...\n"
    "Lists the registered predicates and their arguments.  When the rules "
    "fail to\n"
    "load, the error goes to stderr, the list is still printed and the exit "
    "code is 2.\n",
    "usage: tiledispatch impls [--json] [--plugin PATH]... [--rules "
    "FILE]...\n"
    "Lists the registered variant modules and the ops the rules bind them "
    "to.  When\n"
    "the rules fail to load, the error goes to stderr, the modules are "
    "still listed\n"
    "and the exit code is 2.\n",
    "usage: tiledispatch help [COMMAND]\n"
    "Prints the usage of all commands, or of one.\n",
};

static int command_index(const char *cmd)
{
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(cmd, commands[i]) == 0)
            return (int)i;
    return -1;
}

static int unknown_command(const char *cmd)
{
    const char *best =
        td_suggest(cmd, commands, sizeof commands / sizeof *commands);
    fprintf(stderr, "tiledispatch: unknown command '%s'\n", cmd);
    if (best != NULL)
        fprintf(stderr, "Did you mean '%s'?\n", best);
    fputs("Try 'tiledispatch --help'.\n", stderr);
    return EXIT_USAGE;
}

/* The options that take a value. */
static const char *const valued[] = {"--rules", "--plugin", "--arch",
                                     "--lang",  "--format", "-o"};

/* Every option, for the "did you mean" of an unknown one. */
static const char *const all_options[] = {
    "--rules", "--plugin",           "--arch",     "--lang",
    "--format", "--json",            "--no-default-rules",
    "--together", "--help",          "--version"};

static int unknown_option(const char *a)
{
    char name[64];
    const char *eq = strchr(a, '=');
    size_t n = eq != NULL ? (size_t)(eq - a) : strlen(a);
    if (n >= sizeof name)
        n = sizeof name - 1;
    memcpy(name, a, n);
    name[n] = '\0';
    const char *best = td_suggest(
        name, all_options, sizeof all_options / sizeof *all_options);
    fprintf(stderr, "tiledispatch: unknown option '%s'\n", a);
    if (best != NULL)
        fprintf(stderr, "Did you mean '%s'?\n", best);
    fputs("Try 'tiledispatch --help'.\n", stderr);
    return EXIT_USAGE;
}

/* Prints the usage of `cmd` (all of it for NULL or "help"). */
static int print_help(const char *cmd, FILE *to)
{
    int k = cmd != NULL ? command_index(cmd) : -1;
    fputs(k >= 0 ? command_usage[k] : usage_text, to);
    return EXIT_OK;
}

/* Parses argv into opts; returns -1 to go on, else an exit code. */
static int parse_args(int argc, char **argv, options *opts)
{
    bool only_args = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_args || a[0] != '-' || strcmp(a, "-") == 0) {
            if (opts->cmd == NULL) {
                opts->cmd = a;
            } else {
                if (opts->ninputs == MAX_RULE_FILES)
                    return usage_error("too many arguments (limit %s)", "64");
                opts->inputs[opts->ninputs++] = a;
            }
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_args = true;
            continue;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            /* Answered once the command (if any) is known. */
            opts->help = true;
            continue;
        }
        if (strcmp(a, "--version") == 0) {
            printf("tiledispatch %s\n", td_version());
            return EXIT_OK;
        }
        if (strcmp(a, "--json") == 0) {
            opts->json = true;
            continue;
        }
        if (strcmp(a, "--no-default-rules") == 0) {
            opts->no_default_rules = true;
            continue;
        }
        if (strcmp(a, "--together") == 0) {
            opts->together = true;
            continue;
        }
        /* --opt VALUE or --opt=VALUE */
        const char *name = NULL, *value = NULL;
        char head[16];
        const char *eq = strchr(a, '=');
        size_t nlen = eq != NULL ? (size_t)(eq - a) : strlen(a);
        for (size_t k = 0; k < sizeof valued / sizeof *valued; k++)
            if (strlen(valued[k]) == nlen && strncmp(a, valued[k], nlen) == 0)
                name = valued[k];
        if (name == NULL) {
            if (eq != NULL && nlen < sizeof head) {
                memcpy(head, a, nlen);
                head[nlen] = '\0';
                if (strcmp(head, "--json") == 0 || strcmp(head, "--help") == 0 ||
                    strcmp(head, "--version") == 0 ||
                    strcmp(head, "--together") == 0)
                    return usage_error("option '%s' takes no value", head);
            }
            return unknown_option(a);
        }
        if (eq != NULL) {
            value = eq + 1;
        } else {
            if (i + 1 >= argc)
                return usage_error("option '%s' needs a value", name);
            value = argv[++i];
        }
        if (value[0] == '\0')
            return usage_error("option '%s' needs a non-empty value", name);
        if (strcmp(name, "--rules") == 0) {
            if (opts->nrules == MAX_RULE_FILES)
                return usage_error("too many --rules files (limit %s)", "64");
            opts->rules[opts->nrules++] = value;
        } else if (strcmp(name, "--plugin") == 0) {
            if (opts->nplugins == MAX_RULE_FILES)
                return usage_error("too many --plugin files (limit %s)", "64");
            opts->plugins[opts->nplugins++] = value;
        } else if (strcmp(name, "--arch") == 0) {
            opts->arch = value;
        } else if (strcmp(name, "--lang") == 0) {
            opts->lang = value;
        } else if (strcmp(name, "--format") == 0) {
            opts->format = value;
        } else {
            opts->out = value;
        }
    }
    if (opts->help && (opts->cmd == NULL || command_index(opts->cmd) >= 0))
        return print_help(opts->cmd, stdout);
    if (opts->cmd == NULL) {
        fputs(usage_text, stderr);
        return EXIT_USAGE;
    }
    if (command_index(opts->cmd) < 0)
        return unknown_command(opts->cmd);
    if (strcmp(opts->cmd, "help") == 0) {
        if (opts->ninputs > 1)
            return usage_error("'%s' takes at most one COMMAND", "help");
        if (opts->ninputs == 1 && command_index(opts->inputs[0]) < 0)
            return unknown_command(opts->inputs[0]);
        return print_help(opts->ninputs == 1 ? opts->inputs[0] : NULL,
                          stdout);
    }
    return -1;
}

/* The registry the options ask for (td_registry_load: the built-ins,
 * the plugins of TILEDISPATCH_PLUGINS then --plugin, the built-in rules
 * unless --no-default-rules, the layers of TILEDISPATCH_RULES then
 * --rules); validate leaves TILEDISPATCH_RULES out, its files are the
 * layers it checks. */
static int load_registry(const options *opts, bool env_rules,
                         td_registry **out)
{
    td_load_options lo = {
        .plugins = opts->plugins,
        .nplugins = (size_t)opts->nplugins,
        .rules = opts->rules,
        .nrules = (size_t)opts->nrules,
        .no_default_rules = opts->no_default_rules,
        .no_env_rules = !env_rules,
    };
    td_diag d;
    td_diag_clear(&d);
    int err = td_registry_load(&lo, out, &d);
    return err != 0 ? report(&d, err) : -1;
}

/* The registry of `predicates` and `impls`: as load_registry, but when the
 * rules fail to load (and the plugins did), reports the error, says so and
 * returns the registry without rules in *out with the exit code: those
 * listings are how one finds the names a broken rules file needs. */
static int load_for_listing(const options *opts, td_registry **out)
{
    td_load_options lo = {
        .plugins = opts->plugins,
        .nplugins = (size_t)opts->nplugins,
        .rules = opts->rules,
        .nrules = (size_t)opts->nrules,
        .no_default_rules = opts->no_default_rules,
    };
    td_diag d;
    td_diag_clear(&d);
    int err = td_registry_load(&lo, out, &d);
    if (err == 0)
        return -1;
    int rc = report(&d, err);
    /* Again without any rules: what remains to fail is a plugin. */
    lo.rules = NULL;
    lo.nrules = 0;
    lo.no_default_rules = true;
    lo.no_env_rules = true;
    td_diag_clear(&d);
    if (td_registry_load(&lo, out, &d) != 0) {
        *out = NULL;
        return rc;
    }
    fprintf(stderr, "tiledispatch: warning: the rules did not load; listing "
                    "what is registered without them\n");
    /* main lists *out only when the code is not -1. */
    return rc;
}

/* Reads all of standard input (at most 1 MiB, the call-file limit). */
static int read_stdin(char **out, size_t *len)
{
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    if (buf == NULL)
        return -1;
    for (;;) {
        if (n == cap) {
            if (cap >= ((size_t)1 << 20) + 1) {
                free(buf);
                errno = EFBIG;
                return -1;
            }
            cap *= 2;
            char *nb = realloc(buf, cap);
            if (nb == NULL) {
                free(buf);
                return -1;
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, stdin);
        n += got;
        if (got == 0) {
            if (ferror(stdin)) {
                free(buf);
                return -1;
            }
            break;
        }
    }
    *out = buf;
    *len = n;
    return 0;
}

/* Loads the one call file of dispatch/explain/emit/kernel. */
static int load_call(const options *opts, td_call **out)
{
    if (opts->ninputs != 1)
        return usage_error("'%s' takes exactly one CALL.yaml", opts->cmd);
    td_diag d;
    td_diag_clear(&d);
    int err;
    if (strcmp(opts->inputs[0], "-") == 0) {
        char *text = NULL;
        size_t len = 0;
        if (read_stdin(&text, &len) != 0) {
            fprintf(stderr, "tiledispatch: error: cannot read standard "
                            "input: %s\n",
                    strerror(errno));
            return EXIT_USAGE;
        }
        err = td_call_parse("<stdin>", text, len, out, &d);
        free(text);
    } else {
        err = td_call_load_file(opts->inputs[0], out, &d);
    }
    if (err != 0)
        return report(&d, err);
    if (opts->arch != NULL) {
        err = td_call_set_arch(*out, opts->arch);
        if (err != 0) {
            td_call_free(*out);
            *out = NULL;
            return usage_error("--arch '%s': expected sm_NN (e.g. sm_90a)",
                               opts->arch);
        }
    }
    return -1;
}

/* The table style of --format (text unless tvm; --json wins). */
static td_explain_style g_style = TD_EXPLAIN_TEXT;

/* Prints the explanation of a failed dispatch on stderr. */
static int print_failure_table(const td_registry *reg, const td_call *call,
                               FILE *to)
{
    td_explain *ex = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_explain_call(reg, call, &ex, &d);
    if (err != 0)
        return report(&d, err);
    char *text = NULL;
    err = td_explain_format(ex, g_style, &text);
    td_explain_free(ex);
    if (err != 0) {
        fprintf(stderr, "tiledispatch: error: %s\n", td_strerror(err));
        return EXIT_INTERNAL;
    }
    fputs(text, to);
    td_free(text);
    return EXIT_NOMATCH;
}

/* Dispatches; on success fills res, else prints why and returns the exit
 * code. */
static int run_dispatch(const td_registry *reg, const td_call *call,
                        td_dispatch_result *res)
{
    td_diag d;
    td_diag_clear(&d);
    int err = td_dispatch(reg, call, res, &d);
    if (err == 0)
        return -1;
    if (err == TD_ENOMATCH)
        return print_failure_table(reg, call, stderr);
    return report(&d, err);
}

static int cmd_dispatch(const td_registry *reg, const td_call *call)
{
    td_dispatch_result res;
    int rc = run_dispatch(reg, call, &res);
    if (rc >= 0)
        return rc;
    printf("%s\n", res.variant);
    td_ir_free(res.ir);
    return EXIT_OK;
}

static int cmd_explain(const td_registry *reg, const td_call *call,
                       bool json)
{
    td_explain *ex = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_explain_call(reg, call, &ex, &d);
    if (err != 0)
        return report(&d, err);
    char *text = NULL;
    err = td_explain_format(ex, json ? TD_EXPLAIN_JSON : g_style, &text);
    bool matched = td_explain_selected(ex) != NULL;
    td_explain_free(ex);
    if (err != 0) {
        fprintf(stderr, "tiledispatch: error: %s\n", td_strerror(err));
        return EXIT_INTERNAL;
    }
    fputs(text, stdout);
    td_free(text);
    return matched ? EXIT_OK : EXIT_NOMATCH;
}

/* The tensor maps of a TMA copy as comment lines: TIRx's host statements
 * ("# host: ..."), CUDA's kernel parameters ("// kernel parameter: ..."). */
static void print_maps(const char *maps, td_lang lang)
{
    const char *p = maps;
    bool cuda = lang == TD_LANG_CUDA;
    while (*p != '\0') {
        size_t n = strcspn(p, cuda ? ",\n" : "\n");
        printf("%s%.*s\n", cuda ? "// kernel parameter: " : "# host: ",
               (int)n, p);
        p += n;
        while (*p == '\n' || *p == ',' || (cuda && *p == ' '))
            p++;
    }
}

static int cmd_emit(const td_registry *reg, const td_call *call,
                    const char *lang_name)
{
    td_lang lang = TD_LANG_CUDA;
    if (lang_name != NULL && td_lang_parse(lang_name, &lang) != 0)
        return bad_value("--lang", lang_name, langs,
                         sizeof langs / sizeof *langs);
    td_dispatch_result res;
    int rc = run_dispatch(reg, call, &res);
    if (rc >= 0)
        return rc;
    char *body = NULL, *prelude = NULL, *maps = NULL;
    int err = td_ir_print(res.ir, lang, 0, &body, &prelude);
    /* A TMA copy's tensor maps live outside the body (kernel parameters
     * encoded by the host): shown as comments ahead of it. */
    if (err == 0 && td_ir_tensor_map_count(res.ir) > 0)
        err = td_ir_print_tensor_maps(res.ir, lang, &maps);
    td_ir_free(res.ir);
    if (err != 0) {
        td_free(body);
        td_free(prelude);
        fprintf(stderr, "tiledispatch: error: printing failed: %s\n",
                td_strerror(err));
        return EXIT_INTERNAL;
    }
    if (prelude != NULL && prelude[0] != '\0')
        printf("%s\n", prelude);
    if (maps != NULL)
        print_maps(maps, lang);
    fputs(body, stdout);
    td_free(body);
    td_free(prelude);
    td_free(maps);
    return EXIT_OK;
}

/* The tensor maps of the call's lowering as host C or JSON; a call
 * without maps prints that it has none (exit 0: a script can take any
 * call), and says so on stderr. */
static int cmd_tensor_maps(const td_registry *reg, const td_call *call,
                           td_tmap_host_form form)
{
    td_dispatch_result res;
    int rc = run_dispatch(reg, call, &res);
    if (rc >= 0)
        return rc;
    char *text = NULL;
    int n = td_ir_tensor_map_count(res.ir);
    int err = td_ir_print_tensor_map_host(res.ir, form, &text);
    td_ir_free(res.ir);
    if (err != 0) {
        fprintf(stderr, "tiledispatch: error: printing failed: %s\n",
                td_strerror(err));
        return EXIT_INTERNAL;
    }
    if (n == 0)
        fprintf(stderr, "tiledispatch: note: variant %s uses no tensor "
                        "map\n", res.variant);
    fputs(text, stdout);
    td_free(text);
    return EXIT_OK;
}

static int cmd_kernel(const td_registry *reg, const td_call *call,
                      const char *out_path)
{
    char *program = NULL;
    td_diag d;
    td_diag_clear(&d);
    int err = td_kernel_program(reg, call, &program, &d);
    if (err == TD_ENOMATCH)
        return print_failure_table(reg, call, stderr);
    if (err != 0)
        return report(&d, err);
    FILE *f = stdout;
    if (out_path != NULL) {
        f = fopen(out_path, "w");
        if (f == NULL) {
            td_free(program);
            fprintf(stderr, "tiledispatch: error: cannot write %s: %s\n",
                    out_path, strerror(errno));
            return EXIT_USAGE;
        }
    }
    fputs(program, f);
    td_free(program);
    if (f != stdout && fclose(f) != 0) {
        fprintf(stderr, "tiledispatch: error: cannot write %s: %s\n",
                out_path, strerror(errno));
        return EXIT_INTERNAL;
    }
    return EXIT_OK;
}

/* Prints one of the library's listings (rules, predicates, impls). */
static int print_listing(const td_registry *reg, bool json,
                         int (*list)(const td_registry *, td_list_style,
                                     char **))
{
    char *text = NULL;
    int err = list(reg, json ? TD_LIST_JSON : TD_LIST_TEXT, &text);
    if (err != 0) {
        fprintf(stderr, "tiledispatch: error: %s\n", td_strerror(err));
        return EXIT_INTERNAL;
    }
    fputs(text, stdout);
    td_free(text);
    return EXIT_OK;
}

/* "FILE: ok, N entries" for one loaded layer. */
static void print_layer_ok(const td_rules_layer *l)
{
    printf("%s: ok, %zu entr%s", l->file, l->nentries,
           l->nentries == 1 ? "y" : "ies");
    if (l->noverrides > 0)
        printf(" (%zu override%s)", l->noverrides,
               l->noverrides == 1 ? "" : "s");
    putchar('\n');
}

/* The last n layers of reg, one line each. */
static int print_last_layers(const td_registry *reg, size_t n)
{
    size_t total = td_registry_rules_layers(reg, NULL, 0);
    td_rules_layer *layers = calloc(total ? total : 1, sizeof *layers);
    if (layers == NULL)
        return EXIT_INTERNAL;
    td_registry_rules_layers(reg, layers, total);
    for (size_t i = total - n; i < total; i++)
        print_layer_ok(&layers[i]);
    free(layers);
    return EXIT_OK;
}

/* Whether the file at path starts with the first line of the built-in
 * rules ("# tiledispatch default dispatch table ..."): the mark of a
 * complete table, rules/rules.yaml or a copy of it. */
static bool is_complete_table(const char *path)
{
    size_t len = 0;
    const char *builtin = td_default_rules(&len);
    const char *nl = memchr(builtin, '\n', len);
    size_t head = nl != NULL ? (size_t)(nl - builtin) : len;
    if (head == 0)
        return false;
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return false;
    char line[256];
    bool same = head < sizeof line && fgets(line, sizeof line, f) != NULL &&
                strncmp(line, builtin, head) == 0 &&
                (line[head] == '\n' || line[head] == '\r' ||
                 line[head] == '\0');
    fclose(f);
    return same;
}

/* Each file on its own layer over the built-in rules (or an empty table),
 * or with --together all of them in one load. */
static int cmd_validate(const options *opts)
{
    if (opts->ninputs == 0)
        return usage_error("'%s' needs at least one RULES.yaml", opts->cmd);
    int rc = EXIT_OK;
    size_t nfiles = opts->together ? 1 : (size_t)opts->ninputs;
    for (size_t i = 0; i < nfiles; i++) {
        td_registry *reg = NULL;
        const char *const *paths = opts->together ? opts->inputs
                                                  : &opts->inputs[i];
        /* A complete table (the built-in file, edited or installed) is
         * checked in place of the built-in rules, not over them, where
         * every entry would be its own duplicate. */
        options o = *opts;
        if (is_complete_table(paths[0]))
            o.no_default_rules = true;
        int brc = load_registry(&o, false, &reg);
        if (brc >= 0)
            return brc;
        size_t npaths = opts->together ? (size_t)opts->ninputs : 1;
        td_diag d;
        td_diag_clear(&d);
        int err = td_registry_add_rules(reg, paths, npaths, &d);
        int frc = err == 0 ? print_last_layers(reg, npaths) : report(&d, err);
        td_registry_free(reg);
        /* The worst outcome wins: internal errors over bad input. */
        if (frc > rc)
            rc = frc;
    }
    return rc;
}

int main(int argc, char **argv)
{
    options opts;
    memset(&opts, 0, sizeof opts);
    int rc = parse_args(argc, argv, &opts);
    if (rc >= 0)
        return rc;

    const char *cmd = opts.cmd;
    bool validate = strcmp(cmd, "validate") == 0;
    bool rules = strcmp(cmd, "rules") == 0;
    bool listing = strcmp(cmd, "predicates") == 0 || strcmp(cmd, "impls") == 0;
    if ((rules || listing) && opts.ninputs != 0)
        return usage_error("'%s' takes no file arguments (use --rules FILE)",
                           cmd);
    /* Options that mean nothing to a command are mistakes, not no-ops. */
    if (opts.json && validate)
        return usage_error("--json applies to a call's commands, rules, "
                           "predicates and impls, not '%s'",
                           cmd);
    bool maps = strcmp(cmd, "tensor-maps") == 0;
    td_tmap_host_form map_form = TD_TMAP_HOST_C;
    if (maps && (opts.format != NULL || opts.json)) {
        /* c or json; the failure table follows (text for c). */
        const char *f = opts.format != NULL ? opts.format : "json";
        if (strcmp(f, "c") == 0) {
            map_form = TD_TMAP_HOST_C;
        } else if (strcmp(f, "json") == 0) {
            map_form = TD_TMAP_HOST_JSON;
            g_style = TD_EXPLAIN_JSON;
        } else {
            return bad_value("--format", f, map_formats,
                             sizeof map_formats / sizeof *map_formats);
        }
        if (opts.json && map_form != TD_TMAP_HOST_JSON)
            return usage_error("--json and --format %s contradict each "
                               "other",
                               opts.format);
    } else if (opts.format != NULL) {
        if (validate || rules || listing)
            return usage_error("--format applies to explain and to the "
                               "failure table of a call, not '%s'",
                               cmd);
        if (td_explain_style_parse(opts.format, &g_style) != 0)
            return bad_value("--format", opts.format, formats,
                             sizeof formats / sizeof *formats);
        if (opts.json && g_style != TD_EXPLAIN_JSON)
            return usage_error("--json and --format %s contradict each "
                               "other",
                               opts.format);
    }
    /* For a call's commands --json is --format json. */
    if (opts.json && !rules && !listing)
        g_style = TD_EXPLAIN_JSON;
    if (opts.lang != NULL && strcmp(cmd, "emit") != 0)
        return usage_error("--lang applies to emit, not '%s'", cmd);
    if (opts.out != NULL && strcmp(cmd, "kernel") != 0)
        return usage_error("-o applies to kernel, not '%s'", cmd);
    if (opts.together && !validate)
        return usage_error("--together applies to validate, not '%s'", cmd);
    if (opts.arch != NULL && (validate || rules || listing))
        return usage_error("--arch applies to a call, not to '%s'", cmd);
    if (opts.nrules != 0 && validate)
        return usage_error("'%s' checks the files it is given; --rules does "
                           "not apply",
                           cmd);

    td_registry *reg = NULL;
    td_call *call = NULL;
    if (validate) {
        rc = cmd_validate(&opts);
    } else if (listing) {
        rc = load_for_listing(&opts, &reg);
    } else {
        rc = load_registry(&opts, true, &reg);
        if (rc < 0 && !rules)
            rc = load_call(&opts, &call);
    }
    if (rc < 0) {
        if (strcmp(cmd, "dispatch") == 0)
            rc = cmd_dispatch(reg, call);
        else if (strcmp(cmd, "explain") == 0)
            rc = cmd_explain(reg, call, opts.json);
        else if (strcmp(cmd, "emit") == 0)
            rc = cmd_emit(reg, call, opts.lang);
        else if (strcmp(cmd, "kernel") == 0)
            rc = cmd_kernel(reg, call, opts.out);
        else if (maps)
            rc = cmd_tensor_maps(reg, call, map_form);
        else if (strcmp(cmd, "predicates") == 0)
            rc = print_listing(reg, opts.json, td_registry_list_predicates);
        else if (strcmp(cmd, "impls") == 0)
            rc = print_listing(reg, opts.json, td_registry_list_impls);
        else
            rc = print_listing(reg, opts.json, td_registry_list_rules);
    } else if (listing && reg != NULL) {
        /* The rules did not load: still list what is registered (the
         * names one needs to fix them), but fail. */
        int lrc = print_listing(reg, opts.json,
                                strcmp(cmd, "impls") == 0
                                    ? td_registry_list_impls
                                    : td_registry_list_predicates);
        rc = lrc > rc ? lrc : rc;
    }
    td_call_free(call);
    td_registry_free(reg);
    /* A full disk or closed pipe must not pass for success. */
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "tiledispatch: error: cannot write the output: %s\n",
                strerror(errno));
        return EXIT_INTERNAL;
    }
    return rc;
}
