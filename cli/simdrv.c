/* The simulated driver (see simdrv.h and docs/MODEL.md). */
#include "simdrv.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uthash.h>

#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/engine.h"

/* ---- state ------------------------------------------------------------------------------ */

const char *const sim_cat_names[SIM_C_COUNT] = {
#define SIM_CAT_NAME(id, name) name,
    SIM_CATS(SIM_CAT_NAME)
#undef SIM_CAT_NAME
};

uint64_t sim_H;
uint64_t sim_host[SIM_C_COUNT];
sim_result_gpu sim_gpu;
int sim_off_critical;
uint64_t sim_drv_real_ns, sim_drv_real_calls;
int sim_measure;

/* The engine's driver table (interpose/real.c defines it in the library). */
ag_driver ag_drv;

static const sim_costs *C;

/* The GPU model in the work's own times (docs/MODEL.md, "Traced GPU durations"), derived from
 * the cost table at simdrv_init. A traced duration (events around the call) is turned into
 * the work's own time, `exec`, by sim_exec_of; the gaps are what the GPU adds between pieces
 * of work of that own time. */
static struct {
    double ev_busy;     /* what events around a call add to it when the call is queued (the
                         * start event fires when the earlier work ends): -eager_kernel_gap */
    double ev_idle;     /* ... when the stream is idle as the start event is recorded:
                         * tiny_kernel_idle - tiny_kernel_span (beyond the launch's own host
                         * time, which the traced duration then also holds) */
    double k_gap;       /* eager kernel after kernel: tiny_kernel + eager_kernel_gap - span */
    double g_gap;       /* graph kernel node after node: tiny_kernel + graph_kernel_gap - span */
    double c_busy;      /* copies and other timed calls: ev_busy, at least 0 */
    double c_gap;       /* eager copy after work: eager_kernel_gap + c_busy */
    double memset_exec, htod_exec, dtoh_exec; /* the small ones' own times */
    double gm_gap, gc_gap; /* graph memset / memcpy node gaps */
    double lat_ret;     /* launch_latency - launch: from a call's return to its work */
    int exact;          /* the trace's durations are own times already (AG_TRF_GPU_EXACT) */
    int sampled;        /* only a sample of the launches is timed (AG_TRF_GPU_SAMPLED) */
} M;
static const sim_call *g_calls;  /* the trace's calls, for the index of a call */
static uint32_t *g_exec;         /* sim_trace.exec */
/* a cost in ns (a fit's small sizes can come out below zero: nothing) */
#define NS(x) ((x) > 0 ? (uint64_t)((x) + 0.5) : 0)
/* a GPU gap in ns: negative when the traced durations it follows include the timing events'
 * own time (docs/MODEL.md) */
#define GAP(x) ((int64_t)((x) < 0 ? (x) - 0.5 : (x) + 0.5))

/* the union of busy intervals, assuming work mostly arrives in time order (MODEL.md) */
static uint64_t g_busy_end;

typedef struct fifo {
    const sim_call **q;
    size_t head, n, cap;
} fifo;

typedef struct sstream {
    uint64_t key;
    uint64_t ctx;
    uint8_t blocking, capturing, known;
    uint8_t after_graph;     /* its last work was a graph launch (graph_boundary_gap) */
    uint64_t ready;
    fifo f;
    UT_hash_handle hh;
} sstream;
static sstream *g_streams;
static sstream *g_legacy;

typedef struct sfunc {
    uint64_t handle;
    uint32_t id;
    const ag_tr_func *f;
    UT_hash_handle hh, hid;
} sfunc;
static sfunc *g_funcs_h, *g_funcs_id;

typedef struct smem {
    uint64_t p;
    int kind;
    UT_hash_handle hh;
} smem;
static smem *g_mem;

static uint64_t g_ctx_current = 0xC0C0;

/* ---- handles: small fake numbers ---------------------------------------------------------- */

#define H_EVENT 0x5e000000ull
#define H_GRAPH 0x5f000000ull
#define H_NODE 0x60000000ull
#define H_EXEC 0x70000000ull
#define H_STREAM 0x7f000000ull
#define H_STEP 16u

enum { N_KERNEL, N_MEMSET, N_MEMCPY };
#define N_PDL 0x80u /* (a graph node's type bit) a kernel node reached by a programmatic edge */

typedef struct sgraph {
    uint32_t n, cap;
    uint8_t *type;
    uint32_t updated; /* an exec's nodes set since its last launch (their cost is paid there);
                       * a template graph's, since its last whole-graph update or instantiation
                       * (assumed to cost the exec's next launch the same: not measured) */
    uint32_t fn_updated; /* of them, an exec's kernel nodes given another function */
    void **fn;        /* each kernel node's function (NULL for others): a set that changes it
                       * costs more (host_ns.exec_set_params_fn_per_node, where measured) */
    uint64_t big;     /* its kernel nodes' parameter bytes beyond 16 (node_big), summed */
    uint64_t big_updated; /* of the nodes in `updated` */
} sgraph;
typedef struct snode {
    uint32_t graph, pos; /* its graph, and its place in the graph's type array */
    uint8_t type;
} snode;
typedef struct sevent {
    uint64_t t;
    uint8_t recorded;
} sevent;

static sgraph *g_graphs, *g_execs;
static snode *g_nodes;
static sevent *g_events;
static size_t g_ngraphs, g_nexecs, g_nnodes, g_nevents, g_cgraphs, g_cexecs, g_cnodes, g_cevents;
static uint64_t g_nstreams_made;

static int grow(void **p, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static size_t handle_index(uint64_t h, uint64_t base, size_t n)
{
    if (h < base || (h - base) % H_STEP || (h - base) / H_STEP >= n)
        return (size_t)-1;
    return (size_t)((h - base) / H_STEP);
}

/* ---- host clock ---------------------------------------------------------------------------- */

uint64_t ag_sim_now_ns(void)
{
    return sim_H;
}

double sim_host_scale = 1.0;

uint64_t sim_host_scaled(uint64_t ns)
{
    return sim_host_scale == 1.0 ? ns : (uint64_t)((double)ns * sim_host_scale + 0.5);
}

void sim_host_add(enum sim_cat cat, uint64_t ns)
{
    ns = sim_host_scaled(ns);
    sim_H += ns;
    if (!sim_off_critical)
        sim_host[cat] += ns;
}

void sim_host_wait(uint64_t t)
{
    if (t > sim_H) {
        if (!sim_off_critical)
            sim_host[SIM_C_STALL] += t - sim_H;
        sim_H = t;
    }
}

/* Driver time the engine spends on its own behalf is not its own CPU time (--measure-engine
 * subtracts it): each entry point below is bracketed. */
uint64_t sim_real_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define DRV_IN() uint64_t drv_t0_ = sim_measure ? sim_real_ns() : 0
#define DRV_OUT()                                                                              \
    (sim_measure ? (void)(sim_drv_real_ns += sim_real_ns() - drv_t0_, sim_drv_real_calls++)    \
                 : (void)0)

/* ---- streams and the GPU timeline ------------------------------------------------------- */

uint64_t sim_stream_key(uint64_t stream, int ptsz)
{
    if (stream == 0)
        return ptsz ? SIM_KEY_PTDS : SIM_KEY_LEGACY;
    if (stream == (uint64_t)(uintptr_t)CU_STREAM_LEGACY)
        return SIM_KEY_LEGACY;
    if (stream == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)
        return SIM_KEY_PTDS;
    return stream;
}

static sstream *stream_get(uint64_t key)
{
    sstream *s;
    HASH_FIND(hh, g_streams, &key, sizeof key, s);
    if (s)
        return s;
    s = calloc(1, sizeof *s);
    if (!s)
        abort();
    s->key = key;
    s->ctx = g_ctx_current;
    s->blocking = 1;
    HASH_ADD(hh, g_streams, key, sizeof s->key, s);
    if (key == SIM_KEY_LEGACY)
        g_legacy = s;
    return s;
}

static sstream *stream_of(uint64_t stream, int ptsz)
{
    return stream_get(sim_stream_key(stream, ptsz));
}

/* When work issued on s now may start: after s's own work and, by the legacy default stream's
 * rule, after the other side's (blocking streams wait for the legacy stream and vice versa). */
static uint64_t dep_of(sstream *s)
{
    uint64_t d = s->ready;
    if (s->key == SIM_KEY_LEGACY) {
        for (sstream *t = g_streams; t; t = t->hh.next)
            if (t != s && t->blocking && t->ready > d)
                d = t->ready;
    } else if (s->blocking && g_legacy && g_legacy->ready > d) {
        d = g_legacy->ready;
    }
    return d;
}

/* The busy intervals behind sim_gpu.busy_ns (disjoint, in time order: the union's own
 * assumption), for the busy time inside a window (sim_busy_between). */
static struct {
    uint64_t (*iv)[2];
    size_t n, cap;
} B;

static void busy(uint64_t a, uint64_t b)
{
    if (b <= a)
        return;
    if (a >= g_busy_end) {
        sim_gpu.busy_ns += b - a;
        if (B.n == B.cap) {
            B.cap = B.cap ? 2 * B.cap : 4096;
            if (!(B.iv = realloc(B.iv, B.cap * sizeof *B.iv)))
                abort();
        }
        B.iv[B.n][0] = a;
        B.iv[B.n++][1] = b;
    } else if (b > g_busy_end) {
        sim_gpu.busy_ns += b - g_busy_end;
        B.iv[B.n - 1][1] = b; /* (a < g_busy_end: there is a last interval, ending there) */
    }
    if (b > g_busy_end)
        g_busy_end = b;
    if (b > sim_gpu.end_ns)
        sim_gpu.end_ns = b;
}

uint64_t sim_busy_between(uint64_t t0, uint64_t t1)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < B.n; i++) {
        uint64_t a = B.iv[i][0] > t0 ? B.iv[i][0] : t0, b = B.iv[i][1] < t1 ? B.iv[i][1] : t1;
        if (b > a)
            sum += b - a;
    }
    return sum;
}

/* One piece of work of dur ns on s: starts at the later of its dependencies plus the gap and
 * `earliest` (the host's issue time plus the launch latency). Returns its end. */
static uint64_t run_on(sstream *s, uint64_t earliest, int64_t gap, uint64_t dur)
{
    uint64_t d = dep_of(s);
    uint64_t after = gap >= 0 ? d + (uint64_t)gap : d > (uint64_t)-gap ? d - (uint64_t)-gap : 0;
    uint64_t start = after > earliest ? after : earliest;
    if (start > d && gap > 0)
        sim_gpu.gap_ns += start - d < (uint64_t)gap ? start - d : (uint64_t)gap;
    busy(start, start + dur);
    s->ready = start + dur;
    s->after_graph = 0;
    return s->ready;
}

uint64_t sim_stream_ready(uint64_t stream, int ptsz)
{
    return dep_of(stream_of(stream, ptsz));
}

uint64_t sim_all_ready(void)
{
    uint64_t t = 0;
    for (sstream *s = g_streams; s; s = s->hh.next)
        if (s->ready > t)
            t = s->ready;
    return t;
}

void sim_stream_wait_until(uint64_t stream, int ptsz, uint64_t t)
{
    sstream *s = stream_of(stream, ptsz);
    if (t > s->ready)
        s->ready = t;
}

uint64_t sim_stream_run(uint64_t stream, int ptsz, uint64_t dur)
{
    sstream *s = stream_of(stream, ptsz);
    if (s->capturing)
        return sim_H;
    return run_on(s, sim_H + NS(C->gpu.launch_latency), GAP(M.c_gap), dur);
}

void sim_capture(uint64_t stream, int ptsz, int on)
{
    stream_of(stream, ptsz)->capturing = (uint8_t)on;
}

/* ---- the traced calls' FIFOs ---------------------------------------------------------------- */

void sim_push(uint64_t stream, int ptsz, const sim_call *c)
{
    sstream *s = stream_of(stream, ptsz);
    fifo *f = &s->f;
    if (f->n == f->cap) {
        size_t nc = f->cap ? f->cap * 2 : 64;
        const sim_call **q = malloc(nc * sizeof *q);
        if (!q)
            abort();
        for (size_t i = 0; i < f->n; i++)
            q[i] = f->q[(f->head + i) % f->cap];
        free(f->q);
        f->q = q;
        f->head = 0;
        f->cap = nc;
    }
    f->q[(f->head + f->n++) % f->cap] = c;
}

static const sim_call *pop(sstream *s)
{
    fifo *f = &s->f;
    if (!f->n) {
        sim_gpu.anomalies++;
        return NULL;
    }
    const sim_call *c = f->q[f->head];
    f->head = (f->head + 1) % f->cap;
    f->n--;
    return c;
}

/* A sampled trace (AG_TRF_GPU_SAMPLED): a launch without a GPU record takes the own time of
 * its function's timed launches with the same dimensions (grid, block, shared memory): the
 * median of the latest EST_RING derived before it (the recorder times the first launch of each
 * function and dimensions, so there is one). */
#define EST_RING 9
typedef struct est_key {
    uint32_t func, grid[3], block[3], smem;
} est_key;
typedef struct est {
    est_key k;
    uint32_t v[EST_RING];
    uint32_t n;          /* samples so far (the ring holds the latest EST_RING) */
    UT_hash_handle hh;
} est;
static est *g_est;

static est *est_of(const sim_call *c, int add)
{
    const ag_tr_launch *L = (const ag_tr_launch *)c->h;
    est_key k;
    memset(&k, 0, sizeof k);
    k.func = L->func;
    memcpy(k.grid, L->grid, sizeof k.grid);
    memcpy(k.block, L->block, sizeof k.block);
    k.smem = L->smem;
    est *e;
    HASH_FIND(hh, g_est, &k, sizeof k, e);
    if (!e && add) {
        if (!(e = calloc(1, sizeof *e)))
            abort();
        e->k = k;
        HASH_ADD(hh, g_est, k, sizeof e->k, e);
    }
    return e;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* 1 and *v: the estimate for an untimed launch, where its key has samples. */
static int est_get(const sim_call *c, uint64_t *v)
{
    est *e = est_of(c, 0);
    if (!e || !e->n)
        return 0;
    uint32_t m = e->n < EST_RING ? e->n : EST_RING, s[EST_RING];
    memcpy(s, e->v, m * sizeof *s);
    qsort(s, m, sizeof *s, cmp_u32);
    *v = m % 2 ? s[m / 2] : ((uint64_t)s[m / 2 - 1] + s[m / 2] + 1) / 2;
    return 1;
}

static void est_add(const sim_call *c, uint64_t v)
{
    est *e = est_of(c, 1);
    e->v[e->n++ % EST_RING] = (uint32_t)v;
}

/* The own GPU time of a traced call's work (kind: N_KERNEL, N_MEMSET, N_MEMCPY; dtoh for a
 * device-to-host copy), issued at `issue` on s whose earlier work ends at `ready`, its host
 * call taking host_ns (pageable: a copy that returns only when done). The first run that puts
 * the call's work on the GPU (the eager run) derives it and keeps it in the trace's exec
 * array; later, and in the autograph run (which the simulator hands the eager run's array),
 * the kept value is used: the work's own time does not depend on how it was issued. */
static uint64_t own_time(const sim_call *c, int kind, int dtoh, uint64_t issue, uint64_t ready,
                        uint64_t host_ns, int pageable)
{
    double def = kind == N_KERNEL   ? C->gpu.tiny_kernel_span
                 : kind == N_MEMSET ? M.memset_exec
                 : dtoh             ? M.dtoh_exec
                                    : M.htod_exec;
    if (!c)
        return NS(def);
    size_t i = g_calls && g_exec ? (size_t)(c - g_calls) : (size_t)-1;
    if (i != (size_t)-1 && g_exec[i] != UINT32_MAX)
        return g_exec[i];
    if (!c->has_gpu) {
        uint64_t v;
        if (!M.sampled || c->h->type != AG_TR_LAUNCH || !est_get(c, &v))
            return NS(def);
        if (i != (size_t)-1) /* kept for the autograph run, like a derived one */
            g_exec[i] = (uint32_t)v;
        return v;
    }
    double e;
    if (M.exact) {
        e = c->gpu_ns;
    } else {
        /* Queued (the GPU busy with the stream's earlier work when the work arrives: the start
         * event fired when that work ended, the work followed after its front end g): the
         * traced duration is g + exec + the events' busy cost. Else (idle): the start event
         * fired as soon as it was recorded, and the work arrived after the call's own host
         * time: host_ns + exec + the events' idle cost. (A stream whose earlier work ends
         * while the call is being issued is taken as idle: exec cannot be told from the start
         * event's wait there, and taking the earlier work's end would feed each estimate into
         * the next one.) The recorder's flag, where the trace has one, decides. */
        double g = kind == N_KERNEL ? M.k_gap : 0;
        double q = (double)issue, r = (double)ready;
        int queued = c->gpu_flags & AG_TRG_QUEUED ? 1
                     : c->gpu_flags & AG_TRG_IDLE ? 0
                     : pageable                    ? r > q
                                                   : r + g > q + (double)host_ns + M.lat_ret;
        double w = queued ? g : pageable ? 0 : (double)host_ns;
        double ev = queued ? (kind == N_KERNEL ? M.ev_busy : M.c_busy) : M.ev_idle;
        e = (double)c->gpu_ns - ev - w;
    }
    uint64_t v = NS(e);
    if (v >= UINT32_MAX)
        v = UINT32_MAX - 1;
    if (i != (size_t)-1)
        g_exec[i] = (uint32_t)v;
    if (M.sampled && c->h->type == AG_TR_LAUNCH)
        est_add(c, v);
    return v;
}

void sim_exec_attach(const sim_call *calls, uint32_t *exec)
{
    g_calls = calls;
    g_exec = exec;
}

uint64_t sim_exec_call(const sim_call *c, uint64_t stream, int ptsz, uint64_t issue,
                       uint64_t host_ns, int blocking)
{
    return own_time(c, N_MEMCPY, 1, issue, dep_of(stream_of(stream, ptsz)), host_ns, blocking);
}

/* ---- declarations ------------------------------------------------------------------------------ */

void sim_decl_stream(const ag_tr_stream *r)
{
    uint64_t key = sim_stream_key(r->h.stream, (r->flags & AG_TRST_PTSZ) != 0);
    sstream *s = stream_get(key);
    s->known = 1;
    if (r->ctx)
        s->ctx = r->ctx;
    s->blocking = key == SIM_KEY_LEGACY || !(r->flags & AG_TRST_NONBLOCKING);
    if (!(r->flags & AG_TRST_DEFAULT) && key > SIM_KEY_PTDS && r->ctx && g_ctx_current == 0xC0C0)
        g_ctx_current = r->ctx; /* the first context seen is the one current at first */
}

void sim_decl_func(const ag_tr_func *f)
{
    sfunc *e;
    HASH_FIND(hh, g_funcs_h, &f->handle, sizeof f->handle, e);
    if (e) { /* a handle reused (after an unload): the newer function */
        HASH_DELETE(hh, g_funcs_h, e);
    }
    sfunc *n = calloc(1, sizeof *n);
    if (!n)
        abort();
    n->handle = f->handle;
    n->id = f->id;
    n->f = f;
    HASH_ADD(hh, g_funcs_h, handle, sizeof n->handle, n);
    HASH_FIND(hid, g_funcs_id, &f->id, sizeof f->id, e);
    if (e)
        HASH_DELETE(hid, g_funcs_id, e);
    HASH_ADD(hid, g_funcs_id, id, sizeof n->id, n);
}

const ag_tr_func *sim_func_by_id(uint32_t id)
{
    sfunc *e;
    HASH_FIND(hid, g_funcs_id, &id, sizeof id, e);
    return e ? e->f : NULL;
}

static const ag_tr_func *func_by_handle(const void *h)
{
    uint64_t k = (uint64_t)(uintptr_t)h;
    sfunc *e;
    HASH_FIND(hh, g_funcs_h, &k, sizeof k, e);
    return e ? e->f : NULL;
}

/* A kernel node's parameter bytes beyond the 16 of the cost table's tiny kernel, which its plain
 * node keys were measured with (host_ns.*_per_byte charge these); 0 for other nodes. */
static uint32_t node_big(const void *fn)
{
    const ag_tr_func *f = fn ? func_by_handle(fn) : NULL;
    return f && f->param_bytes > 16 ? f->param_bytes - 16 : 0;
}

void sim_set_ctx_for(uint64_t stream, int ptsz)
{
    uint64_t key = sim_stream_key(stream, ptsz);
    if (key <= SIM_KEY_PTDS)
        return; /* a default stream: the current context's */
    sstream *s = stream_get(key);
    if (s->known && s->ctx)
        g_ctx_current = s->ctx;
}

void sim_set_mem(uint64_t ptr, int kind)
{
    smem *m;
    HASH_FIND(hh, g_mem, &ptr, sizeof ptr, m);
    if (!m) {
        if (!(m = calloc(1, sizeof *m)))
            abort();
        m->p = ptr;
        HASH_ADD(hh, g_mem, p, sizeof m->p, m);
    }
    m->kind = kind;
}

static int mem_of(uint64_t p)
{
    smem *m;
    HASH_FIND(hh, g_mem, &p, sizeof p, m);
    return m ? m->kind : AG_MEM_PAGEABLE;
}

void simdrv_init(const sim_costs *c, uint32_t trace_flags)
{
    C = c;
    const double span = c->gpu.tiny_kernel_span;
    memset(&M, 0, sizeof M);
    M.exact = (trace_flags & AG_TRF_GPU_EXACT) != 0;
    M.sampled = (trace_flags & AG_TRF_GPU_SAMPLED) != 0;
    M.ev_busy = -c->gpu.eager_kernel_gap;
    M.ev_idle = c->gpu.tiny_kernel_idle - span;
    M.k_gap = c->gpu.tiny_kernel + c->gpu.eager_kernel_gap - span;
    M.g_gap = c->gpu.tiny_kernel + c->gpu.graph_kernel_gap - span;
    M.c_busy = M.ev_busy > 0 ? M.ev_busy : 0;
    M.c_gap = c->gpu.eager_kernel_gap + M.c_busy;
    M.memset_exec = c->gpu.memset_small - M.c_busy > 0 ? c->gpu.memset_small - M.c_busy : 0;
    M.htod_exec = c->gpu.memcpy_small_htod - M.c_busy > 0 ? c->gpu.memcpy_small_htod - M.c_busy : 0;
    M.dtoh_exec = c->gpu.memcpy_small_dtoh - M.c_busy > 0 ? c->gpu.memcpy_small_dtoh - M.c_busy : 0;
    M.gm_gap = c->gpu.memset_small + c->gpu.graph_memset_gap - M.memset_exec;
    M.gc_gap = c->gpu.memcpy_small_dtoh + c->gpu.graph_memcpy_gap - M.dtoh_exec;
    M.lat_ret = c->gpu.launch_latency - c->host.launch > 0 ? c->gpu.launch_latency - c->host.launch : 0;
    sim_H = 0;
    memset(sim_host, 0, sizeof sim_host);
    memset(&sim_gpu, 0, sizeof sim_gpu);
    B.n = 0;
    stream_get(SIM_KEY_LEGACY);
    stream_get(SIM_KEY_PTDS);
}

/* ---- launches ------------------------------------------------------------------------------- */

/* A kernel reaches the GPU eagerly: the traced launch at the stream's FIFO front, at its own
 * host duration; its traced result. */
static CUresult launch(CUstream hs, int ptsz, int ex)
{
    DRV_IN();
    sstream *s = stream_of((uint64_t)(uintptr_t)hs, ptsz);
    const sim_call *c = pop(s);
    const ag_tr_launch *L = c && c->h->type == AG_TR_LAUNCH ? (const ag_tr_launch *)c->h : NULL;
    uint64_t issue = sim_H;
    uint64_t host = L ? L->h.dur_ns : NS(ex ? C->host.launch_ex : C->host.launch);
    sim_host_add(SIM_C_LAUNCH, host);
    CUresult r = L ? (CUresult)L->result : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS && !s->capturing) {
        /* (the kernel starts lat_ret after its call returns, or after the work before it) */
        run_on(s, issue + host + NS(M.lat_ret), GAP(M.k_gap),
               own_time(L ? c : NULL, N_KERNEL, 0, issue, dep_of(s), host, 0));
        sim_gpu.kernels++;
    }
    DRV_OUT();
    return r;
}

static CUresult d_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                         unsigned by, unsigned bz, unsigned sm, CUstream s, void **p, void **e)
{
    return launch(s, 0, 0);
}
static CUresult d_launch_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                              unsigned by, unsigned bz, unsigned sm, CUstream s, void **p,
                              void **e)
{
    return launch(s, 1, 0);
}
static CUresult d_launch_ex(const CUlaunchConfig *cfg, CUfunction f, void **p, void **e)
{
    return launch(cfg ? cfg->hStream : NULL, 0, 1);
}
static CUresult d_launch_ex_ptsz(const CUlaunchConfig *cfg, CUfunction f, void **p, void **e)
{
    return launch(cfg ? cfg->hStream : NULL, 1, 1);
}
static CUresult d_coop(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned sm, CUstream s, void **p)
{
    return launch(s, 0, 0);
}
static CUresult d_coop_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                            unsigned by, unsigned bz, unsigned sm, CUstream s, void **p)
{
    return launch(s, 1, 0);
}

/* ---- functions --------------------------------------------------------------------------------- */

static CUresult param_info(const void *h, int as_kernel, size_t i, size_t *off, size_t *sz)
{
    DRV_IN();
    sim_host_add(SIM_C_QUERY, NS(C->host.func_get_param_info));
    const ag_tr_func *f = func_by_handle(h);
    CUresult r;
    if (!f || !(f->flags & AG_TRFN_KERNEL) != !as_kernel)
        r = CUDA_ERROR_INVALID_HANDLE;
    else if (!(f->flags & AG_TRFN_LAYOUT))
        r = CUDA_ERROR_NOT_SUPPORTED;
    else if (i >= f->nparams)
        r = CUDA_ERROR_INVALID_VALUE;
    else {
        *off = ag_trr_func_params(f)[i] >> 16;
        *sz = ag_trr_func_params(f)[i] & 0xffff;
        r = CUDA_SUCCESS;
    }
    DRV_OUT();
    return r;
}
static CUresult d_func_param(CUfunction f, size_t i, size_t *off, size_t *sz)
{
    return param_info(f, 0, i, off, sz);
}
static CUresult d_kernel_param(CUkernel k, size_t i, size_t *off, size_t *sz)
{
    return param_info(k, 1, i, off, sz);
}
static CUresult name_of(const char **out, const void *h, int as_kernel)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.func_get_param_info));
    const ag_tr_func *f = func_by_handle(h);
    if (!f || !(f->flags & AG_TRFN_KERNEL) != !as_kernel)
        return CUDA_ERROR_INVALID_HANDLE;
    *out = ag_trr_func_name(f);
    return CUDA_SUCCESS;
}
static CUresult d_func_name(const char **out, CUfunction f)
{
    return name_of(out, f, 0);
}
static CUresult d_kernel_name(const char **out, CUkernel k)
{
    return name_of(out, k, 1);
}
/* Modules and libraries are not in the trace (profiles are not simulated). */
static CUresult d_func_module(CUmodule *m, CUfunction f)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult d_kernel_library(CUlibrary *l, CUkernel k)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult d_module_count(unsigned *n, CUmodule m)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult d_library_count(unsigned *n, CUlibrary l)
{
    return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- contexts and streams ------------------------------------------------------------------- */

static CUresult d_ctx_get(CUcontext *c)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.ctx_get_current));
    *c = (CUcontext)(uintptr_t)g_ctx_current;
    return CUDA_SUCCESS;
}
static CUresult d_ctx_set(CUcontext c)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.ctx_get_current));
    g_ctx_current = (uint64_t)(uintptr_t)c;
    return CUDA_SUCCESS;
}
static CUresult d_stream_flags(CUstream hs, unsigned *flags)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.stream_get_flags));
    *flags = stream_of((uint64_t)(uintptr_t)hs, 0)->blocking ? 0 : CU_STREAM_NON_BLOCKING;
    return CUDA_SUCCESS;
}
static CUresult d_stream_ctx(CUstream hs, CUcontext *c)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.stream_get_ctx));
    *c = (CUcontext)(uintptr_t)stream_of((uint64_t)(uintptr_t)hs, 0)->ctx;
    return CUDA_SUCCESS;
}
static CUresult d_stream_capturing(CUstream hs, CUstreamCaptureStatus *st)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.stream_get_flags));
    *st = stream_of((uint64_t)(uintptr_t)hs, 0)->capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                                            : CU_STREAM_CAPTURE_STATUS_NONE;
    return CUDA_SUCCESS;
}
/* Stream attributes are not in the trace: the defaults. */
static CUresult d_stream_attr(CUstream hs, CUstreamAttrID id, CUstreamAttrValue *v)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.stream_get_flags));
    memset(v, 0, sizeof *v);
    return CUDA_SUCCESS;
}
static CUresult d_stream_create(CUstream *out, unsigned flags)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_create)); /* (no key of its own: rare) */
    uint64_t h = H_STREAM + H_STEP * g_nstreams_made++;
    sstream *s = stream_get(h);
    s->known = 1;
    s->blocking = !(flags & CU_STREAM_NON_BLOCKING);
    *out = (CUstream)(uintptr_t)h;
    return CUDA_SUCCESS;
}
static CUresult d_stream_destroy(CUstream hs)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_create));
    return CUDA_SUCCESS;
}
static CUresult d_stream_sync(CUstream hs)
{
    DRV_IN();
    sim_host_add(SIM_C_SYNC, NS(C->host.stream_sync_empty));
    if (!sim_off_critical)
        sim_host_wait(dep_of(stream_of((uint64_t)(uintptr_t)hs, 0)));
    DRV_OUT();
    return CUDA_SUCCESS;
}

/* ---- events ----------------------------------------------------------------------------------- */

static sevent *event_of(CUevent e)
{
    size_t i = handle_index((uint64_t)(uintptr_t)e, H_EVENT, g_nevents);
    return i == (size_t)-1 ? NULL : &g_events[i];
}
static CUresult d_event_create(CUevent *e, unsigned flags)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_create));
    if (grow((void **)&g_events, &g_cevents, g_nevents, sizeof *g_events))
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(&g_events[g_nevents], 0, sizeof *g_events);
    *e = (CUevent)(uintptr_t)(H_EVENT + H_STEP * g_nevents++);
    return CUDA_SUCCESS;
}
static CUresult d_event_destroy(CUevent e)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_create));
    return event_of(e) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}
static CUresult d_event_record(CUevent e, CUstream hs)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_record));
    sevent *v = event_of(e);
    if (!v)
        return CUDA_ERROR_INVALID_HANDLE;
    v->t = dep_of(stream_of((uint64_t)(uintptr_t)hs, 0));
    v->recorded = 1;
    return CUDA_SUCCESS;
}
/* Complete when the GPU passed its time by now. */
static CUresult d_event_query(CUevent e)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_query));
    sevent *v = event_of(e);
    if (!v)
        return CUDA_ERROR_INVALID_HANDLE;
    return !v->recorded || v->t <= sim_H ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}
static CUresult d_event_elapsed(float *ms, CUevent a, CUevent b)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.event_elapsed));
    sevent *x = event_of(a), *y = event_of(b);
    if (!x || !y)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!x->recorded || !y->recorded || x->t > sim_H || y->t > sim_H)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)(((double)y->t - (double)x->t) / 1e6);
    return CUDA_SUCCESS;
}
static CUresult d_stream_wait_event(CUstream hs, CUevent e, unsigned flags)
{
    sim_host_add(SIM_C_EVENTS, NS(C->host.stream_wait_event));
    sevent *v = event_of(e);
    if (!v)
        return CUDA_ERROR_INVALID_HANDLE;
    if (v->recorded)
        sim_stream_wait_until((uint64_t)(uintptr_t)hs, 0, v->t);
    return CUDA_SUCCESS;
}

/* ---- graphs ---------------------------------------------------------------------------------- */

static sgraph *graph_of(CUgraph g)
{
    size_t i = handle_index((uint64_t)(uintptr_t)g, H_GRAPH, g_ngraphs);
    return i == (size_t)-1 ? NULL : &g_graphs[i];
}
static sgraph *exec_of(CUgraphExec x)
{
    size_t i = handle_index((uint64_t)(uintptr_t)x, H_EXEC, g_nexecs);
    return i == (size_t)-1 ? NULL : &g_execs[i];
}
/* The template graph a node belongs to. */
static sgraph *node_graph(CUgraphNode n)
{
    size_t i = handle_index((uint64_t)(uintptr_t)n, H_NODE, g_nnodes);
    return i == (size_t)-1 || g_nodes[i].graph >= g_ngraphs ? NULL : &g_graphs[g_nodes[i].graph];
}
/* A kernel node's function: its CUfunction, or its CUkernel (a library's kernel, as the
 * engine fills a node of a kernel launched through cudart). */
static void *node_fn(const CUDA_KERNEL_NODE_PARAMS *p)
{
    return !p ? NULL : p->func ? (void *)p->func : (void *)p->kern;
}
/* A template graph's node set (before a whole-graph update): part of the update, and its
 * cost at the exec's next launch counted. */
static CUresult node_set(CUgraphNode n, void *fn)
{
    sgraph *G = node_graph(n);
    if (G) {
        G->updated++;
        G->big_updated += node_big(fn);
    }
    size_t i = handle_index((uint64_t)(uintptr_t)n, H_NODE, g_nnodes);
    if (G && fn && g_nodes[i].pos < G->n) {
        G->big += (uint64_t)node_big(fn) - node_big(G->fn[g_nodes[i].pos]);
        G->fn[g_nodes[i].pos] = fn;
    }
    sim_host_add(SIM_C_UPDATE, NS(C->host.exec_set_params_per_node));
    return CUDA_SUCCESS;
}
static CUresult d_graph_create(CUgraph *g, unsigned flags)
{
    sim_host_add(SIM_C_BUILD, NS(C->host.graph_add_node)); /* (no key of its own) */
    if (grow((void **)&g_graphs, &g_cgraphs, g_ngraphs, sizeof *g_graphs))
        return CUDA_ERROR_OUT_OF_MEMORY;
    memset(&g_graphs[g_ngraphs], 0, sizeof *g_graphs);
    *g = (CUgraph)(uintptr_t)(H_GRAPH + H_STEP * g_ngraphs++);
    return CUDA_SUCCESS;
}
/* A graph's or exec's slot freed (cuGraphDestroy, cuGraphExecDestroy). */
static CUresult drop(sgraph *G)
{
    sim_host_add(SIM_C_BUILD, NS(C->host.graph_destroy));
    if (!G)
        return CUDA_ERROR_INVALID_HANDLE;
    free(G->type);
    free(G->fn);
    memset(G, 0, sizeof *G);
    return CUDA_SUCCESS;
}
static CUresult d_graph_destroy(CUgraph g)
{
    return drop(graph_of(g));
}
static CUresult add_node(CUgraphNode *out, CUgraph g, int type, void *fn)
{
    sim_host_add(SIM_C_BUILD, NS(C->host.graph_add_node));
    sgraph *G = graph_of(g);
    if (!G)
        return CUDA_ERROR_INVALID_HANDLE;
    size_t cap = G->cap, fcap = G->cap;
    if (grow((void **)&G->fn, &fcap, G->n, sizeof *G->fn) ||
        grow((void **)&G->type, &cap, G->n, 1) ||
        grow((void **)&g_nodes, &g_cnodes, g_nnodes, sizeof *g_nodes))
        return CUDA_ERROR_OUT_OF_MEMORY;
    G->cap = (uint32_t)cap;
    G->fn[G->n] = fn;
    G->big += node_big(fn);
    G->type[G->n++] = (uint8_t)type;
    g_nodes[g_nnodes].graph = (uint32_t)(G - g_graphs);
    g_nodes[g_nnodes].pos = G->n - 1;
    g_nodes[g_nnodes].type = (uint8_t)type;
    *out = (CUgraphNode)(uintptr_t)(H_NODE + H_STEP * g_nnodes++);
    sim_gpu.nodes_built++;
    return CUDA_SUCCESS;
}
static CUresult d_add_kernel_node(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
                                  const CUDA_KERNEL_NODE_PARAMS *p)
{
    return add_node(n, g, N_KERNEL, node_fn(p));
}
static CUresult d_add_memset_node(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
                                  const CUDA_MEMSET_NODE_PARAMS *p, CUcontext c)
{
    return add_node(n, g, N_MEMSET, NULL);
}
static CUresult d_add_memcpy_node(CUgraphNode *n, CUgraph g, const CUgraphNode *deps, size_t nd,
                                  const CUDA_MEMCPY3D *p, CUcontext c)
{
    return add_node(n, g, N_MEMCPY, NULL);
}
/* A programmatic edge marks the node it leads to (gpu_ns.graph_pdl_overlap: it may start
 * before its predecessor has ended). */
static CUresult d_add_deps(CUgraph g, const CUgraphNode *from, const CUgraphNode *to,
                           const CUgraphEdgeData *e, size_t n)
{
    sim_host_add(SIM_C_BUILD, NS(C->host.graph_add_node));
    for (size_t k = 0; e && k < n; k++) {
        size_t i = handle_index((uint64_t)(uintptr_t)to[k], H_NODE, g_nnodes);
        sgraph *G = node_graph(to[k]);
        if (G && e[k].type == CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC &&
            g_nodes[i].type == N_KERNEL && g_nodes[i].pos < G->n)
            G->type[g_nodes[i].pos] |= N_PDL;
    }
    return CUDA_SUCCESS;
}
static CUresult d_node_set_attr(CUgraphNode n, CUkernelNodeAttrID id,
                                const CUkernelNodeAttrValue *v)
{
    sim_host_add(SIM_C_BUILD, NS(C->host.graph_add_node));
    return CUDA_SUCCESS;
}
static CUresult d_node_set_params(CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    return node_set(n, node_fn(p));
}
static CUresult d_memset_node_set(CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p)
{
    return node_set(n, NULL);
}
static CUresult d_memcpy_node_set(CUgraphNode n, const CUDA_MEMCPY3D *p)
{
    return node_set(n, NULL);
}
static CUresult d_instantiate(CUgraphExec *x, CUgraph g, unsigned long long flags)
{
    sgraph *G = graph_of(g);
    if (!G)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_host_add(SIM_C_BUILD, NS(C->host.instantiate_base + C->host.instantiate_per_node * G->n));
    G->updated = 0;
    G->big_updated = 0;
    if (grow((void **)&g_execs, &g_cexecs, g_nexecs, sizeof *g_execs))
        return CUDA_ERROR_OUT_OF_MEMORY;
    sgraph *X = &g_execs[g_nexecs];
    memset(X, 0, sizeof *X);
    if (G->n) {
        if (!(X->type = malloc(G->n)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(X->type, G->type, G->n);
        if (!(X->fn = malloc(G->n * sizeof *X->fn)))
            return CUDA_ERROR_OUT_OF_MEMORY;
        memcpy(X->fn, G->fn, G->n * sizeof *X->fn);
    }
    X->n = X->cap = G->n;
    X->big = G->big;
    *x = (CUgraphExec)(uintptr_t)(H_EXEC + H_STEP * g_nexecs++);
    sim_gpu.instantiations++;
    return CUDA_SUCCESS;
}
static CUresult d_exec_destroy(CUgraphExec x)
{
    return drop(exec_of(x));
}
/* An exec's node set: its cost now, and at the exec's next launch; more where a kernel node's
 * function changes (where the table has those costs). */
static CUresult exec_node_set(CUgraphExec x, CUgraphNode n, void *fn)
{
    sgraph *X = exec_of(x);
    size_t i = handle_index((uint64_t)(uintptr_t)n, H_NODE, g_nnodes);
    int fn_changed = X && fn && i != (size_t)-1 && g_nodes[i].pos < X->n &&
                     X->fn[g_nodes[i].pos] != fn;
    uint32_t big = node_big(fn);
    sim_host_add(SIM_C_UPDATE, NS((fn_changed && C->host.exec_set_params_fn_per_node > 0
                                       ? C->host.exec_set_params_fn_per_node
                                       : C->host.exec_set_params_per_node) +
                                  C->host.exec_set_params_per_byte * big));
    sim_gpu.updates_node++;
    if (X) {
        X->updated++;
        X->big_updated += big;
        if (fn_changed) {
            X->fn_updated++;
            sim_gpu.updates_fn++;
            X->big += (uint64_t)big - node_big(X->fn[g_nodes[i].pos]);
            X->fn[g_nodes[i].pos] = fn;
        }
    }
    return CUDA_SUCCESS;
}
static CUresult d_exec_node_set(CUgraphExec x, CUgraphNode n, const CUDA_KERNEL_NODE_PARAMS *p)
{
    return exec_node_set(x, n, node_fn(p));
}
static CUresult d_exec_memset_set(CUgraphExec x, CUgraphNode n, const CUDA_MEMSET_NODE_PARAMS *p,
                                  CUcontext c)
{
    return exec_node_set(x, n, NULL);
}
static CUresult d_exec_memcpy_set(CUgraphExec x, CUgraphNode n, const CUDA_MEMCPY3D *p,
                                  CUcontext c)
{
    return exec_node_set(x, n, NULL);
}
static CUresult d_exec_update(CUgraphExec x, CUgraph g, CUgraphExecUpdateResultInfo *info)
{
    sgraph *X = exec_of(x), *G = graph_of(g);
    if (!X || !G)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_host_add(SIM_C_UPDATE,
                 NS(C->host.exec_update_base + C->host.exec_update_per_node * X->n));
    X->updated += G->updated;
    X->big_updated += G->big_updated;
    G->updated = 0;
    G->big_updated = 0;
    for (uint32_t k = 0; k < X->n && k < G->n; k++)
        if (X->fn[k] != G->fn[k]) { /* (its cost at the launch: the update's own, not measured) */
            X->big += (uint64_t)node_big(G->fn[k]) - node_big(X->fn[k]);
            X->fn[k] = G->fn[k];
            X->fn_updated++;
            sim_gpu.updates_fn++;
        }
    if (info)
        memset(info, 0, sizeof *info);
    sim_gpu.updates_whole++;
    return CUDA_SUCCESS;
}
static CUresult d_upload(CUgraphExec x, CUstream hs)
{
    sgraph *X = exec_of(x);
    if (!X)
        return CUDA_ERROR_INVALID_HANDLE;
    sim_host_add(SIM_C_BUILD, NS(C->host.upload_base + C->host.upload_per_node * X->n));
    return CUDA_SUCCESS;
}
/* The exec's nodes run back to back from max(ready, issue + latency), each one the traced call
 * at the stream's FIFO front. */
static CUresult d_graph_launch(CUgraphExec x, CUstream hs)
{
    DRV_IN();
    sgraph *X = exec_of(x);
    if (!X) {
        DRV_OUT();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    uint64_t issue = sim_H;
    sim_host_add(SIM_C_GRAPH_LAUNCH,
                 NS(C->host.graph_launch_base + C->host.graph_launch_per_node * X->n +
                    C->host.graph_launch_per_updated_node * X->updated +
                    (C->host.graph_launch_per_fn_updated_node > 0
                         ? (C->host.graph_launch_per_fn_updated_node -
                            C->host.graph_launch_per_updated_node) * X->fn_updated
                         : 0) +
                    C->host.graph_launch_per_updated_byte * (double)X->big_updated +
                    C->host.graph_launch_per_node_byte * (double)X->big));
    X->updated = X->fn_updated = 0;
    X->big_updated = 0;
    sstream *s = stream_of((uint64_t)(uintptr_t)hs, 0);
    uint64_t d = dep_of(s), t = issue + NS(C->gpu.graph_launch_latency);
    /* a graph right behind another on the stream (pieces): the GPU's boundary between them */
    uint64_t bound = s->after_graph && C->gpu.graph_boundary_gap > 0
                         ? NS(C->gpu.graph_boundary_gap) : 0;
    if (t < d + bound) {
        sim_gpu.gap_ns += t > d ? d + bound - t : bound;
        t = d + bound;
    }
    for (uint32_t i = 0; i < X->n; i++) {
        const sim_call *c = pop(s);
        int64_t gap;
        uint64_t dur;
        /* (the nodes' own times: kept by the eager run, which ran every call) */
        if ((X->type[i] & ~N_PDL) == N_KERNEL) {
            gap = GAP(X->type[i] & N_PDL ? M.g_gap - C->gpu.graph_pdl_overlap : M.g_gap);
            dur = own_time(c, N_KERNEL, 0, issue, t, 0, 0);
        } else if (X->type[i] == N_MEMSET) {
            gap = GAP(M.gm_gap);
            dur = own_time(c, N_MEMSET, 0, issue, t, 0, 0);
        } else {
            gap = GAP(M.gc_gap);
            const ag_tr_copy *cp =
                c && c->h->type == AG_TR_COPY ? (const ag_tr_copy *)c->h : NULL;
            dur = own_time(c, N_MEMCPY, cp && cp->op == AG_CP_DTOH, issue, t, 0, 0);
        }
        if (i && gap >= 0) {
            t += (uint64_t)gap;
            sim_gpu.gap_ns += (uint64_t)gap;
        } else if (i) {
            t = t > (uint64_t)-gap ? t - (uint64_t)-gap : 0;
        }
        busy(t, t + dur);
        t += dur;
        sim_gpu.graph_nodes++;
    }
    s->ready = t;
    s->after_graph = 1;
    if (t > sim_gpu.end_ns)
        sim_gpu.end_ns = t;
    sim_gpu.graph_launches++;
    DRV_OUT();
    return CUDA_SUCCESS;
}

/* ---- copies and memsets ---------------------------------------------------------------------- */

/* An async copy or memset reaches the driver: the traced one at the FIFO front, at its traced
 * host duration -- except a copy to or from pageable memory, which returns only when done (its
 * traced duration holds a wait this run may not have: the table's cost, then the wait). */
static CUresult copy(int entry, uint64_t dst, uint64_t src, CUstream hs, int ptsz)
{
    DRV_IN();
    sstream *s = stream_of((uint64_t)(uintptr_t)hs, ptsz);
    const sim_call *c = pop(s);
    const ag_tr_copy *cp = c && c->h->type == AG_TR_COPY ? (const ag_tr_copy *)c->h : NULL;
    int memset_ = entry <= AG_CP_MEMSET32;
    int dk = mem_of(dst), sk = memset_ ? AG_MEM_NONE : mem_of(src);
    int pageable = !memset_ && (dk == AG_MEM_PAGEABLE || sk == AG_MEM_PAGEABLE);
    uint64_t issue = sim_H;
    uint64_t cost = pageable ? NS(C->host.memcpy_dtoh_async_pageable)
                    : cp     ? cp->h.dur_ns
                    : memset_ ? NS(C->host.memset_async)
                    : entry == AG_CP_HTOD ? NS(C->host.memcpy_htod_async_pinned)
                    : entry == AG_CP_DTOH ? NS(C->host.memcpy_dtoh_async_pinned)
                                          : NS(C->host.memcpy_dtod_async);
    sim_host_add(SIM_C_COPY, cost);
    CUresult r = cp ? (CUresult)cp->result : CUDA_SUCCESS;
    if (r == CUDA_SUCCESS && !s->capturing) {
        uint64_t end = run_on(s, issue + (pageable ? NS(C->gpu.launch_latency) : cost + NS(M.lat_ret)),
                              GAP(M.c_gap),
                              own_time(cp ? c : NULL, memset_ ? N_MEMSET : N_MEMCPY,
                                      entry == AG_CP_DTOH, issue, dep_of(s),
                                      cp ? cp->h.dur_ns : cost, pageable));
        sim_gpu.copies++;
        if (pageable && !sim_off_critical)
            sim_host_wait(end);
    }
    DRV_OUT();
    return r;
}
/* Each entry point in its plain and _ptsz forms (the engine calls an offered copy's own). */
#define SIM_COPY_FNS(suffix, ptsz)                                                             \
    static CUresult d_memset8##suffix(CUdeviceptr d, unsigned char v, size_t n, CUstream s)    \
    {                                                                                          \
        return copy(AG_CP_MEMSET8, d, 0, s, ptsz);                                             \
    }                                                                                          \
    static CUresult d_memset16##suffix(CUdeviceptr d, unsigned short v, size_t n, CUstream s)  \
    {                                                                                          \
        return copy(AG_CP_MEMSET16, d, 0, s, ptsz);                                            \
    }                                                                                          \
    static CUresult d_memset32##suffix(CUdeviceptr d, unsigned int v, size_t n, CUstream s)    \
    {                                                                                          \
        return copy(AG_CP_MEMSET32, d, 0, s, ptsz);                                            \
    }                                                                                          \
    static CUresult d_memcpy##suffix(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)     \
    {                                                                                          \
        return copy(AG_CP_MEMCPY, d, src, s, ptsz);                                            \
    }                                                                                          \
    static CUresult d_htod##suffix(CUdeviceptr d, const void *src, size_t n, CUstream s)       \
    {                                                                                          \
        return copy(AG_CP_HTOD, d, (uint64_t)(uintptr_t)src, s, ptsz);                         \
    }                                                                                          \
    static CUresult d_dtoh##suffix(void *d, CUdeviceptr src, size_t n, CUstream s)             \
    {                                                                                          \
        return copy(AG_CP_DTOH, (uint64_t)(uintptr_t)d, src, s, ptsz);                         \
    }                                                                                          \
    static CUresult d_dtod##suffix(CUdeviceptr d, CUdeviceptr src, size_t n, CUstream s)       \
    {                                                                                          \
        return copy(AG_CP_DTOD, d, src, s, ptsz);                                              \
    }
SIM_COPY_FNS(, 0)
SIM_COPY_FNS(_ptsz, 1)

void *sim_copy_fn(int entry, int ptsz)
{
    switch (entry) {
    case AG_CP_MEMSET8: return ptsz ? (void *)d_memset8_ptsz : (void *)d_memset8;
    case AG_CP_MEMSET16: return ptsz ? (void *)d_memset16_ptsz : (void *)d_memset16;
    case AG_CP_MEMSET32: return ptsz ? (void *)d_memset32_ptsz : (void *)d_memset32;
    case AG_CP_MEMCPY: return ptsz ? (void *)d_memcpy_ptsz : (void *)d_memcpy;
    case AG_CP_HTOD: return ptsz ? (void *)d_htod_ptsz : (void *)d_htod;
    case AG_CP_DTOH: return ptsz ? (void *)d_dtoh_ptsz : (void *)d_dtoh;
    default: return ptsz ? (void *)d_dtod_ptsz : (void *)d_dtod;
    }
}

CUresult sim_copy_call(int entry, uint64_t dst, uint64_t src, uint64_t stream, int ptsz)
{
    return copy(entry, dst, src, (CUstream)(uintptr_t)stream, ptsz);
}

/* The traced memory kinds of the traced pointers. */
static CUresult d_pointer_attr(void *out, CUpointer_attribute a, CUdeviceptr p)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.pointer_get_attribute));
    int k = mem_of(p);
    if (k == AG_MEM_PAGEABLE || k == AG_MEM_NONE)
        return CUDA_ERROR_INVALID_VALUE;
    if (a == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
        *(unsigned *)out = k == AG_MEM_MANAGED;
        return CUDA_SUCCESS;
    }
    if (a == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        *(unsigned *)out = k == AG_MEM_PINNED ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    }
    return CUDA_ERROR_NOT_SUPPORTED;
}
static CUresult d_host_flags(unsigned *flags, void *p)
{
    sim_host_add(SIM_C_QUERY, NS(C->host.pointer_get_attribute));
    if (mem_of((uint64_t)(uintptr_t)p) != AG_MEM_PINNED)
        return CUDA_ERROR_INVALID_VALUE;
    *flags = 0;
    return CUDA_SUCCESS;
}

static CUresult d_error_name(CUresult r, const char **s)
{
    *s = "CUDA_ERROR (simulated)";
    return CUDA_SUCCESS;
}

void simdrv_install(void)
{
    ag_drv.cuLaunchKernel = d_launch;
    ag_drv.cuLaunchKernel_ptsz = d_launch_ptsz;
    ag_drv.cuLaunchKernelEx = d_launch_ex;
    ag_drv.cuLaunchKernelEx_ptsz = d_launch_ex_ptsz;
    ag_drv.cuLaunchCooperativeKernel = d_coop;
    ag_drv.cuLaunchCooperativeKernel_ptsz = d_coop_ptsz;
    ag_drv.cuFuncGetParamInfo = d_func_param;
    ag_drv.cuKernelGetParamInfo = d_kernel_param;
    ag_drv.cuFuncGetName = d_func_name;
    ag_drv.cuKernelGetName = d_kernel_name;
    ag_drv.cuFuncGetModule = d_func_module;
    ag_drv.cuKernelGetLibrary = d_kernel_library;
    ag_drv.cuModuleGetFunctionCount = d_module_count;
    ag_drv.cuLibraryGetKernelCount = d_library_count;
    ag_drv.cuCtxGetCurrent = d_ctx_get;
    ag_drv.cuCtxSetCurrent = d_ctx_set;
    ag_drv.cuStreamGetFlags = d_stream_flags;
    ag_drv.cuStreamGetCtx = d_stream_ctx;
    ag_drv.cuStreamIsCapturing = d_stream_capturing;
    ag_drv.cuStreamGetAttribute = d_stream_attr;
    ag_drv.cuGraphCreate = d_graph_create;
    ag_drv.cuGraphDestroy = d_graph_destroy;
    ag_drv.cuGraphAddKernelNode_v2 = d_add_kernel_node;
    ag_drv.cuGraphAddDependencies_v2 = d_add_deps;
    ag_drv.cuGraphKernelNodeSetAttribute = d_node_set_attr;
    ag_drv.cuGraphKernelNodeSetParams_v2 = d_node_set_params;
    ag_drv.cuGraphInstantiateWithFlags = d_instantiate;
    ag_drv.cuGraphExecDestroy = d_exec_destroy;
    ag_drv.cuGraphExecKernelNodeSetParams_v2 = d_exec_node_set;
    ag_drv.cuGraphExecUpdate_v2 = d_exec_update;
    ag_drv.cuGraphUpload = d_upload;
    ag_drv.cuGraphLaunch = d_graph_launch;
    ag_drv.cuEventCreate = d_event_create;
    ag_drv.cuEventDestroy_v2 = d_event_destroy;
    ag_drv.cuEventRecord = d_event_record;
    ag_drv.cuEventQuery = d_event_query;
    ag_drv.cuEventElapsedTime_v2 = d_event_elapsed;
    ag_drv.cuStreamWaitEvent = d_stream_wait_event;
    ag_drv.cuStreamCreate = d_stream_create;
    ag_drv.cuStreamDestroy_v2 = d_stream_destroy;
    ag_drv.cuStreamSynchronize = d_stream_sync;
    ag_drv.cuMemsetD8Async = d_memset8;
    ag_drv.cuMemsetD16Async = d_memset16;
    ag_drv.cuMemsetD32Async = d_memset32;
    ag_drv.cuMemcpyAsync = d_memcpy;
    ag_drv.cuMemcpyHtoDAsync_v2 = d_htod;
    ag_drv.cuMemcpyDtoHAsync_v2 = d_dtoh;
    ag_drv.cuMemcpyDtoDAsync_v2 = d_dtod;
    ag_drv.cuPointerGetAttribute = d_pointer_attr;
    ag_drv.cuMemHostGetFlags = d_host_flags;
    ag_drv.cuGraphAddMemsetNode = d_add_memset_node;
    ag_drv.cuGraphAddMemcpyNode = d_add_memcpy_node;
    ag_drv.cuGraphMemsetNodeSetParams = d_memset_node_set;
    ag_drv.cuGraphMemcpyNodeSetParams = d_memcpy_node_set;
    ag_drv.cuGraphExecMemsetNodeSetParams = d_exec_memset_set;
    ag_drv.cuGraphExecMemcpyNodeSetParams = d_exec_memcpy_set;
    ag_drv.cuGetErrorName = d_error_name;
}
