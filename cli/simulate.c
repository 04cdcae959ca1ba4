/* autograph-sim: replays AUTOGRAPH_TRACE files through the real engine over a simulated driver.
 *
 *   autograph-sim [--costs FILE] [--json FILE] [--explain] [--opt KEY=VALUE]...
 *                 [--measure-engine] [--host-scale F] TRACE...
 *
 * (`autograph simulate ARGS` execs this.) For each trace, two runs, each in a fork child of its
 * own (the engine's state is process-wide and set up once; a child per run starts it fresh and
 * deterministically): "eager" (the engine disabled: every call passes through, which should
 * reproduce the traced run itself: the calibration line) and "autograph" (the engine on, with
 * the --opt options). Why a separate executable rather than part of `autograph`: the engine is
 * compiled a second time with -DAG_SIM (its clock is the simulated one) and brings its
 * process-wide state, its atexit and fork handlers with it; the `autograph` launcher stays the
 * small program that only sets variables and execs. docs/MODEL.md describes the model. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "policy/fdio.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/copy.h"
#include "cache/engine.h"
#include "cache/funcattr.h"
#include "cache/internal.h"
#include "json.h"
#include "simcost.h"
#include "simdrv.h"
#include "simtrace.h"

#ifndef AG_COSTDIR
#define AG_COSTDIR "/usr/local/share/autograph/costs"
#endif

/* ---- options ------------------------------------------------------------------------------- */

#define MAX_OPTS 32
static struct {
    const char *costs, *json, *stats;
    int explain, measure;
    const char *opt[MAX_OPTS];
    int nopt;
} g;

static sim_costs g_costs;

/* ---- one run's result, sent from the child to the parent --------------------------------- */

typedef struct run_result {
    int ok;
    char err[240];
    uint64_t start_ns;          /* the first call's start (trace time) */
    uint64_t time_ns;           /* to the end of the last work, host or GPU; or the region */
    uint64_t host_ns;           /* to the end of the last call on the host */
    uint64_t roi_start, roi_end; /* host times of the first cuProfilerStart and the last
                                  * cuProfilerStop (0: none): the program's timed region */
    uint64_t gpu_idle_ns;
    /* over the span the ratio is taken over (the region, or the whole trace): the kernel
     * launches made in it, their driver host time (the eager run: the trace's own), and the
     * GPU's busy time in it; for the interposer ceiling */
    uint64_t span_launches, span_launch_ns, span_gpu_busy_ns;
    uint64_t host[SIM_C_COUNT];
    sim_result_gpu gpu;
    uint64_t c[AG_ST_COUNT];    /* the engine's counters */
    uint64_t engine_calls[5];   /* launches: rested, learning, held, other, watched (when the
                                 * table has launch_watched; else among the learning ones) */
    uint64_t cold_launches;     /* launches charged a cold first launch's cost */
    uint64_t cold_calls;        /* engine calls charged engine_ns.cold_call */
    uint32_t explain_len;       /* bytes of text that follow */
} run_result;

/* ---- the engine's hooks under AG_SIM ------------------------------------------------------ */

/* The hold watchdog is no thread here (cache/watchdog.c is not built): the simulator flushes
 * stale holds itself, at the simulated moment (run_watchdog). */
void ag_watchdog_kick(void) {}
void ag_watchdog_init(uint64_t (*tick)(uint64_t, uint64_t)) { (void)tick; }

/* The earliest hold start of any stream that holds, or UINT64_MAX. */
static void oldest_hold(ag_stream *st, void *arg)
{
    uint64_t *t = arg;
    if (st->kind != AG_SK_DEAD && st->nheld && st->hold_t0 < *t)
        *t = st->hold_t0;
}

/* Holds that go stale before `until` are flushed at the moment they do, by the watchdog (off
 * the application's critical path: its host costs do not delay the application). */
static void run_watchdog(uint64_t until)
{
    if (!ag_engine_started())
        return;
    uint64_t max_age = (uint64_t)ag_opt(AG_OPT_MAX_HOLD_US) * 1000u;
    for (int guard = 0; guard < 1000; guard++) {
        if (!atomic_load(&ag_nholding))
            return;
        uint64_t t0 = UINT64_MAX;
        ag_streams_each(oldest_hold, &t0);
        if (t0 == UINT64_MAX || t0 + max_age + 1 > until)
            return;
        uint64_t saved = sim_H, at = t0 + max_age + 1;
        if (at < saved)
            at = saved;
        sim_H = at;
        sim_off_critical = 1;
        ag_flush_stale(at, max_age);
        sim_off_critical = 0;
        sim_H = saved;
        sim_gpu.watchdog_flushes++;
    }
}

/* ---- the engine's own time ------------------------------------------------------------------ */

static uint64_t cnt(enum ag_stat s)
{
    return ag_tstats ? ag_tstats->c[s] : 0;
}

/* Launches passed while learning rested (counted by cause: policy/stats.h, AG_FATES). */
static uint64_t cnt_rested(void)
{
    return cnt(AG_ST_FATE_REST_NO_REPEAT) + cnt(AG_ST_FATE_REST_BACKOFF);
}

/* The cost of one clock read, subtracted per read (--measure-engine): the median of a few
 * hundred back-to-back pairs. */
static uint64_t g_clock_ns;

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void clock_calibrate(void)
{
    uint64_t d[301];
    for (int i = 0; i < 301; i++) {
        uint64_t a = sim_real_ns();
        d[i] = sim_real_ns() - a;
    }
    qsort(d, 301, sizeof d[0], cmp_u64);
    g_clock_ns = d[150];
}

typedef struct eng_mark {
    uint64_t held, rested, opaque, captured, replays, replayed, passed, states, nodes, tnodes,
        watched, cpu, drv, ndrv;
    int cold; /* after engine_ns.cold_gap of the program's own time (g_app_at_end) */
} eng_mark;

/* The program's own host time (sim_host[SIM_C_APP]) when the engine's last call ended. */
static uint64_t g_app_at_end;

/* The cold first launches (engine_ns.first_launch, first_launch_func): has the engine seen a
 * launch yet, and which functions (only kept where the table has first_launch_func). */
static int g_engine_run; /* this run has the engine on (the autograph run) */
static int g_launched;
typedef struct seen_func {
    uint64_t f;
    UT_hash_handle hh;
} seen_func;
static seen_func *g_seen_funcs;

static int first_of_func(uint64_t f);

/* Before a launch reaches the engine: a process's first launch (and, where the table has a
 * number for it, a kernel function's first) costs its whole own time as measured, cold (code
 * and data not yet in the caches), instead of its kind's constant. Charged before the call:
 * the engine's own work precedes the driver's launch (the kernel starts that much later).
 * 1 when charged. */
static int cold_launch(uint64_t f, run_result *res)
{
    if (!g_engine_run || g.measure)
        return 0;
    int first_func = g_costs.engine.first_launch_func > 0 && first_of_func(f);
    double cold = !g_launched ? g_costs.engine.first_launch
                  : first_func ? g_costs.engine.first_launch_func
                               : 0;
    g_launched = 1;
    if (cold <= 0)
        return 0;
    sim_host_add(SIM_C_ENGINE, (uint64_t)(cold + 0.5));
    res->cold_launches++;
    return 1;
}

/* 1 the first time f is launched. */
static int first_of_func(uint64_t f)
{
    seen_func *s;
    HASH_FIND(hh, g_seen_funcs, &f, sizeof f, s);
    if (s)
        return 0;
    if (!(s = calloc(1, sizeof *s)))
        abort();
    s->f = f;
    HASH_ADD(hh, g_seen_funcs, f, sizeof s->f, s);
    return 1;
}

static void eng_begin(eng_mark *m)
{
    m->held = cnt(AG_ST_HELD);
    m->rested = cnt_rested();
    m->opaque = cnt(AG_ST_OPAQUE);
    m->captured = cnt(AG_ST_CAPTURED);
    m->replays = cnt(AG_ST_GRAPH_LAUNCHES);
    m->replayed = cnt(AG_ST_REPLAYED);
    m->passed = cnt(AG_ST_ORDER_PASSED);
    m->states = cnt(AG_ST_STREAMS);
    m->nodes = sim_gpu.nodes_built;
    m->tnodes = cnt(AG_ST_SEQ_TEMPLATE_LAUNCHES);
    m->watched = cnt(AG_ST_WATCHED);
    m->cold = g_costs.engine.cold_gap > 0 &&
              (double)(sim_host[SIM_C_APP] - g_app_at_end) >= g_costs.engine.cold_gap;
    if (g.measure) {
        m->drv = sim_drv_real_ns;
        m->ndrv = sim_drv_real_calls;
        m->cpu = sim_real_ns();
    }
}

/* After an engine call: its own time, from what it did (constants of the cost table) or, with
 * --measure-engine, measured (CPU time less the simulated driver's). */
/* The engine's constant for an ordering point: whether it had anything to do. */
static double order_cost(const eng_mark *m)
{
    return cnt(AG_ST_ORDER_PASSED) > m->passed ? g_costs.engine.order_point_rested
                                               : g_costs.engine.order_point;
}

/* launch: a kernel launch; cold: one charged a cold first launch's cost (cold_launch). */
static void eng_end(const eng_mark *m, int launch, int cold, uint64_t base, run_result *res)
{
    if (!ag_engine_started())
        return;
    if (g.measure) {
        int64_t d = (int64_t)(sim_real_ns() - m->cpu) - (int64_t)(sim_drv_real_ns - m->drv) -
                    (int64_t)(g_clock_ns * (1 + 2 * (sim_drv_real_calls - m->ndrv)));
        sim_host_add(SIM_C_ENGINE, d > 0 ? (uint64_t)d : 0);
        return;
    }
    const sim_costs *c = &g_costs;
    double ns = base;
    if (launch) {
        int k = cnt(AG_ST_HELD) > m->held       ? 2
                : cnt_rested() > m->rested ? 0
                : cnt(AG_ST_OPAQUE) > m->opaque || cnt(AG_ST_CAPTURED) > m->captured ? 3
                : c->engine.launch_watched > 0 && cnt(AG_ST_WATCHED) > m->watched    ? 4
                                                                                       : 1;
        res->engine_calls[k]++;
        ns = k == 2 ? c->engine.launch_held
             : k == 0 ? c->engine.launch_rested
             : k == 3 ? c->engine.launch_other
             : k == 4 ? c->engine.launch_watched
                      : c->engine.launch_learning;
        if (k == 1 && c->engine.first_learning_launch > 0 && cnt(AG_ST_STREAMS) > m->states)
            ns = c->engine.first_learning_launch; /* the stream's state was made: cold */
        if (cold)
            ns = 0; /* its whole own time was charged before it (cold_launch) */
    }
    if (m->cold && !cold && c->engine.cold_call > 0) {
        ns += c->engine.cold_call;
        res->cold_calls++;
    }
    g_app_at_end = sim_host[SIM_C_APP];
    ns += c->engine.replay_base * (double)(cnt(AG_ST_GRAPH_LAUNCHES) - m->replays) +
          c->engine.replay_per_node * (double)(cnt(AG_ST_REPLAYED) - m->replayed) +
          c->engine.build_per_node * (double)(sim_gpu.nodes_built - m->nodes) +
          c->engine.tmpl_per_node * (double)(cnt(AG_ST_SEQ_TEMPLATE_LAUNCHES) - m->tnodes);
    sim_host_add(SIM_C_ENGINE, (uint64_t)(ns + 0.5));
}

/* ---- application events ------------------------------------------------------------------- */

typedef struct app_event {
    uint64_t h, t;
    UT_hash_handle hh;
} app_event;
static app_event *g_events;

static app_event *app_event_of(uint64_t h)
{
    app_event *e;
    HASH_FIND(hh, g_events, &h, sizeof h, e);
    if (!e) {
        if (!(e = calloc(1, sizeof *e)))
            abort();
        e->h = h;
        HASH_ADD(hh, g_events, h, sizeof e->h, e);
    }
    return e;
}

/* ---- replaying the calls ---------------------------------------------------------------------- */

/* Kernel launches given to the engine so far, and the counts and driver launch time at the
 * region's start and its (latest) end. */
static uint64_t g_launches;
static uint64_t g_roi_launches[2], g_roi_launch_ns[2];

static int starts(const char *s, const char *p)
{
    return s && !strncmp(s, p, strlen(p));
}

/* A blocking call: its own cost, then the host waits for t. */
static void blocking(uint64_t t)
{
    sim_host_add(SIM_C_SYNC, (uint64_t)(g_costs.host.stream_sync_empty + 0.5));
    sim_host_wait(t);
}

/* The handle the engine sees for the trace's function `id`: the recorded one, or one of our
 * own where the trace describes none. */
static void *func_handle(const ag_tr_func *f, uint64_t id)
{
    return (void *)(uintptr_t)(f ? f->handle : 0xF0000000u + id);
}

static void do_launch(const sim_call *c, run_result *res)
{
    const ag_tr_launch *L = (const ag_tr_launch *)c->h;
    const ag_tr_func *f = sim_func_by_id(L->func);
    int ptsz = ag_entry_ptsz(L->entry);
    /* the packed parameter block: the hash repeated (equal hashes, equal bytes) */
    uint8_t block[AG_MAX_PARAM_BYTES + 64];
    void *params[256];
    size_t n = L->param_bytes > sizeof block ? sizeof block : L->param_bytes;
    if (f && (f->flags & AG_TRFN_LAYOUT) && f->param_bytes <= sizeof block && f->param_bytes > n)
        n = f->param_bytes;
    for (size_t i = 0; i < sizeof block; i += 8)
        memcpy(block + i, &L->param_hash, 8);
    int with_params = f && (f->flags & AG_TRFN_LAYOUT) && f->nparams <= 256;
    if (with_params)
        for (uint32_t i = 0; i < f->nparams; i++) {
            uint32_t off = ag_trr_func_params(f)[i] >> 16, sz = ag_trr_func_params(f)[i] & 0xffff;
            params[i] = off + sz <= sizeof block ? block + off : block;
        }
    CUlaunchAttribute at[32];
    unsigned nat = 0;
    for (unsigned id = 1; id < 32; id++) {
        if (!(L->attrs & (1u << id)))
            continue;
        memset(&at[nat], 0, sizeof at[nat]);
        at[nat].id = (CUlaunchAttributeID)id;
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION)
            at[nat].value.programmaticStreamSerializationAllowed = L->pdl;
        else if (id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            at[nat].value.clusterDim.x = L->cluster[0];
            at[nat].value.clusterDim.y = L->cluster[1];
            at[nat].value.clusterDim.z = L->cluster[2];
        }
        nat++;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = L->grid[0];
    cfg.gridDimY = L->grid[1];
    cfg.gridDimZ = L->grid[2];
    cfg.blockDimX = L->block[0];
    cfg.blockDimY = L->block[1];
    cfg.blockDimZ = L->block[2];
    cfg.sharedMemBytes = L->smem;
    cfg.hStream = (CUstream)(uintptr_t)L->h.stream;
    cfg.attrs = nat ? at : NULL;
    cfg.numAttrs = nat;
    ag_launch l;
    memset(&l, 0, sizeof l);
    l.f = (CUfunction)func_handle(f, L->func);
    memcpy(l.grid, L->grid, sizeof l.grid);
    memcpy(l.block, L->block, sizeof l.block);
    l.smem = L->smem;
    l.stream = (CUstream)(uintptr_t)L->h.stream;
    l.entry = L->entry < AG_ENTRY_COUNT ? L->entry : AG_ENTRY_LAUNCH;
    if (l.entry == AG_ENTRY_EX || l.entry == AG_ENTRY_EX_PTSZ) {
        l.config = &cfg;
        l.attrs = cfg.attrs;
        l.nattrs = nat;
    }
    l.params = with_params ? params : NULL;
    sim_push(L->h.stream, ptsz, c);
    g_launches++;
    int cold = cold_launch((uint64_t)(uintptr_t)l.f, res);
    eng_mark m;
    eng_begin(&m);
    ag_launch_kernel(&l);
    eng_end(&m, 1, cold, 0, res);
}

static void do_copy(const sim_call *c, run_result *res)
{
    const ag_tr_copy *K = (const ag_tr_copy *)c->h;
    int memset_ = K->op <= AG_CP_MEMSET32;
    sim_set_mem(K->dst, K->dst_mem);
    if (!memset_)
        sim_set_mem(K->src, K->src_mem);
    static const unsigned elem[3] = { 1, 2, 4 };
    int entry = K->op < AG_CP_COUNT ? K->op : AG_CP_MEMCPY;
    ag_copy op = { (uint8_t)entry, K->ptsz, sim_copy_fn(entry, K->ptsz), (CUstream)(uintptr_t)K->h.stream,
                   K->dst, K->src, K->value,
                   (size_t)(memset_ ? K->bytes / elem[entry] : K->bytes) };
    sim_push(K->h.stream, K->ptsz, c);
    eng_mark m;
    eng_begin(&m);
    CUresult r;
    int took = ag_copy_offer(&op, &r);
    if (!took)
        ag_order_stream(op.stream, op.ptsz);
    /* a copy the engine did not take (a resting stream, a kind that is no node) returned
     * early and became an ordering point: it costs what one does */
    eng_end(&m, 0, 0, (uint64_t)((took ? g_costs.engine.copy_offer : order_cost(&m)) + 0.5), res);
    if (!took) /* the wrapper's own call of the real function */
        sim_copy_call(entry, K->dst, K->src, K->h.stream, K->ptsz);
}

static void do_op(const sim_trace *t, const sim_call *c, run_result *res)
{
    const ag_tr_op *O = (const ag_tr_op *)c->h;
    const char *name = sim_trace_op_name(t, O);
    CUstream s = (CUstream)(uintptr_t)O->h.stream;
    int ptsz = O->ptsz;
    uint64_t dur = O->h.dur_ns;
    eng_mark m;
    eng_begin(&m);
    int engine = 1;
    switch (O->cls) {
    case AG_TRC_STREAM:
    case AG_TRC_COPY:
        if (name && ag_call_waits(name)) /* the host waits, as the wrapper tells the engine */
            ag_order_waits();
        ag_order_stream(s, ptsz);
        break;
    case AG_TRC_STREAM_ATTR:
        ag_order_stream(s, ptsz);
        ag_order_stream_attr_done(s, ptsz, CUDA_SUCCESS);
        break;
    case AG_TRC_SYNC:
        ag_order_sync_copy(ptsz);
        break;
    case AG_TRC_ALL:
    case AG_TRC_FREE_ASYNC:
        ag_copy_forget();
        ag_order_all_call();
        break;
    case AG_TRC_INVALIDATE:
        ag_funcattr_reset();
        ag_copy_forget();
        ag_order_invalidate();
        break;
    case AG_TRC_DESTROY:
        ag_order_stream_destroy(s);
        break;
    case AG_TRC_CAPTURE_BEGIN:
        ag_order_capture_begin(s, ptsz);
        ag_order_capture_begin_done(s, ptsz, CUDA_SUCCESS);
        sim_capture(O->h.stream, ptsz, 1);
        break;
    case AG_TRC_CAPTURE_END:
        ag_order_capture_end(s, ptsz);
        ag_order_capture_end_done(s, ptsz);
        sim_capture(O->h.stream, ptsz, 0);
        break;
    case AG_TRC_INIT:
        ag_engine_prepare();
        engine = 0;
        break;
    case AG_TRC_FUNCATTR:
        if (!O->arg) { /* a trace older than the values: taken as unchanged */
            engine = 0;
            break;
        }
        {
            void *h = func_handle(sim_func_by_id((uint32_t)O->arg), O->arg);
            int attr, dev, v;
            ag_tr_funcattr_of(O->arg2, &attr, &dev, &v);
            int how = ag_funcattr_begin(h, attr, dev, v);
            ag_funcattr_end(h, attr, dev, v, how, (CUresult)O->result);
        }
        break;
    default: /* OTHER */
        engine = 0;
        break;
    }
    if (engine)
        eng_end(&m, 0, 0, (uint64_t)(order_cost(&m) + 0.5), res);
    /* the call's own effect on the simulated world */
    if (starts(name, "cuProfilerStart")) {
        /* the program marks the region it times, as profilers are told (the sample programs
         * and bench scripts do): the ratio is taken over it */
        if (!res->roi_start) {
            res->roi_start = sim_H;
            g_roi_launches[0] = g_launches;
            g_roi_launch_ns[0] = sim_host[SIM_C_LAUNCH];
        }
        sim_host_add(SIM_C_OPS, dur);
    } else if (starts(name, "cuProfilerStop")) {
        sim_host_add(SIM_C_OPS, dur);
        res->roi_end = sim_H;
        g_roi_launches[1] = g_launches;
        g_roi_launch_ns[1] = sim_host[SIM_C_LAUNCH];
    } else if (starts(name, "cuStreamSynchronize")) {
        blocking(sim_stream_ready(O->h.stream, ptsz));
    } else if (starts(name, "cuCtxSynchronize")) {
        blocking(sim_all_ready());
    } else if (starts(name, "cuEventSynchronize")) {
        blocking(app_event_of(O->arg)->t);
    } else if (starts(name, "cuEventRecord")) {
        sim_host_add(SIM_C_OPS, dur);
        app_event_of(O->arg)->t = sim_stream_ready(O->h.stream, ptsz);
    } else if (starts(name, "cuStreamWaitEvent")) {
        sim_host_add(SIM_C_OPS, dur);
        sim_stream_wait_until(O->h.stream, ptsz, app_event_of(O->arg)->t);
    } else if (O->cls == AG_TRC_SYNC) {
        /* a synchronous copy or memset: on the default stream, the host waits for it */
        uint64_t end = sim_stream_run(ptsz ? 0 : 1, ptsz,
                                      sim_exec_call(c, ptsz ? 0 : 1, ptsz, sim_H, dur, 1));
        sim_host_add(SIM_C_SYNC, (uint64_t)(g_costs.host.memcpy_dtoh_async_pageable + 0.5));
        sim_host_wait(end);
    } else {
        /* any other call: its traced host time; GPU work when the trace timed some */
        uint64_t issue = sim_H;
        sim_host_add(SIM_C_OPS, dur);
        if (c->has_gpu && O->h.stream) {
            uint64_t h = sim_H;
            sim_H = issue;
            sim_stream_run(O->h.stream, ptsz, sim_exec_call(c, O->h.stream, ptsz, issue, dur, 0));
            sim_H = h;
        }
    }
}

static size_t g_explain_cap, g_explain_len;
static char *g_explain;

static void explain_add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void explain_add(const char *fmt, ...)
{
    va_list ap;
    for (;;) {
        va_start(ap, fmt);
        size_t room = g_explain_cap - g_explain_len;
        int n = vsnprintf(g_explain ? g_explain + g_explain_len : NULL, g_explain ? room : 0,
                          fmt, ap);
        va_end(ap);
        if (n < 0)
            return;
        if ((size_t)n < room) {
            g_explain_len += (size_t)n;
            return;
        }
        size_t nc = (g_explain_cap + (size_t)n + 1) * 2;
        char *p = realloc(g_explain, nc);
        if (!p)
            return;
        g_explain = p;
        g_explain_cap = nc;
    }
}

static void copy_file(const char *from, const char *to)
{
    FILE *in = fopen(from, "rb"), *out = in ? fopen(to, "wb") : NULL;
    char buf[1 << 14];
    size_t n;
    while (out && (n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            break;
    if (!out || fclose(out))
        fprintf(stderr, "autograph simulate: cannot write %s\n", to);
    if (in)
        fclose(in);
}

/* The engine's report of its sequences (cache/report.c, through AUTOGRAPH_STATS), as lines. */
static void explain_sequences(const char *path)
{
    int fd = dup(2), nul = open("/dev/null", O_WRONLY);
    if (nul >= 0) { /* the report's text lines: not ours to print */
        dup2(nul, 2);
        close(nul);
    }
    ag_report_stats();
    if (fd >= 0) {
        dup2(fd, 2);
        close(fd);
    }
    if (g.stats) /* --stats: the engine's own stats file, kept */
        copy_file(path, g.stats);
    FILE *f = fopen(path, "rb");
    if (!f)
        return;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    unlink(path);
    json_doc d;
    if (json_parse(&d, text, n)) {
        json_free(&d);
        return;
    }
    const json *top = json_get(d.root, "top_sequences");
    int i = 0;
    for (const json *s = top ? top->child : NULL; s; s = s->next, i++) {
        explain_add("  sequence %d: %d launches, status %s, %.0f replays, %.0f eager; host "
                    "graph/eager %.2f/%.2f us, gpu graph/eager %.2f/%.2f us; %s\n",
                    i + 1, (int)json_num(json_get(s, "length"), 0),
                    json_str(json_get(s, "status"), "?"), json_num(json_get(s, "replays"), 0),
                    json_num(json_get(s, "eager_runs"), 0),
                    json_num(json_get(s, "host_graph_ns"), 0) / 1e3,
                    json_num(json_get(s, "host_eager_ns"), 0) / 1e3,
                    json_num(json_get(s, "gpu_graph_ns"), 0) / 1e3,
                    json_num(json_get(s, "gpu_eager_ns"), 0) / 1e3,
                    json_str(json_get(s, "kernels"), ""));
        const json *r = json_get(s, "reasons");
        for (const json *w = r ? r->child : NULL; w; w = w->next)
            if (json_num(w, 0) > 0)
                explain_add("    broke off / not graphed: %s x%.0f\n", w->key, json_num(w, 0));
    }
    if (!i)
        explain_add("  no sequence became a template\n");
    const json *ng = json_get(d.root, "not_graphed");
    for (const json *w = ng ? ng->child : NULL; w; w = w->next)
        explain_add("  not graphed: %s (%.0f %s)\n", json_str(json_get(w, "reason"), "?"),
                    json_num(json_get(w, "count"), 0), json_str(json_get(w, "unit"), ""));
    json_free(&d);
}

/* Clears every AUTOGRAPH_* variable: a run depends on its arguments only. */
static void clear_options(void)
{
    extern char **environ;
    for (int again = 1; again;) {
        again = 0;
        for (char **e = environ; *e; e++)
            if (!strncmp(*e, "AUTOGRAPH_", 10)) {
                char name[256];
                size_t n = strcspn(*e, "=");
                if (n >= sizeof name)
                    continue;
                memcpy(name, *e, n);
                name[n] = 0;
                unsetenv(name);
                again = 1;
                break;
            }
    }
}

static void simulate(const sim_trace *t, int engine, run_result *res)
{
    clear_options();
    setenv("AUTOGRAPH_LOG", "error", 1);
    if (!engine) {
        setenv("AUTOGRAPH_DISABLE", "1", 1);
    } else {
        for (int i = 0; i < g.nopt; i++) {
            char name[256];
            const char *eq = strchr(g.opt[i], '=');
            snprintf(name, sizeof name, "AUTOGRAPH_%.*s", (int)(eq - g.opt[i]), g.opt[i]);
            setenv(name, eq + 1, 1);
        }
    }
    g_engine_run = engine;
    g_app_at_end = 0;
    char stats[64] = "";
    if (engine && (g.explain || g.stats)) {
        snprintf(stats, sizeof stats, "/tmp/autograph-sim-%ld.json", (long)getpid());
        setenv("AUTOGRAPH_STATS", stats, 1);
    }
    ag_options_set_announce(0);
    simdrv_init(&g_costs, t->file->flags);
    sim_exec_attach(t->calls, t->exec);
    simdrv_install();
    sim_measure = g.measure;
    if (g.measure)
        clock_calibrate();
    uint64_t t0 = t->calls[0].h->t_ns;
    for (size_t i = 1; i < t->ncalls; i++)
        if (t->calls[i].h->t_ns < t0)
            t0 = t->calls[i].h->t_ns;
    sim_H = t0;
    res->start_ns = t0;
    ag_engine_prepare(); /* the program's cuInit */
    size_t d = 0;
    uint64_t prev_end = t0;
    for (size_t i = 0; i < t->ncalls; i++) {
        const sim_call *c = &t->calls[i];
        for (; d < t->ndecls && t->decls[d].at <= i; d++) {
            const ag_tr_hdr *h = t->decls[d].h;
            if (h->type == AG_TR_FUNC)
                sim_decl_func((const ag_tr_func *)h);
            else if (h->type == AG_TR_STREAM)
                sim_decl_stream((const ag_tr_stream *)h);
        }
        /* the application's own work since its previous call */
        uint64_t gap = c->h->t_ns > prev_end ? c->h->t_ns - prev_end : 0;
        uint64_t until = sim_H + sim_host_scaled(gap); /* (sim_host_add scales it the same) */
        sim_worker_run(until);
        run_watchdog(until);
        sim_host_add(SIM_C_APP, gap);
        uint64_t end = c->h->t_ns + c->h->dur_ns;
        if (end > prev_end)
            prev_end = end;
        int ptsz = c->h->type == AG_TR_LAUNCH ? ag_entry_ptsz(((const ag_tr_launch *)c->h)->entry)
                   : c->h->type == AG_TR_COPY ? ((const ag_tr_copy *)c->h)->ptsz
                                              : ((const ag_tr_op *)c->h)->ptsz;
        sim_set_ctx_for(c->h->stream, ptsz);
        if (c->h->type == AG_TR_LAUNCH)
            do_launch(c, res);
        else if (c->h->type == AG_TR_COPY)
            do_copy(c, res);
        else
            do_op(t, c, res);
    }
    /* the program exits: the engine's exit handler flushes what is held */
    if (ag_engine_started())
        ag_flush_all(AG_ST_FL_EXIT);
    res->host_ns = sim_H - t0;
    uint64_t end = sim_H > sim_gpu.end_ns ? sim_H : sim_gpu.end_ns;
    res->time_ns = end - t0;
    res->gpu_idle_ns = res->time_ns > sim_gpu.busy_ns ? res->time_ns - sim_gpu.busy_ns : 0;
    if (res->roi_start && res->roi_end > res->roi_start) {
        res->time_ns = res->roi_end - res->roi_start; /* idle and stalls stay whole-trace */
        res->span_launches = g_roi_launches[1] - g_roi_launches[0];
        res->span_launch_ns = g_roi_launch_ns[1] - g_roi_launch_ns[0];
        res->span_gpu_busy_ns = sim_busy_between(res->roi_start, res->roi_end);
    } else {
        res->roi_start = res->roi_end = 0;
        res->span_launches = g_launches;
        res->span_launch_ns = sim_host[SIM_C_LAUNCH];
        res->span_gpu_busy_ns = sim_gpu.busy_ns;
    }
    memcpy(res->host, sim_host, sizeof res->host);
    res->gpu = sim_gpu;
    ag_stats_sum(res->c);
    if (*stats)
        explain_sequences(stats);
    res->ok = 1;
}

/* ---- the parent: a child per run ----------------------------------------------------------- */

static int run_child(const sim_trace *t, int engine, run_result *res, char **explain)
{
    memset(res, 0, sizeof *res);
    *explain = NULL;
    fflush(NULL);
    int p[2];
    if (pipe(p))
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(p[0]);
        run_result r;
        memset(&r, 0, sizeof r);
        simulate(t, engine, &r);
        r.explain_len = (uint32_t)g_explain_len;
        int bad = ag_write_all(p[1], &r, sizeof r) ||
                  (g_explain_len && ag_write_all(p[1], g_explain, g_explain_len)) ||
                  (!engine && ag_write_all(p[1], t->exec, t->ncalls * sizeof *t->exec));
        _exit(bad ? 3 : 0); /* no exit handlers: the engine's would flush and report */
    }
    close(p[1]);
    int bad = ag_read_all(p[0], res, sizeof *res);
    if (!bad && res->explain_len) {
        *explain = calloc(1, res->explain_len + 1);
        bad = !*explain || ag_read_all(p[0], *explain, res->explain_len);
    }
    /* the eager run's own GPU times of the calls, for the autograph run (docs/MODEL.md) */
    if (!bad && !engine)
        bad = ag_read_all(p[0], t->exec, t->ncalls * sizeof *t->exec);
    close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (bad || !WIFEXITED(status) || WEXITSTATUS(status) || !res->ok) {
        snprintf(res->err, sizeof res->err, "the %s run %s", engine ? "autograph" : "eager",
                 WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "failed");
        res->ok = 0;
        return -1;
    }
    return 0;
}

static double us(uint64_t ns)
{
    return (double)ns / 1e3;
}

static uint64_t launches_of(const run_result *r)
{
    uint64_t n = 0;
    for (int i = AG_ST_LAUNCH; i <= AG_ST_COOP_PTSZ; i++)
        n += r->c[i];
    return n;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_run(FILE *f, const run_result *r)
{
    fprintf(f, "{\"region\": %s, ", r->roi_start ? "true" : "false");
    fprintf(f, "\"time_us\": %.3f, \"host_us\": %.3f, \"gpu_busy_us\": %.3f, "
               "\"gpu_idle_us\": %.3f, \"gpu_gap_us\": %.3f, \"host_stall_us\": %.3f,\n"
               "      \"host_us_by\": {",
            us(r->time_ns), us(r->host_ns), us(r->gpu.busy_ns), us(r->gpu_idle_ns),
            us(r->gpu.gap_ns), us(r->host[SIM_C_STALL]));
    for (int i = 0; i < SIM_C_COUNT; i++)
        fprintf(f, "%s\"%s\": %.3f", i ? ", " : "", sim_cat_names[i], us(r->host[i]));
    fprintf(f, "},\n      \"launches\": %llu, \"held\": %llu, \"replayed\": %llu, "
               "\"passed\": %llu, \"flushed_eager\": %llu, \"graphs_built\": %llu, "
               "\"graph_replays\": %llu, \"templates\": %llu, \"updates_per_node\": %llu, "
               "\"updates_whole\": %llu, \"updates_fn\": %llu, \"watchdog_flushes\": %llu, "
               "\"anomalies\": %llu, "
               "\"cold_launches\": %llu, \"cold_calls\": %llu}",
            (unsigned long long)launches_of(r), (unsigned long long)r->c[AG_ST_HELD],
            (unsigned long long)r->c[AG_ST_REPLAYED], (unsigned long long)r->c[AG_ST_PASSED],
            (unsigned long long)r->c[AG_ST_FLUSHED], (unsigned long long)r->c[AG_ST_GRAPH_BUILT],
            (unsigned long long)r->c[AG_ST_GRAPH_LAUNCHES],
            (unsigned long long)r->c[AG_ST_SEQ_TEMPLATES],
            (unsigned long long)r->gpu.updates_node, (unsigned long long)r->gpu.updates_whole,
            (unsigned long long)r->gpu.updates_fn, (unsigned long long)r->gpu.watchdog_flushes,
            (unsigned long long)r->gpu.anomalies, (unsigned long long)r->cold_launches, (unsigned long long)r->cold_calls);
}

/* The interposer ceiling (docs/MODEL.md): the eager span over that span less every kernel
 * launch's host time in it, what removing every launch's host cost could give at best; 0
 * where nothing would be left (not a finite ceiling). */
static double ceiling_of(const run_result *e)
{
    return e->time_ns > e->span_launch_ns
               ? (double)e->time_ns / (double)(e->time_ns - e->span_launch_ns)
               : 0;
}

/* The GPU's idle share of the eager span, and what it makes the program: host-bound (the GPU
 * idle half the span or more), GPU-bound (idle under a tenth of it), or partly host-bound. */
static uint64_t span_busy(const run_result *e)
{
    return e->span_gpu_busy_ns < e->time_ns ? e->span_gpu_busy_ns : e->time_ns;
}

static double idle_share_of(const run_result *e)
{
    return e->time_ns ? (double)(e->time_ns - span_busy(e)) / (double)e->time_ns : 0;
}

static const char *bound_of(double idle_share)
{
    return idle_share >= 0.5 ? "host" : idle_share < 0.1 ? "gpu" : "partly_host";
}

/* The span over the GPU's busy time in it: what the GPU's own work allows at best (its work's
 * own times do not change in the model); 0: no GPU work. */
static double gpu_ceiling_of(const run_result *e)
{
    return span_busy(e) ? (double)e->time_ns / (double)span_busy(e) : 0;
}

static void fmt_ratio(char *out, size_t n, double r)
{
    if (r > 0)
        snprintf(out, n, "%.3fx", r);
    else
        snprintf(out, n, "unbounded");
}

/* Where the difference comes from (--explain). */
static void explain(const run_result *e, const run_result *a, const char *seqs)
{
    double idle = idle_share_of(e), ceil = ceiling_of(e), gceil = gpu_ceiling_of(e);
    const char *bound = bound_of(idle), *span = e->roi_start ? "region" : "trace";
    char cs[32], gs[32], ms[32];
    fmt_ratio(cs, sizeof cs, ceil);
    fmt_ratio(gs, sizeof gs, gceil);
    fmt_ratio(ms, sizeof ms, ceil > 0 && (gceil <= 0 || ceil < gceil) ? ceil : gceil);
    printf("  eager is %s: the GPU idles %.1f%% of the %s (busy %.1f of %.1f us)\n",
           !strcmp(bound, "host")  ? "host-bound"
           : !strcmp(bound, "gpu") ? "GPU-bound"
                                   : "partly host-bound",
           100 * idle, span, us(span_busy(e)), us(e->time_ns));
    printf("  ceiling: %llu kernel launches in the %s, %.1f us of host launch time (%.2f us "
           "each): without any launch host cost at most %s (the interposer ceiling); the GPU's "
           "own work allows at most %s; so at best %s\n",
           (unsigned long long)e->span_launches, span, us(e->span_launch_ns),
           e->span_launches ? us(e->span_launch_ns) / (double)e->span_launches : 0.0, cs, gs,
           ms);
    printf("  host time by cause (eager -> autograph, us; negative: autograph spends less):\n");
    for (int i = 0; i < SIM_C_COUNT; i++) {
        if (!e->host[i] && !a->host[i])
            continue;
        printf("    %-13s %12.1f -> %12.1f  (%+.1f)\n", sim_cat_names[i], us(e->host[i]),
               us(a->host[i]), us(a->host[i]) - us(e->host[i]));
    }
    printf("    in short: driver launch savings %.1f us; graph launches %.1f us; updates "
           "%.1f us; build %.1f us; engine's own time %.1f us; host waiting in syncs %+.1f us\n",
           us(e->host[SIM_C_LAUNCH] + e->host[SIM_C_COPY]) -
               us(a->host[SIM_C_LAUNCH] + a->host[SIM_C_COPY]),
           us(a->host[SIM_C_GRAPH_LAUNCH]), us(a->host[SIM_C_UPDATE]), us(a->host[SIM_C_BUILD]),
           us(a->host[SIM_C_ENGINE]), us(a->host[SIM_C_STALL]) - us(e->host[SIM_C_STALL]));
    printf("  GPU: busy %.1f -> %.1f us, gaps between work %.1f -> %.1f us (saved %.1f), idle "
           "%.1f -> %.1f us (%+.1f)\n",
           us(e->gpu.busy_ns), us(a->gpu.busy_ns), us(e->gpu.gap_ns), us(a->gpu.gap_ns),
           us(e->gpu.gap_ns) - us(a->gpu.gap_ns), us(e->gpu_idle_ns), us(a->gpu_idle_ns),
           us(a->gpu_idle_ns) - us(e->gpu_idle_ns));
    printf("  engine: %llu launches learning, %llu watched, %llu held, %llu rested, %llu other "
           "(%llu of them cold first launches; %llu calls cold after the program's own work); "
           "%llu graphs built, %llu replays, %llu hold time-outs (watchdog)\n",
           (unsigned long long)a->engine_calls[1], (unsigned long long)a->engine_calls[4],
           (unsigned long long)a->engine_calls[2], (unsigned long long)a->engine_calls[0],
           (unsigned long long)a->engine_calls[3],
           (unsigned long long)a->cold_launches, (unsigned long long)a->cold_calls,
           (unsigned long long)a->c[AG_ST_GRAPH_BUILT],
           (unsigned long long)a->c[AG_ST_GRAPH_LAUNCHES],
           (unsigned long long)a->gpu.watchdog_flushes);
    if (seqs)
        fputs(seqs, stdout);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: autograph simulate [--costs FILE] [--json FILE] [--explain] [--opt KEY=VALUE]...\n"
            "                          [--measure-engine] [--host-scale F] TRACE...\n"
            "\n"
            "Replays AUTOGRAPH_TRACE files (.agt, .agt.gz) through libautograph's engine over a\n"
            "simulated driver and GPU, eagerly and with the engine on, and predicts both times.\n"
            "\n"
            "  --costs FILE       the cost table (default: bench/costs/h100.json if present,\n"
            "                     else bench/costs/default.json)\n"
            "  --json FILE        the results as JSON too\n"
            "  --explain          where the difference comes from, per cause and sequence\n"
            "  --stats FILE       the engine's AUTOGRAPH_STATS JSON of the autograph run (one\n"
            "                     trace only): fates, counters, sequences\n"
            "  --opt KEY=VALUE    an AUTOGRAPH_KEY option for the autograph run (repeatable)\n"
            "  --measure-engine   the engine's own time measured on this CPU (wall clock around\n"
            "                     each engine call, less the simulated driver's) instead of the\n"
            "                     table's constants: not deterministic, and this CPU's caches\n"
            "                     are warmer than a real driver leaves them\n"
            "  --host-scale F     a host F times as slow as the recording one (0.5: twice as\n"
            "                     fast): the program's own time between calls, the driver's\n"
            "                     and the engine's, scaled; the GPU's is not. To compare with\n"
            "                     a run on another host, F = its eager time / the trace's\n");
}

/* The cost table: next to the executable's tree, then the install directory. */
static int find_costs(char *out, size_t n)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const char *names[2] = { "h100.json", "default.json" };
    if (len > 0) {
        exe[len] = 0;
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = 0;
        const char *rel[3] = { "/../bench/costs/", "/../../bench/costs/", "/../share/autograph/costs/" };
        for (int k = 0; k < 2; k++)
            for (int r = 0; r < 3; r++) {
                snprintf(out, n, "%.*s%s%s", (int)(n - 64), exe, rel[r], names[k]);
                if (!access(out, R_OK))
                    return 0;
            }
    }
    for (int k = 0; k < 2; k++) {
        snprintf(out, n, "%s/%s", AG_COSTDIR, names[k]);
        if (!access(out, R_OK))
            return 0;
    }
    return -1;
}

/* Addresses the engine hashes (its own copy layouts' addresses are part of copy shapes) are
 * the same in every run: the simulator re-executes itself once without address
 * randomisation. */
static void no_aslr(char **argv)
{
    int p = personality(0xffffffff);
    if (p == -1 || (p & ADDR_NO_RANDOMIZE) || getenv("AUTOGRAPH_SIM_ASLR"))
        return;
    if (personality((unsigned long)p | ADDR_NO_RANDOMIZE) == -1)
        return;
    setenv("AUTOGRAPH_SIM_ASLR", "off", 1);
    execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    no_aslr(argv);
    /* options anywhere (after "--", only traces) */
    char **traces = calloc((size_t)argc + 1, sizeof *traces);
    int ntraces = 0, i = 1;
    if (!traces)
        return 2;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--")) {
            while (++i < argc)
                traces[ntraces++] = argv[i];
            break;
        } else if (a[0] != '-' || !a[1]) {
            traces[ntraces++] = argv[i];
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(a, "--costs") && i + 1 < argc) {
            g.costs = argv[++i];
        } else if (!strcmp(a, "--json") && i + 1 < argc) {
            g.json = argv[++i];
        } else if (!strcmp(a, "--explain")) {
            g.explain = 1;
        } else if (!strcmp(a, "--stats") && i + 1 < argc) {
            g.stats = argv[++i];
        } else if (!strcmp(a, "--measure-engine")) {
            g.measure = 1;
        } else if (!strcmp(a, "--host-scale") && i + 1 < argc) {
            char *end;
            double f = strtod(argv[++i], &end);
            if (*end || !(f >= 0.05 && f <= 20)) {
                fprintf(stderr, "autograph simulate: bad --host-scale %s (a factor from 0.05 "
                                "to 20)\n", argv[i]);
                return 2;
            }
            sim_host_scale = f;
        } else if (!strcmp(a, "--opt") && i + 1 < argc) {
            const char *kv = argv[++i], *eq = strchr(kv, '=');
            int id = -1;
            for (int k = 0; eq && k < AG_OPT_COUNT; k++)
                if (strlen(ag_opt_table[k].name) == (size_t)(eq - kv) &&
                    !strncmp(ag_opt_table[k].name, kv, (size_t)(eq - kv)))
                    id = k;
            long long num;
            const char *str;
            if (id < 0 || ag_opt_parse((ag_opt_id)id, eq + 1, &num, &str)) {
                fprintf(stderr, "autograph simulate: bad --opt %s (KEY=VALUE, KEY an option "
                                "of `autograph config` without AUTOGRAPH_)\n", kv);
                return 2;
            }
            if (g.nopt == MAX_OPTS) {
                fprintf(stderr, "autograph simulate: too many --opt\n");
                return 2;
            }
            g.opt[g.nopt++] = kv;
        } else {
            fprintf(stderr, "autograph simulate: unknown option %s\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (!ntraces) {
        usage(stderr);
        return 2;
    }
    if (g.stats && ntraces > 1) {
        fprintf(stderr, "autograph simulate: --stats takes one trace\n");
        return 2;
    }
    char path[PATH_MAX], err[512];
    if (!g.costs) {
        if (find_costs(path, sizeof path)) {
            fprintf(stderr, "autograph simulate: no cost table found (bench/costs/default.json); "
                            "give one with --costs\n");
            return 2;
        }
        g.costs = path;
    }
    if (sim_costs_load(g.costs, &g_costs, err, sizeof err)) {
        fprintf(stderr, "autograph simulate: %s\n", err);
        return 2;
    }
    FILE *jf = NULL;
    if (g.json) {
        if (!(jf = fopen(g.json, "w"))) {
            fprintf(stderr, "autograph simulate: cannot write %s: %s\n", g.json, strerror(errno));
            return 2;
        }
        fprintf(jf, "{\n  \"schema\": \"libautograph-sim/1\",\n  \"costs\": ");
        json_string(jf, g_costs.path);
        fprintf(jf, ",\n  \"device\": ");
        json_string(jf, g_costs.device);
        fprintf(jf, ",\n  \"options\": [");
        for (int k = 0; k < g.nopt; k++) {
            fprintf(jf, "%s", k ? ", " : "");
            json_string(jf, g.opt[k]);
        }
        fprintf(jf, "],\n  \"traces\": [");
    }
    int failed = 0, first = 1;
    for (int k = 0; k < ntraces; k++) {
        const char *name = traces[k];
        sim_trace t;
        if (sim_trace_read(name, &t, err, sizeof err)) {
            fprintf(stderr, "autograph simulate: %s\n", err);
            failed = 1;
            continue;
        }
        run_result e, a;
        char *xe = NULL, *xa = NULL;
        if (run_child(&t, 0, &e, &xe) || run_child(&t, 1, &a, &xa)) {
            fprintf(stderr, "autograph simulate: %s: %s\n", name, e.ok ? a.err : e.err);
            failed = 1;
            free(xe);
            free(xa);
            sim_trace_free(&t);
            continue;
        }
        double ratio = a.time_ns ? (double)e.time_ns / (double)a.time_ns : 0;
        double cal = t.span_ns ? ((double)e.host_ns - (double)t.span_ns) / (double)t.span_ns : 0;
        /* the same over the program's region, where the ratio is taken (the whole trace's
         * calibration is mostly set-up, and hid an eager region 14% long in S1's trace) */
        int has_rcal = e.roi_start && t.roi_ns;
        double rcal = has_rcal ? ((double)e.time_ns - (double)t.roi_ns) / (double)t.roi_ns : 0;
        double ceil = ceiling_of(&e), idle = idle_share_of(&e);
        char cs[32];
        fmt_ratio(cs, sizeof cs, ceil);
        printf("%s: eager %.1f us, autograph %.1f us, ratio %.3fx (ceiling %s) | gpu idle %.1f "
               "/ %.1f us, host stall %.1f / %.1f us | launches %llu: held %llu, replayed %llu, "
               "passed %llu; graphs built %llu\n",
               name, us(e.time_ns), us(a.time_ns), ratio, cs, us(e.gpu_idle_ns),
               us(a.gpu_idle_ns), us(e.host[SIM_C_STALL]), us(a.host[SIM_C_STALL]),
               (unsigned long long)launches_of(&a), (unsigned long long)a.c[AG_ST_HELD],
               (unsigned long long)a.c[AG_ST_REPLAYED], (unsigned long long)a.c[AG_ST_PASSED],
               (unsigned long long)a.c[AG_ST_GRAPH_BUILT]);
        if (e.roi_start && a.roi_start)
            printf("  the ratio is over the program's profiler region (cuProfilerStart to "
                   "cuProfilerStop): eager %.1f us, autograph %.1f us\n",
                   us(e.time_ns), us(a.time_ns));
        if (sim_host_scale != 1.0)
            printf("  host scaled x%.4g: the calibration lines below compare a host of another "
                   "speed with the recording\n", sim_host_scale);
        printf("  calibration: eager predicted %.1f us on the host vs %.1f us recorded (%+.2f%%)"
               "%s%s\n",
               us(e.host_ns), us(t.span_ns), 100 * cal,
               (t.file->flags & AG_TRF_GPU) ? "" : "; no GPU durations in the trace (tiny_kernel used)",
               t.dropped ? "; the recorder dropped calls" : "");
        if (has_rcal)
            printf("  calibration over the region: eager predicted %.1f us vs %.1f us recorded "
                   "(%+.2f%%)\n", us(e.time_ns), us(t.roi_ns), 100 * rcal);
        if (e.gpu.anomalies || a.gpu.anomalies)
            printf("  warning: %llu / %llu kernels or copies reached the simulated driver with "
                   "no traced record\n",
                   (unsigned long long)e.gpu.anomalies, (unsigned long long)a.gpu.anomalies);
        if (g.explain)
            explain(&e, &a, xa);
        if (jf) {
            fprintf(jf, "%s\n    {\"trace\": ", first ? "" : ",");
            json_string(jf, name);
            fprintf(jf, ", \"calls\": %zu, \"gpu_records\": %llu, \"recorded_span_us\": %.3f, "
                        "\"ratio\": %.6f, \"calibration\": %.6f, \"host_scale\": %.6g,\n     ",
                    t.ncalls, (unsigned long long)t.ngpu, us(t.span_ns), ratio, cal, sim_host_scale);
            if (has_rcal)
                fprintf(jf, "\"recorded_region_us\": %.3f, \"region_calibration\": %.6f, ",
                        us(t.roi_ns), rcal);
            if (ceil > 0)
                fprintf(jf, "\"ceiling\": %.6f, ", ceil);
            else
                fprintf(jf, "\"ceiling\": null, ");
            fprintf(jf, "\"ceiling_launches\": %llu, \"ceiling_launch_host_us\": %.3f, ",
                    (unsigned long long)e.span_launches, us(e.span_launch_ns));
            if (gpu_ceiling_of(&e) > 0)
                fprintf(jf, "\"gpu_ceiling\": %.6f, ", gpu_ceiling_of(&e));
            else
                fprintf(jf, "\"gpu_ceiling\": null, ");
            fprintf(jf, "\"eager_gpu_idle_share\": %.6f, \"eager_bound\": \"%s\",\n     "
                        "\"eager\": ",
                    idle, bound_of(idle));
            json_run(jf, &e);
            fprintf(jf, ",\n     \"autograph\": ");
            json_run(jf, &a);
            fprintf(jf, "}");
            first = 0;
        }
        free(xe);
        free(xa);
        sim_trace_free(&t);
    }
    if (jf) {
        fprintf(jf, "%s]\n}\n", first ? "" : "\n  ");
        if (fclose(jf)) {
            fprintf(stderr, "autograph simulate: cannot write %s\n", g.json);
            failed = 1;
        }
    }
    free(traces);
    return failed;
}
