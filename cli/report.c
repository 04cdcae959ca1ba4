/* `autograph report`: reads the stats JSON of one or more processes (cli/json.c) and prints
 * what was graphed, what was not and why, and the estimated saving, as aligned text or as
 * Markdown. Every value read from a file is checked for its type and used as a double (never
 * cast to an integer), so that no input can crash it. */
#include "report.h"

#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

#define MAX_FILE (256u << 20)

typedef struct {
    const char *file;
    json_doc doc;
    const json *root, *counters;
} proc;

typedef struct {
    const proc *p;
    const json *s;
    double saved_us, occurrences;
    const char *status;
} seqrow;

/* ---- output ------------------------------------------------------------------------------ */

static int g_md;

static char *sf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *sf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = NULL;
    if (vasprintf(&s, fmt, ap) < 0)
        s = NULL;
    va_end(ap);
    return s ? s : strdup("?");
}

typedef struct {
    int ncols, nrows, cap;
    const char *const *head;
    char **cell;
} table;

static void row(table *t, ...)
{
    if (t->nrows == t->cap) {
        int cap = t->cap ? 2 * t->cap : 16;
        char **c = realloc(t->cell, (size_t)cap * (size_t)t->ncols * sizeof *c);
        if (!c)
            abort();
        t->cell = c;
        t->cap = cap;
    }
    va_list ap;
    va_start(ap, t);
    for (int i = 0; i < t->ncols; i++)
        t->cell[t->nrows * t->ncols + i] = va_arg(ap, char *); /* sf() strings, owned */
    va_end(ap);
    t->nrows++;
}

static void md_cell(const char *s)
{
    for (; *s; s++) {
        if (*s == '|')
            fputc('\\', stdout);
        fputc(*s == '\n' ? ' ' : *s, stdout);
    }
}

static void tprint(table *t, const char *title)
{
    if (g_md)
        printf("\n### %s\n\n", title);
    else
        printf("\n%s\n", title);
    if (!t->nrows) {
        printf(g_md ? "(none)\n" : "  (none)\n");
        goto out;
    }
    if (g_md) {
        for (int i = 0; i < t->ncols; i++)
            printf("| %s ", t->head[i]);
        printf("|\n");
        for (int i = 0; i < t->ncols; i++)
            printf("|---");
        printf("|\n");
        for (int r = 0; r < t->nrows; r++) {
            for (int i = 0; i < t->ncols; i++) {
                printf("| ");
                md_cell(t->cell[r * t->ncols + i]);
                printf(" ");
            }
            printf("|\n");
        }
        goto out;
    }
    int w[16] = { 0 };
    for (int i = 0; i < t->ncols && i < 16; i++) {
        w[i] = (int)strlen(t->head[i]);
        for (int r = 0; r < t->nrows; r++) {
            int l = (int)strlen(t->cell[r * t->ncols + i]);
            w[i] = l > w[i] ? l : w[i];
        }
    }
    /* the last column (names) is left ragged */
    for (int r = -1; r < t->nrows; r++)
        for (int i = 0; i < t->ncols; i++) {
            const char *c = r < 0 ? t->head[i] : t->cell[r * t->ncols + i];
            if (i + 1 < t->ncols)
                printf("  %-*s", w[i], c);
            else
                printf("  %s\n", c);
        }
out:
    for (int i = 0; i < t->nrows * t->ncols; i++)
        free(t->cell[i]);
    free(t->cell);
    t->cell = NULL;
    t->nrows = t->cap = 0;
}

/* ---- kernel names -------------------------------------------------------------------------- */

typedef char *(*demangle_fn)(const char *, char *, size_t *, int *);

/* __cxa_demangle from libstdc++ when it is installed: never a link dependency. */
static demangle_fn demangler(void)
{
    static int tried;
    static demangle_fn fn;
    if (!tried) {
        tried = 1;
        if (!getenv("AUTOGRAPH_REPORT_NO_DEMANGLE")) {
            void *h = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_LOCAL);
            void *sym = h ? dlsym(h, "__cxa_demangle") : NULL;
            memcpy(&fn, &sym, sizeof fn);
        }
    }
    return fn;
}

/* Appends one kernel name (demangled when it is a C++ name) to out. */
static void add_name(char **out, const char *name)
{
    demangle_fn fn = demangler();
    char *d = NULL;
    int st = -1;
    if (fn && !strncmp(name, "_Z", 2))
        d = fn(name, NULL, NULL, &st);
    const char *use = d && st == 0 ? d : name;
    char *n = sf("%s%s%s", *out ? *out : "", *out ? ", " : "", use);
    free(d);
    free(*out);
    *out = n;
}

/* The kernel names of a sequence: "kernel_names" (schema 2) or "kernels" (schema 1). */
static char *kernels(const json *s)
{
    char *out = NULL;
    const json *a = json_get(s, "kernel_names");
    if (a && a->type == JSON_ARR) {
        for (const json *k = a->child; k; k = k->next)
            if (k->type == JSON_STR)
                add_name(&out, k->str);
    } else {
        const char *l = json_str(json_get(s, "kernels"), "");
        while (*l) {
            size_t n = strcspn(l, ",");
            char *one = sf("%.*s", (int)n, l);
            add_name(&out, one);
            free(one);
            l += n + (l[n] == ',');
        }
    }
    if (!out)
        return strdup("?");
    if (!g_md && strlen(out) > 160)
        strcpy(out + 150, " ...");
    if (g_md) {
        char *q = sf("`%s`", out);
        free(out);
        out = q;
    }
    return out;
}

/* ---- reading ------------------------------------------------------------------------------- */

static int load(proc *p, const char *file)
{
    memset(p, 0, sizeof *p);
    p->file = file;
    FILE *f = fopen(file, "rb");
    if (!f) {
        fprintf(stderr, "autograph report: cannot read %s\n", file);
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (n == cap) {
            char *b = cap < MAX_FILE ? realloc(buf, cap * 2) : NULL;
            if (!b) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = b;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (!r)
            break;
        n += r;
    }
    fclose(f);
    if (!buf) {
        fprintf(stderr, "autograph report: %s: too large\n", file);
        return -1;
    }
    int rc = json_parse(&p->doc, buf, n);
    free(buf); /* the tree holds copies */
    if (rc) {
        fprintf(stderr, "autograph report: %s: not valid JSON: %s\n", file, p->doc.err);
        json_free(&p->doc);
        return -1;
    }
    p->root = p->doc.root;
    const char *schema = json_str(json_get(p->root, "schema"), "");
    if (strncmp(schema, "libautograph-stats/", 19)) {
        fprintf(stderr, "autograph report: %s: not a libautograph stats file (no \"schema\": "
                        "\"libautograph-stats/N\")\n", file);
        json_free(&p->doc);
        return -1;
    }
    p->counters = json_get(p->root, "counters");
    return 0;
}

static double counter(const proc *p, const char *name)
{
    return json_num(json_get(p->counters, name), 0);
}

static double launches(const proc *p)
{
    static const char *const forms[] = { "launches.cuLaunchKernel", "launches.cuLaunchKernel_ptsz",
                                         "launches.cuLaunchKernelEx", "launches.cuLaunchKernelEx_ptsz",
                                         "launches.cuLaunchCooperativeKernel",
                                         "launches.cuLaunchCooperativeKernel_ptsz" };
    double sum = 0;
    for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++)
        sum += counter(p, forms[i]);
    return sum;
}

/* Kernel launches replayed in graphs: fate.replayed (the `fates` object); in files without
 * it, launches.replayed, which also counts replayed copies and memsets (at most all launches). */
static double replayed(const proc *p)
{
    const json *f = json_get(p->root, "fates");
    if (f && f->type == JSON_OBJ)
        return json_num(json_get(f, "replayed"), 0);
    double r = counter(p, "launches.replayed"), l = launches(p);
    return r < l ? r : l;
}

static const char *status_of(const json *s)
{
    const char *st = json_str(json_get(s, "status"), NULL);
    if (st)
        return st;
    st = json_str(json_get(s, "state"), "trial"); /* schema 1 */
    return !strcmp(st, "graph") ? "graphed" : !strcmp(st, "eager") ? "eager_policy" : "trial";
}

/* The largest reason count of a sequence, as "name (count)", or "-". */
static char *main_reason(const json *s)
{
    const json *r = json_get(s, "reasons"), *best = NULL;
    if (r && r->type == JSON_OBJ)
        for (const json *m = r->child; m; m = m->next)
            if (m->type == JSON_NUM && m->num > 0 && (!best || m->num > best->num))
                best = m;
    return best ? sf("%s (%.0f)", best->key, best->num) : strdup("-");
}

static double seq_saved_us(const json *s)
{
    const json *v = json_get(s, "estimated_saved_us");
    if (v && v->type == JSON_NUM)
        return v->num;
    double g = json_num(json_get(s, "median_graph_us"), 0), e = json_num(json_get(s, "median_eager_us"), 0);
    return g > 0 && e > g ? (e - g) * json_num(json_get(s, "replays"), 0) : 0;
}

static int by_saving(const void *a, const void *b)
{
    double x = ((const seqrow *)a)->saved_us, y = ((const seqrow *)b)->saved_us;
    return x < y ? 1 : x > y ? -1 : 0;
}

static int by_occurrences(const void *a, const void *b)
{
    double x = ((const seqrow *)a)->occurrences, y = ((const seqrow *)b)->occurrences;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* A time in us; 0 means not measured. */
static char *us(double v)
{
    return v > 0 ? sf("%.1f", v) : strdup("-");
}

static char *pid_of(const proc *p)
{
    const json *v = json_get(p->root, "pid");
    return v && v->type == JSON_NUM ? sf("%.0f", v->num) : strdup("?");
}

/* ---- the report ---------------------------------------------------------------------------- */

typedef struct {
    const char *name, *unit;
    double count, seqs;
} why;

/* ---- where every launch went ---------------------------------------------------------------- */

/* What each fate means, for the table (docs/STATS.md, "fates"; policy/stats.h). */
static const char *const fate_doc[][2] = {
    { "replayed", "ran inside a graph" },
    { "eager_learning", "passed while the stream learned" },
    { "eager_policy", "passed: its sequence eager by policy (payback, probe, trial, lost, back-off)" },
    { "rested_no_repeat", "passed while learning rested: nothing graphable repeated" },
    { "rested_backoff", "passed while learning rested: the only sequence backs off" },
    { "building", "held, issued eagerly while the worker built its graph" },
    { "diverged", "held, flushed eagerly: a launch left the sequence" },
    { "ungraphable", "passed: no graph can take it (attribute, size, name, layout)" },
    { "hold_timeout", "held, flushed eagerly by the hold watchdog" },
    { "ordering_point", "held, flushed eagerly by an ordering point" },
    { "graph_failure", "held, flushed eagerly: a graph call failed" },
    { "cache_full", "held, flushed eagerly: the graph cache was full" },
    { "app_capture", "passed while the application captured" },
    { "paused", "passed while the program paused the library" },
    { "engine_off", "passed with the engine off (disabled, tracing, exiting, forked)" },
    { "no_state", "passed without a stream state" },
    { "not_held", "passed: wanted in a graph but could not be held" },
    { "unaccounted", "launches without a fate in the files (older files, launches at exit)" },
};

static const char *fate_meaning(const char *name)
{
    for (size_t i = 0; i < sizeof fate_doc / sizeof fate_doc[0]; i++)
        if (!strcmp(fate_doc[i][0], name))
            return fate_doc[i][1];
    return "";
}

/* Shares of `n` counts, in tenths of a percent, that sum to exactly 1000 (largest remainder):
 * the table's percentages add up to 100.0%. */
static void shares(const why *w, int n, double total, int *tenths)
{
    double rem[64];
    int sum = 0, ok = total > 0 && total < 1e300; /* (any input: never a cast of inf or NaN) */
    for (int i = 0; i < n; i++) {
        double x = ok ? 1000.0 * w[i].count / total : 0;
        x = x >= 0 && x <= 1000 ? x : 0;
        tenths[i] = (int)x;
        rem[i] = x - tenths[i];
        sum += tenths[i];
    }
    for (int k = 0; ok && k < n && sum < 1000; k++) { /* each share lost less than one */
        int best = 0;
        for (int i = 1; i < n; i++)
            if (rem[i] > rem[best])
                best = i;
        tenths[best]++;
        rem[best] = -1;
        sum++;
    }
}

/* Every process's `fates` summed by fate, largest first, as shares of all launches. */
static void fates(proc *ps, int np)
{
    why w[64];
    int nw = 0, any = 0;
    double all = 0, accounted = 0;
    for (int i = 0; i < np; i++) {
        all += launches(&ps[i]);
        const json *f = json_get(ps[i].root, "fates");
        if (!f || f->type != JSON_OBJ)
            continue;
        any = 1;
        for (const json *e = f->child; e; e = e->next) {
            if (e->type != JSON_NUM || !(e->num > 0 && e->num < 1e300))
                continue;
            int k = 0;
            while (k < nw && strcmp(w[k].name, e->key))
                k++;
            if (k == nw) {
                if (nw == 63)
                    continue;
                w[nw++] = (why){ e->key, "", 0, 0 };
            }
            w[k].count += e->num;
            accounted += e->num;
        }
    }
    if (!any)
        return; /* files from before the fates */
    if (all > accounted)
        w[nw++] = (why){ "unaccounted", "", all - accounted, 0 };
    for (int i = 1; i < nw; i++)
        for (int k = i; k > 0 && w[k - 1].count < w[k].count; k--) {
            why x = w[k];
            w[k] = w[k - 1];
            w[k - 1] = x;
        }
    int tenths[64];
    double total = all > accounted ? all : accounted;
    shares(w, nw, total, tenths);
    static const char *const h_f[] = { "fate", "launches", "share", "meaning" };
    table t = { 4, 0, 0, h_f, NULL };
    for (int i = 0; i < nw; i++)
        row(&t, sf("%s", w[i].name), sf("%.0f", w[i].count),
            sf("%d.%d%%", tenths[i] / 10, tenths[i] % 10), sf("%s", fate_meaning(w[i].name)));
    if (nw > 1)
        row(&t, strdup("total"), sf("%.0f", total), strdup(total > 0 ? "100.0%" : "0.0%"),
            strdup(accounted > all ? "more fates than launches: a launch counted twice" : ""));
    tprint(&t, "Where every launch went (all processes)");
}

/* How many graph replays had to bring their graph up to date first (the stats' updates.*
 * counters, summed), and how: each costs the driver ~1-1.5 us a node set on an H100 (more at
 * the launch after), so a program whose graphs update at every replay gains less. */
static void updates(proc *ps, int np)
{
    double rp = 0, node = 0, nodes = 0, whole = 0, variant = 0;
    for (int i = 0; i < np; i++) {
        rp += counter(&ps[i], "graphs.replays");
        node += counter(&ps[i], "updates.per_node");
        nodes += counter(&ps[i], "updates.per_node_nodes");
        whole += counter(&ps[i], "updates.whole_graph");
        variant += counter(&ps[i], "updates.variant");
    }
    if (node + whole + variant <= 0)
        return;
    printf("\nGraph updates: %.0f of %.0f graph replays first set changed values: %.0f node by "
           "node (%.1f nodes each), %.0f with one whole-graph update; %.0f swapped to a second "
           "graph instead. AUTOGRAPH_LOG=debug names the values that change.\n",
           node + whole, rp, node, node > 0 ? nodes / node : 0.0, whole, variant);
}

/* The trials' own comparison: each sequence's graph and eager occurrences were timed inside one
 * process, so their ratio is free of the process-to-process host speed that paired runs of
 * Python programs suffer (one of two speeds a process, whatever the variant: BENCHMARKS,
 * twenty-third session). */
/* eager / graph of a sequence timed both ways in its process, or 0. */
static double timed_both(const seqrow *row)
{
    double g = json_num(json_get(row->s, "median_graph_us"), 0),
           e = json_num(json_get(row->s, "median_eager_us"), 0);
    return g > 0 && e > 0 ? e / g : 0;
}

static void in_process(const seqrow *rows, int ns)
{
    double sum = 0, lo = 0, hi = 0;
    int n = 0, procs = 0;
    for (int i = 0; i < ns; i++) {
        double r = timed_both(&rows[i]);
        if (!r)
            continue;
        lo = n && lo < r ? lo : r;
        hi = n && hi > r ? hi : r;
        sum += log(r);
        n++;
        int seen = 0; /* (rows of one process need not be adjacent once sorted) */
        for (int k = 0; k < i && !seen; k++)
            seen = rows[k].p == rows[i].p && timed_both(&rows[k]);
        procs += !seen;
    }
    if (n)
        printf("\nIn-process trials: %d sequence%s in %d process%s timed both ways inside their "
               "process: eager / graph per occurrence %.3fx (geometric mean; %.3f-%.3f).\n",
               n, n == 1 ? "" : "s", procs, procs == 1 ? "" : "es", exp(sum / n), lo, hi);
}

static void report(proc *ps, int np)
{
    double tl = 0, trep = 0, tsaved = 0, tbuilt = 0, treplays = 0, tseq = 0, tsupp = 0;
    for (int i = 0; i < np; i++) {
        tl += launches(&ps[i]);
        trep += replayed(&ps[i]);
        tsaved += json_num(json_get(ps[i].root, "estimated_saved_us"), 0);
    }
    if (g_md)
        printf("## libautograph report\n\n");
    printf("%d process%s, %.0f launches, %.1f%% replayed in graphs, estimated saving %.3f ms\n",
           np, np == 1 ? "" : "es", tl, tl > 0 ? 100.0 * trep / tl : 0.0, tsaved / 1e3);

    static const char *const h_proc[] = { "pid", "host", "launches", "replayed", "graphs",
                                          "replays", "sequences", "saved ms", "warnings suppressed" };
    table t = { 9, 0, 0, h_proc, NULL };
    for (int i = 0; i < np; i++) {
        const proc *p = &ps[i];
        double l = launches(p), built = counter(p, "graphs.built"), rp = counter(p, "graphs.replays");
        double nseq = json_num(json_get(p->root, "sequences_total"), 0);
        double saved = json_num(json_get(p->root, "estimated_saved_us"), 0);
        double supp = json_num(json_get(p->root, "warnings_suppressed"), 0);
        tbuilt += built;
        treplays += rp;
        tseq += nseq;
        tsupp += supp;
        row(&t, pid_of(p), sf("%s", json_str(json_get(p->root, "host"), "?")), sf("%.0f", l),
            sf("%.1f%%", l > 0 ? 100.0 * replayed(p) / l : 0.0),
            sf("%.0f", built), sf("%.0f", rp), sf("%.0f", nseq), sf("%.3f", saved / 1e3),
            sf("%.0f", supp));
    }
    if (np > 1)
        row(&t, strdup("total"), strdup(""), sf("%.0f", tl),
            sf("%.1f%%", tl > 0 ? 100.0 * trep / tl : 0.0), sf("%.0f", tbuilt),
            sf("%.0f", treplays), sf("%.0f", tseq), sf("%.3f", tsaved / 1e3), sf("%.0f", tsupp));
    tprint(&t, "Processes");
    updates(ps, np);

    /* every reported sequence of every process */
    int ns = 0, cap = 0;
    seqrow *rows = NULL;
    for (int i = 0; i < np; i++) {
        const json *a = json_get(ps[i].root, "top_sequences");
        for (const json *s = a && a->type == JSON_ARR ? a->child : NULL; s; s = s->next) {
            if (s->type != JSON_OBJ)
                continue;
            if (ns == cap) {
                cap = cap ? 2 * cap : 32;
                seqrow *r = realloc(rows, (size_t)cap * sizeof *r);
                if (!r)
                    abort();
                rows = r;
            }
            seqrow *r = &rows[ns++];
            r->p = &ps[i];
            r->s = s;
            r->saved_us = seq_saved_us(s);
            r->occurrences = json_num(json_get(s, "replays"), 0) + json_num(json_get(s, "eager_runs"), 0);
            r->status = status_of(s);
        }
    }

    static const char *const h_g[] = { "pid", "length", "replays", "eager", "graph us",
                                       "eager us", "saved ms", "kernels" };
    table g = { 8, 0, 0, h_g, NULL };
    if (rows)
        qsort(rows, (size_t)ns, sizeof *rows, by_saving);
    for (int i = 0; i < ns; i++) {
        const json *s = rows[i].s;
        if (strcmp(rows[i].status, "graphed"))
            continue;
        row(&g, pid_of(rows[i].p), sf("%.0f", json_num(json_get(s, "length"), 0)),
            sf("%.0f", json_num(json_get(s, "replays"), 0)),
            sf("%.0f", json_num(json_get(s, "eager_runs"), 0)),
            us(json_num(json_get(s, "median_graph_us"), 0)),
            us(json_num(json_get(s, "median_eager_us"), 0)),
            sf("%.3f", rows[i].saved_us / 1e3), kernels(s));
    }
    tprint(&g, "Graphed (by estimated saving)");
    in_process(rows, ns);

    static const char *const h_n[] = { "pid", "length", "status", "occurrences", "main reason",
                                       "kernels" };
    table n = { 6, 0, 0, h_n, NULL };
    if (rows)
        qsort(rows, (size_t)ns, sizeof *rows, by_occurrences);
    for (int i = 0; i < ns; i++) {
        const json *s = rows[i].s;
        if (!strcmp(rows[i].status, "graphed"))
            continue;
        row(&n, pid_of(rows[i].p), sf("%.0f", json_num(json_get(s, "length"), 0)),
            sf("%s", rows[i].status), sf("%.0f", rows[i].occurrences), main_reason(s), kernels(s));
    }
    tprint(&n, "Not graphed");

    /* the processes' "not_graphed" sections, summed by reason */
    why w[64];
    int nw = 0;
    for (int i = 0; i < np; i++) {
        const json *a = json_get(ps[i].root, "not_graphed");
        for (const json *e = a && a->type == JSON_ARR ? a->child : NULL; e; e = e->next) {
            const char *name = json_str(json_get(e, "reason"), NULL);
            if (!name)
                continue;
            int k = 0;
            while (k < nw && strcmp(w[k].name, name))
                k++;
            if (k == nw) {
                if (nw == 64)
                    continue;
                w[nw++] = (why){ name, json_str(json_get(e, "unit"), ""), 0, 0 };
            }
            w[k].count += json_num(json_get(e, "count"), 0);
            w[k].seqs += json_num(json_get(e, "sequences"), 0);
        }
    }
    for (int i = 1; i < nw; i++) /* largest first (few entries: insertion sort) */
        for (int k = i; k > 0 && w[k - 1].count < w[k].count; k--) {
            why x = w[k];
            w[k] = w[k - 1];
            w[k - 1] = x;
        }
    static const char *const h_w[] = { "reason", "count", "unit", "sequences (reported)" };
    table r = { 4, 0, 0, h_w, NULL };
    for (int i = 0; i < nw; i++)
        row(&r, sf("%s", w[i].name), sf("%.0f", w[i].count), sf("%s", w[i].unit),
            sf("%.0f", w[i].seqs));
    tprint(&r, "Why launches were not graphed (all processes)");
    free(rows);
    fates(ps, np);
}

int ag_report_main(int argc, char **argv)
{
    int i = 1;
    g_md = 0;
    for (; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "--")) {
            i++;
            break;
        }
        if (!strcmp(argv[i], "--markdown")) {
            g_md = 1;
        } else {
            fprintf(stderr, "autograph report: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "usage: autograph report [--markdown] FILE.json [FILE.json ...]\n");
        return 2;
    }
    proc *ps = calloc((size_t)(argc - i), sizeof *ps);
    if (!ps)
        return 1;
    int np = 0, bad = 0;
    for (; i < argc; i++) {
        if (load(&ps[np], argv[i]) == 0)
            np++;
        else
            bad = 1;
    }
    if (np)
        report(ps, np);
    for (int k = 0; k < np; k++)
        json_free(&ps[k].doc);
    free(ps);
    return bad || !np ? 1 : 0;
}
