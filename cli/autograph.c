/* autograph: run a program under libautograph, or show its configuration.
 *
 *   autograph [--stats[=FILE.json]] [--log=LEVEL] [--disable] [--] program [args...]
 *   autograph config [--markdown]
 *   autograph report [--markdown] FILE.json [FILE.json ...]
 *   autograph simulate [OPTIONS] TRACE...   (execs autograph-sim: docs/MODEL.md)
 *   autograph trace dump|summary FILE
 *   autograph --help | --version
 *
 * It only sets AUTOGRAPH_* variables and LD_PRELOAD, then execs the program: everything else
 * happens in the library. The option table is the library's own (policy/options.c). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/options.h"
#include "report.h"
#include "tracecmd.h"

#ifndef AG_LIBDIR
#define AG_LIBDIR "/usr/local/lib"
#endif
#ifndef AG_LIBEXECDIR
#define AG_LIBEXECDIR "/usr/local/libexec/autograph"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: autograph [--stats[=FILE.json]] [--log=LEVEL] [--disable] [--] program [args...]\n"
            "       autograph config [--markdown]\n"
            "       autograph report [--markdown] FILE.json [FILE.json ...]\n"
            "       autograph simulate [--costs F] [--json F] [--explain] [--opt K=V]... TRACE...\n"
            "       autograph trace dump|summary FILE\n"
            "       autograph --help | --version\n"
            "\n"
            "Runs program with libautograph preloaded: repeated CUDA launch sequences are\n"
            "replayed as CUDA graphs, without changing the program.\n"
            "\n"
            "  --stats          print what was graphed, at exit, on stderr\n"
            "  --stats=F.json   ... and write it as JSON to F.json\n"
            "  --log=LEVEL      error, warn, info, debug or trace\n"
            "  --disable        intercept and count only: every launch passes through\n"
            "  config           every AUTOGRAPH_* option with its default and current value\n"
            "  report           summary of AUTOGRAPH_STATS files: what was graphed, what\n"
            "                   was not and why, the estimated saving (one file per process)\n"
            "  simulate         replays AUTOGRAPH_TRACE files through the engine over a simulated\n"
            "                   driver and GPU: predicted eager and libautograph times\n"
            "  trace            an AUTOGRAPH_TRACE file, one line per record (dump) or\n"
            "                   counted (summary)\n"
            "\n"
            "All options are also environment variables; see `autograph config`.\n");
}

/* The library next to us: <bin>/../lib (installed), <bin> (build tree), or AG_LIBDIR. */
static int find_lib(char *out, size_t n)
{
    const char *env = getenv("AUTOGRAPH_LIB");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return access(out, R_OK);
    }
    char exe[PATH_MAX - 32];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = 0;
            snprintf(out, n, "%.*s/../lib/libautograph.so", (int)(n - 32), exe);
            if (!access(out, R_OK))
                return 0;
            snprintf(out, n, "%.*s/libautograph.so", (int)(n - 32), exe);
            if (!access(out, R_OK))
                return 0;
        }
    }
    snprintf(out, n, "%s/libautograph.so", AG_LIBDIR);
    return access(out, R_OK);
}

/* `autograph simulate` is a program of its own (the engine built with -DAG_SIM, see
 * cli/simulate.c for why): <bin>/autograph-sim (build tree), <bin>/../libexec/autograph
 * (installed), or AG_LIBEXECDIR; AUTOGRAPH_SIM overrides. */
static int simulate(int argc, char **argv)
{
    char path[PATH_MAX];
    const char *env = getenv("AUTOGRAPH_SIM");
    int found = 0;
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        found = !access(path, X_OK);
    }
    char exe[PATH_MAX - 64];
    ssize_t len = found ? -1 : readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        snprintf(path, sizeof path, "%s/autograph-sim", exe);
        found = !access(path, X_OK);
        if (!found) {
            snprintf(path, sizeof path, "%s/../libexec/autograph/autograph-sim", exe);
            found = !access(path, X_OK);
        }
    }
    if (!found) {
        snprintf(path, sizeof path, "%s/autograph-sim", AG_LIBEXECDIR);
        found = !access(path, X_OK);
    }
    if (!found) {
        fprintf(stderr, "autograph: cannot find autograph-sim (tried %s; `make sim` builds it); "
                        "set AUTOGRAPH_SIM\n", path);
        return 127;
    }
    argv[0] = path;
    execv(path, argv);
    fprintf(stderr, "autograph: cannot run %s: %s\n", path, strerror(errno));
    return 127;
}

static const char *type_name(const ag_opt_desc *d)
{
    switch (d->type) {
    case AG_T_BOOL: return "bool";
    case AG_T_INT: return "integer";
    case AG_T_SIZE: return "size";
    case AG_T_ENUM: return "choice";
    default: return "string";
    }
}

static int config(int markdown)
{
    if (markdown) {
        printf("| variable | type | default | meaning |\n|---|---|---|---|\n");
        for (int i = 0; i < AG_OPT_COUNT; i++) {
            const ag_opt_desc *d = &ag_opt_table[i];
            printf("| `AUTOGRAPH_%s` | %s | `%s` | %s |\n", d->name, type_name(d),
                   *d->def ? d->def : "\"\"", d->doc);
        }
        return 0;
    }
    printf("%-26s %-10s %-10s %s\n", "variable", "default", "current", "meaning");
    for (int i = 0; i < AG_OPT_COUNT; i++) {
        const ag_opt_desc *d = &ag_opt_table[i];
        char name[64];
        snprintf(name, sizeof name, "AUTOGRAPH_%s", d->name);
        const char *raw = ag_opt_raw((ag_opt_id)i);
        char cur[96];
        if (!raw)
            snprintf(cur, sizeof cur, "(unset)");
        else if (ag_opt_invalid((ag_opt_id)i))
            snprintf(cur, sizeof cur, "\"%s\" (invalid: default used)", raw);
        else
            snprintf(cur, sizeof cur, "%s", *raw ? raw : "\"\"");
        printf("%-26s %-10s %-10s %s\n", name, *d->def ? d->def : "\"\"", cur, d->doc);
    }
    if (ag_opt_launch_blocking())
        printf("CUDA_LAUNCH_BLOCKING is set: the library stays off (every launch passes "
               "through)\n");
    return 0;
}

static int set_checked(ag_opt_id id, const char *value, const char *flag)
{
    long long num;
    const char *str;
    if (ag_opt_parse(id, value, &num, &str)) {
        fprintf(stderr, "autograph: invalid %s value \"%s\"\n", flag, value);
        return -1;
    }
    char name[64];
    snprintf(name, sizeof name, "AUTOGRAPH_%s", ag_opt_table[id].name);
    setenv(name, value, 1);
    return 0;
}

int main(int argc, char **argv)
{
    /* `config` shows the options itself: no "options:" line from the option loader */
    ag_options_set_announce(0);
    if (argc > 1 && !strcmp(argv[1], "report"))
        return ag_report_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "simulate"))
        return simulate(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "trace"))
        return ag_trace_main(argc - 1, argv + 1);
    int i = 1;
    for (; i < argc && argv[i][0] == '-'; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            i++;
            break;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("autograph %s\n", AG_VERSION);
            return 0;
        } else if (!strcmp(a, "--stats")) {
            setenv("AUTOGRAPH_STATS", "1", 1);
        } else if (!strncmp(a, "--stats=", 8)) {
            if (set_checked(AG_OPT_STATS, a + 8, "--stats (a path ending in .json)"))
                return 2;
        } else if (!strncmp(a, "--log=", 6)) {
            if (set_checked(AG_OPT_LOG, a + 6, "--log (error|warn|info|debug|trace)"))
                return 2;
        } else if (!strcmp(a, "--disable")) {
            setenv("AUTOGRAPH_DISABLE", "1", 1);
        } else {
            fprintf(stderr, "autograph: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (i < argc && !strcmp(argv[i], "config") && i == 1)
        return config(i + 1 < argc && !strcmp(argv[i + 1], "--markdown"));
    if (i >= argc) {
        usage(stderr);
        return 2;
    }
    char lib[PATH_MAX];
    if (find_lib(lib, sizeof lib)) {
        fprintf(stderr, "autograph: cannot find libautograph.so (tried %s); set AUTOGRAPH_LIB\n",
                lib);
        return 127;
    }
    const char *old = getenv("LD_PRELOAD");
    if (old && *old) {
        size_t n = strlen(lib) + strlen(old) + 2;
        char *both = malloc(n);
        if (!both)
            return 127;
        snprintf(both, n, "%s:%s", lib, old);
        setenv("LD_PRELOAD", both, 1);
    } else {
        setenv("LD_PRELOAD", lib, 1);
    }
    execvp(argv[i], argv + i);
    fprintf(stderr, "autograph: cannot run %s: %s\n", argv[i], strerror(errno));
    return 127;
}
