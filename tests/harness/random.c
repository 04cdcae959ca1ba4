/* Seeded random programs, checked against a host model: a differential hunt for launches,
 * copies or memsets that libautograph loses, delays past an ordering point, reorders or runs
 * with stale values.
 *
 * From the seed: 1-3 streams (created blocking or non-blocking, the legacy default stream,
 * the per-thread default stream -- each named in a few ways: NULL, CU_STREAM_LEGACY,
 * CU_STREAM_PER_THREAD, plain or _ptsz entry points), and 2-4 loop bodies, each a fixed list
 * of operations: kernel launches (rec, rec64, acc, copy, and a kernel that logs its launch
 * dimensions; cuLaunchKernel with kernelParams or a packed `extra` buffer, cuLaunchKernelEx
 * with no attribute or with programmatic stream serialization on or off; grids, blocks and
 * shared memory fixed or changing per run), memsets D8/D16/D32, async copies HtoD (pinned or
 * pageable source), DtoH (into pinned or pageable memory) and DtoD (their own entry points or
 * cuMemcpyAsync), event record + synchronize or query, cuCtxRecordEvent, cuStreamWaitEvent
 * across streams, cuStreamQuery (once, or until done), stream and context synchronisation,
 * synchronous copies and memsets, another thread's context or stream synchronisation or
 * cuMemFree, a free on the main thread, and a stream destroyed and created again (after a
 * synchronisation, or with work still pending), a host function that checks its stream's log
 * when it runs; now and then another thread issues a launch, copy or memset (the main thread
 * waits: the issue order stays the program's). The main loop runs the bodies in a seeded
 * repeating order; every run of an operation changes its values (kernel arguments, memset
 * values, which of two cells a pointer names) by its own rule, and now and then a run of a
 * body misses an operation or has an extra launch (divergence).
 *
 * The model: every cell (device, managed, pinned or pageable host memory) and every stream's
 * log has the value that running the operations in issue order gives. That is what the GPU
 * must compute because the program is kept free of data races: before an operation that
 * would touch a cell another stream touched without being ordered after it, the program
 * records an event there and waits for it (as a correct application must). Ordering is
 * tracked with vector clocks: per stream (what its next operation is ordered after,
 * including the legacy-stream rule, applied only to kernels, copies and memsets), per event
 * record, and for the host (what a synchronisation, a completed query, an event
 * synchronisation, a synchronous copy or another thread's synchronisation has shown to be
 * done). At each such point every cell whose last write and every log whose last entry is
 * covered is compared exactly with the model; nothing else is (DtoH into pageable memory is
 * not assumed synchronous, a synchronous memset is not assumed done).
 *
 * Usage: random SEED [iterations=80] [mask=0]
 *   iterations: runs of a body; mask: bit k set turns operation kind k (enum opk) into a
 *   launch (to minimise a failure). RANDOM_TRACE=1 prints every operation on stderr.
 *   RANDOM_PAGEABLE_SYNC=1 also checks right after an async DtoH into pageable memory, as if
 *   it were synchronous (real drivers make it so; CUDA's documentation says "might be").
 *   RANDOM_ALTERNATE=1 gives every operation two sets of values and cells that take turns,
 *   run by run, launch dimensions too (a solver swapping its buffers: exec variants).
 *   RANDOM_PAUSE=1 pauses the library before now and then an operation, and resumes it
 *   before another (autograph_pause / autograph_resume, found with dlsym; from their own
 *   hash, so the program is the same): nothing may change. */
#include <dlfcn.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { MAXE = 12, MAXB = 4, MAXOPS = 14, NPRIV = 3, NSHARED = 3, NMANAGED = 2, NFN = 4,
       NEXTRA = 4, MAXCELLS = 3 * NPRIV + NSHARED + NMANAGED + 2 * MAXB * MAXOPS };

/* ---- randomness: splitmix64 for the generator, a stateless hash for per-run values ------ */
static uint64_t g_seed, g_rng;

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t rnd64(void)
{
    return mix64(g_rng += 0x9E3779B97F4A7C15ull);
}

static uint32_t rnd(uint32_t n)
{
    return n ? (uint32_t)(rnd64() % n) : 0;
}

static int chance(unsigned pct)
{
    return rnd(100) < pct;
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
    return mix64(a ^ mix64(b + 0x632BE59BD9B4E019ull) ^ mix64(c * 0x8CB92BA72F3D8DD7ull + 1));
}

static int g_trace, g_pageable_sync, g_alternate;
#define TR(...)                                                                                \
    do {                                                                                       \
        if (g_trace)                                                                           \
            fprintf(stderr, __VA_ARGS__);                                                      \
    } while (0)

/* ---- streams: entities of the vector clocks ----------------------------------------------- */
enum { E_BLOCKING, E_NONBLOCKING, E_LEGACY, E_PTDS };
static const char *const ekind_name[] = { "blocking", "non-blocking", "legacy", "per-thread" };

typedef struct ent {
    int kind, alive;
    CUstream h;                /* created streams */
    uint32_t vc[MAXE];         /* what the next operation on it is ordered after */
    uint32_t wvc[MAXE];        /* vc at its last kernel, copy or memset (the legacy rule) */
    CUevent sev;               /* inserted waits record here; a destroyed stream's last record */
    uint32_t sev_vc[MAXE];
    hx_log *log;               /* what its kernels log */
    hx_entry *mlog;            /* the model of the log */
    uint32_t mn, mcap, checked;
    uint32_t log_last;         /* own count of the last operation that logs */
} ent;

static ent E[MAXE];
static int g_ne, g_legacy = -1, g_ptds = -1;
static int g_nps, g_cur[3];    /* program streams: their current entity */
static uint32_t H[MAXE];       /* what the host has seen done */
static CUcontext g_ctx;
static uint32_t g_logcap;

static int blocking(int e)
{
    return E[e].alive && (E[e].kind == E_BLOCKING || E[e].kind == E_PTDS);
}

static void vc_join(uint32_t *dst, const uint32_t *src)
{
    for (int i = 0; i < MAXE; i++)
        if (src[i] > dst[i])
            dst[i] = src[i];
}

/* What a kernel, copy or memset issued on e now is ordered after: e's clock, the legacy rule
 * (legacy work waits for the blocking streams' work, blocking work for the legacy stream's:
 * only for work, not for event records or waits -- the guarantee is stated for work) and
 * what the host has seen done (it is issued after that). */
static void preview(int e, uint32_t *out)
{
    memcpy(out, E[e].vc, sizeof E[e].vc);
    if (E[e].kind == E_LEGACY) {
        for (int t = 0; t < g_ne; t++)
            if (t != e && blocking(t))
                vc_join(out, E[t].wvc);
    } else if (blocking(e)) {
        vc_join(out, E[g_legacy].wvc);
    }
    vc_join(out, H);
}

static int new_entity(int kind)
{
    HX_ASSERT(g_ne < MAXE, "too many streams");
    int e = g_ne++;
    ent *x = &E[e];
    memset(x, 0, sizeof *x);
    x->kind = kind;
    x->alive = 1;
    if (kind == E_BLOCKING || kind == E_NONBLOCKING)
        CK(cuStreamCreate(&x->h, kind == E_NONBLOCKING ? CU_STREAM_NON_BLOCKING : 0));
    CK(cuEventCreate(&x->sev, CU_EVENT_DISABLE_TIMING));
    x->log = hx_log_new(g_logcap);
    x->mcap = g_logcap;
    x->mlog = calloc(g_logcap, sizeof *x->mlog);
    HX_ASSERT(x->mlog, "out of memory");
    return e;
}

/* How an operation names its stream: the handle and whether it calls the _ptsz entry point.
 * form 0..2 picks one of the names of the legacy and per-thread streams. */
typedef struct { CUstream h; int ptsz; } sref;

static sref sref_of(int e, int form)
{
    switch (E[e].kind) {
    case E_LEGACY:
        return form == 0 ? (sref){ NULL, 0 } : (sref){ CU_STREAM_LEGACY, form == 2 };
    case E_PTDS:
        return form == 0 ? (sref){ NULL, 1 } : (sref){ CU_STREAM_PER_THREAD, form == 2 };
    default:
        return (sref){ E[e].h, form == 1 };
    }
}

/* ---- cells ---------------------------------------------------------------------------------- */
enum { M_DEV, M_MANAGED, M_PINNED, M_PAGEABLE };
static const char *const mkind_name[] = { "device", "managed", "pinned", "pageable" };

typedef struct cell {
    uint64_t *p;
    int kind;
    uint64_t model;
    int lw_e;           /* the last write: entity and its own count (-1: none yet) */
    uint32_t lw_c;
    uint32_t rd[MAXE];  /* reads since the last write, per entity */
} cell;

static cell C[MAXCELLS];
static int g_nc;
static uint64_t g_pageable[MAXCELLS];
static uint64_t g_pageable_src;

static int new_cell(int kind)
{
    HX_ASSERT(g_nc < MAXCELLS, "too many cells");
    int i = g_nc++;
    cell *c = &C[i];
    c->kind = kind;
    c->lw_e = -1;
    c->model = 0x1000 + (uint64_t)i;
    switch (kind) {
    case M_DEV:
        c->p = hx_dev_u64(1, c->model);
        break;
    case M_MANAGED: {
        CUdeviceptr d;
        CK(cuMemAllocManaged(&d, 8, CU_MEM_ATTACH_GLOBAL));
        c->p = (uint64_t *)(uintptr_t)d;
        *c->p = c->model;
        break;
    }
    case M_PINNED: {
        void *h;
        CK(cuMemAllocHost_v2(&h, 8));
        c->p = h;
        *c->p = c->model;
        break;
    }
    default:
        c->p = &g_pageable[i];
        *c->p = c->model;
    }
    return i;
}

static CUdeviceptr dp(int c)
{
    return (CUdeviceptr)(uintptr_t)C[c].p;
}

/* ---- operations ----------------------------------------------------------------------------- */
enum opk { O_KERNEL, O_MEMSET, O_HTOD, O_DTOH, O_DTOD, O_EVSYNC, O_WAIT, O_QUERY, O_SSYNC,
           O_CSYNC, O_SYNCCOPY, O_SYNCMEMSET, O_XTHREAD, O_FREE, O_RECREATE, O_HOSTFN,
           O_COUNT };
static const char *const opk_name[] = { "kernel", "memset", "htod", "dtoh", "dtod", "evsync",
                                        "wait", "query", "ssync", "csync", "synccopy",
                                        "syncmemset", "xthread", "free", "recreate", "hostfn" };
static const unsigned opk_weight[] = { 48, 8, 5, 6, 5, 3, 6, 3, 4, 2, 3, 1, 2, 1, 1, 2 };

enum { KK_REC, KK_REC64, KK_ACC, KK_COPY, KK_DIMS, KK_COUNT };
static const char *const kk_name[] = { "rec", "rec64", "acc", "copy", "dims" };
enum { L_PLAIN, L_EXTRA, L_EX, L_EX_PDL1, L_EX_PDL0 };
static const char *const launch_name[] = { "cuLaunchKernel", "cuLaunchKernel(extra)",
                                           "cuLaunchKernelEx", "cuLaunchKernelEx(pdl=1)",
                                           "cuLaunchKernelEx(pdl=0)" };

typedef struct op {
    int k, id;
    int ps, form;           /* program stream and how it is named */
    int ps2, form2;         /* O_WAIT: the stream the event is recorded on (-1: legacy) */
    int sub;                /* kernel kind, memset width, entry point, variant */
    int fn, launch, dims;
    int vmode, pmode;       /* values: fixed, per run, every third run; pointers: fixed,
                             * alternating, random per run */
    int dst[2], src[2];
    int logged;
    int helper;             /* issued by the helper thread (the main thread waits) */
    uint32_t kid;
    CUevent ev;
    long runs;
} op;

typedef struct body {
    int n;
    op ops[MAXOPS];
} body;

static body B[MAXB];
static op X[NEXTRA];        /* divergence: launches of kernels no body has */
static int g_nb, g_pat[6], g_npat;
static long g_mask;
static CUfunction F[KK_COUNT][NFN], FX[NEXTRA];
static int g_nops;

static int pick_cell(int ps)
{
    uint32_t r = rnd(100);
    if (r < 75)
        return ps * NPRIV + (int)rnd(NPRIV);
    if (r < 95)
        return 3 * NPRIV + (int)rnd(NSHARED);
    return 3 * NPRIV + NSHARED + (int)rnd(NMANAGED);
}

static void pick_pair(int *pair, int ps)
{
    pair[0] = pick_cell(ps);
    pair[1] = chance(70) ? pick_cell(ps) : pair[0];
}

static int overlap(const int *a, const int *b)
{
    return a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1];
}

static void gen_kernel(op *o)
{
    o->k = O_KERNEL;
    uint32_t r = rnd(100);
    o->sub = r < 28 ? KK_REC : r < 38 ? KK_REC64 : r < 70 ? KK_ACC : r < 85 ? KK_COPY : KK_DIMS;
    o->fn = (int)rnd(NFN);
    r = rnd(100);
    o->launch = r < 50 ? L_PLAIN : r < 60 ? L_EXTRA : r < 72 ? L_EX : r < 92 ? L_EX_PDL1 : L_EX_PDL0;
    o->dims = chance(30);
    pick_pair(o->dst, o->ps);
    pick_pair(o->src, o->ps);
    o->logged = o->sub == KK_REC || o->sub == KK_REC64 || o->sub == KK_DIMS || chance(60);
}

static void gen_op(op *o, int sync_only)
{
    memset(o, 0, sizeof *o);
    o->id = g_nops++;
    o->ps = (int)rnd((uint32_t)g_nps);
    o->form = (int)rnd(3);
    o->vmode = (int)rnd(3);
    o->pmode = (int)rnd(3);
    if (g_alternate) {
        o->vmode = 3;
        o->pmode = 1;
    }
    o->kid = 100 + (uint32_t)o->id;
    int k;
    if (sync_only) {
        static const int s[] = { O_SSYNC, O_EVSYNC, O_SYNCCOPY, O_QUERY, O_CSYNC, O_XTHREAD };
        k = s[rnd(6)];
    } else {
        unsigned tot = 0, w;
        for (int i = 0; i < O_COUNT; i++)
            tot += opk_weight[i];
        w = rnd(tot);
        for (k = 0; w >= opk_weight[k]; k++)
            w -= opk_weight[k];
    }
    if (g_mask & (1L << k))
        k = O_KERNEL;
    o->k = k;
    /* another thread issues it: not on the per-thread stream, which is the main thread's */
    o->helper = k <= O_DTOD && E[g_cur[o->ps]].kind != E_PTDS && chance(8);
    switch (k) {
    case O_KERNEL:
        gen_kernel(o);
        break;
    case O_MEMSET:
        o->sub = (int)rnd(3);
        pick_pair(o->dst, o->ps);
        break;
    case O_HTOD:
        o->sub = chance(60) ? M_PINNED : M_PAGEABLE;
        pick_pair(o->dst, o->ps);
        break;
    case O_DTOH: {
        o->sub = (int)rnd(2); /* 0: cuMemcpyDtoHAsync_v2, 1: cuMemcpyAsync */
        int kind = chance(65) ? M_PINNED : M_PAGEABLE;
        o->dst[0] = new_cell(kind);
        o->dst[1] = chance(60) ? new_cell(kind) : o->dst[0];
        pick_pair(o->src, o->ps);
        break;
    }
    case O_DTOD:
        o->sub = (int)rnd(2); /* 0: cuMemcpyDtoDAsync_v2, 1: cuMemcpyAsync */
        pick_pair(o->src, o->ps);
        for (int t = 0; t < 20; t++) {
            pick_pair(o->dst, o->ps);
            if (!overlap(o->src, o->dst))
                break;
        }
        if (overlap(o->src, o->dst)) { /* a copy kernel may read and write one cell */
            gen_kernel(o);
            o->sub = KK_COPY;
        }
        break;
    case O_EVSYNC: /* 0: record + synchronize, 1: record + query until done, 2: cuCtxRecordEvent */
        o->sub = (int)rnd(3);
        CK(cuEventCreate(&o->ev, CU_EVENT_DISABLE_TIMING));
        break;
    case O_WAIT:
        o->ps2 = (int)rnd((uint32_t)g_nps + 1) - 1;
        if (o->ps2 == o->ps && g_nps > 1)
            o->ps2 = (o->ps + 1) % g_nps;
        o->form2 = (int)rnd(3);
        CK(cuEventCreate(&o->ev, CU_EVENT_DISABLE_TIMING));
        break;
    case O_QUERY:
        o->sub = (int)rnd(2); /* 0: once, 1: until done */
        break;
    case O_SYNCCOPY: /* 0: DtoH (legacy), 1: DtoH (_ptds), 2: HtoD from pageable (legacy) */
        o->sub = (int)rnd(3);
        pick_pair(o->src, o->ps);
        pick_pair(o->dst, o->ps);
        break;
    case O_SYNCMEMSET: /* cuMemsetD32_v2, or its _ptds form */
        o->sub = (int)rnd(2);
        pick_pair(o->dst, o->ps);
        break;
    case O_XTHREAD: /* another thread: 0 cuCtxSynchronize, 1 stream sync, 2 cuMemFree */
        o->sub = (int)rnd(3);
        break;
    case O_RECREATE: /* 0: sync, destroy, create; 1: destroy with work pending, create */
        o->sub = (int)rnd(2);
        break;
    default:
        break;
    }
}

/* ---- per-run values --------------------------------------------------------------------- */
static uint32_t opval(const op *o, long n)
{
    long k = o->vmode == 0 ? 0 : o->vmode == 1 ? n : o->vmode == 2 ? n / 3 : n & 1;
    return (uint32_t)hash3(g_seed, (uint64_t)o->id, (uint64_t)k);
}

static int pick(const op *o, long n, int which)
{
    switch (o->pmode) {
    case 0:
        return 0;
    case 1:
        return (int)((n + which) & 1);
    default:
        return (int)(hash3(g_seed ^ 0x55, (uint64_t)o->id * 2 + (uint64_t)which, (uint64_t)n) & 1);
    }
}

/* ---- the helper thread ------------------------------------------------------------------- */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_cmd; /* 0 none, 1 ctx sync, 2 stream sync, 3 free, 4 run g_cmd_op, -1 exit */
static CUstream g_cmd_stream;
static struct op *g_cmd_op;
static void run_op(struct op *o, long n);
static int g_cmd_done;

static void *helper(void *arg)
{
    (void)arg;
    CK(cuCtxSetCurrent(g_ctx));
    pthread_mutex_lock(&g_mu);
    for (;;) {
        while (!g_cmd)
            pthread_cond_wait(&g_cv, &g_mu);
        int cmd = g_cmd;
        if (cmd < 0)
            break;
        pthread_mutex_unlock(&g_mu);
        if (cmd == 1) {
            CK(cuCtxSynchronize());
        } else if (cmd == 2) {
            CK(cuStreamSynchronize(g_cmd_stream));
        } else if (cmd == 4) {
            run_op(g_cmd_op, g_cmd_op->runs++);
        } else {
            CUdeviceptr d;
            CK(cuMemAlloc_v2(&d, 64));
            CK(cuMemFree_v2(d));
        }
        pthread_mutex_lock(&g_mu);
        g_cmd = 0;
        g_cmd_done = 1;
        pthread_cond_broadcast(&g_cv);
    }
    pthread_mutex_unlock(&g_mu);
    return NULL;
}

static void helper_do(int cmd, CUstream s, struct op *o)
{
    pthread_mutex_lock(&g_mu);
    g_cmd = cmd;
    g_cmd_op = o;
    g_cmd_stream = s;
    g_cmd_done = 0;
    pthread_cond_broadcast(&g_cv);
    while (cmd > 0 && !g_cmd_done)
        pthread_cond_wait(&g_cv, &g_mu);
    pthread_mutex_unlock(&g_mu);
}

/* ---- checks ----------------------------------------------------------------------------- */
static long g_step, g_checks, g_values, g_entries, g_inserted;
static atomic_uint g_pdl_bad;
static const char *g_where = "";

static void observe(const char *why)
{
    g_checks++;
    HX_ASSERT(!atomic_load(&g_pdl_bad), "seed %llu, step %ld: a launch without programmatic "
              "serialization ran behind a programmatic edge", (unsigned long long)g_seed,
              g_step);
    for (int i = 0; i < g_nc; i++) {
        cell *c = &C[i];
        if (c->lw_e >= 0 && H[c->lw_e] < c->lw_c)
            continue;
        uint64_t got = __atomic_load_n(c->p, __ATOMIC_ACQUIRE);
        HX_ASSERT(got == c->model, "seed %llu, step %ld (%s), after %s: %s cell %d is %#llx, "
                  "expected %#llx (last written by stream %d, op %u)",
                  (unsigned long long)g_seed, g_step, g_where, why, mkind_name[c->kind], i,
                  (unsigned long long)got, (unsigned long long)c->model, c->lw_e, c->lw_c);
        g_values++;
    }
    for (int e = 0; e < g_ne; e++) {
        ent *x = &E[e];
        if (H[e] < x->log_last || x->checked == x->mn)
            continue;
        char what[160];
        snprintf(what, sizeof what, "seed %llu (%s), after %s: the log of stream %d (%s)",
                 (unsigned long long)g_seed, g_where, why, e, ekind_name[x->kind]);
        hx_log_expect(x->log, x->checked, x->mlog + x->checked, x->mn - x->checked, what, g_step);
        g_entries += x->mn - x->checked;
        x->checked = x->mn;
    }
}

static void host_saw(const uint32_t *vc)
{
    vc_join(H, vc);
}

static void host_saw_all(void)
{
    for (int e = 0; e < g_ne; e++)
        vc_join(H, E[e].vc);
}

/* ---- ordering: waits a correct program inserts, and the bookkeeping of work -------------- */

/* Records e's sync event on its stream (a destroyed stream keeps its last record). */
static void record_sev(int t)
{
    if (!E[t].alive)
        return;
    sref s = sref_of(t, 0);
    CK((s.ptsz ? cuEventRecord_ptsz : cuEventRecord)(E[t].sev, s.h));
    memcpy(E[t].sev_vc, E[t].vc, sizeof E[t].vc);
}

static void wait_sev(int e, int t)
{
    sref s = sref_of(e, 0);
    CK((s.ptsz ? cuStreamWaitEvent_ptsz : cuStreamWaitEvent)(s.h, E[t].sev, 0));
    vc_join(E[e].vc, E[t].sev_vc);
}

/* Before work on e that reads cells rd and writes cells wr: every earlier access that
 * conflicts with it must be ordered before it. */
static void order_after(int e, const int *rd, int nrd, const int *wr, int nwr)
{
    uint32_t need[MAXE] = { 0 }, have[MAXE];
    for (int i = 0; i < nrd; i++) {
        const cell *c = &C[rd[i]];
        if (c->lw_e >= 0 && c->lw_c > need[c->lw_e])
            need[c->lw_e] = c->lw_c;
    }
    for (int i = 0; i < nwr; i++) {
        const cell *c = &C[wr[i]];
        if (c->lw_e >= 0 && c->lw_c > need[c->lw_e])
            need[c->lw_e] = c->lw_c;
        for (int t = 0; t < g_ne; t++)
            if (c->rd[t] > need[t])
                need[t] = c->rd[t];
    }
    preview(e, have);
    for (int t = 0; t < g_ne; t++) {
        if (t == e || need[t] <= have[t])
            continue;
        TR("  [order: stream %d waits for stream %d]\n", e, t);
        record_sev(t);
        wait_sev(e, t);
        g_inserted++;
        preview(e, have);
        HX_ASSERT(need[t] <= have[t], "model: a wait did not order stream %d after %d", e, t);
    }
}

/* Work issued on e: ordered after what preview says (the host's knowledge included: what it
 * has seen done is done before anything issued later), then its own count. */
static uint32_t work(int e)
{
    uint32_t v[MAXE];
    preview(e, v);
    memcpy(E[e].vc, v, sizeof v);
    uint32_t k = ++E[e].vc[e];
    memcpy(E[e].wvc, E[e].vc, sizeof v);
    return k;
}

static void did_read(int c, int e, uint32_t k)
{
    if (C[c].rd[e] < k)
        C[c].rd[e] = k;
}

static void did_write(int c, int e, uint32_t k, uint64_t v)
{
    C[c].model = v;
    C[c].lw_e = e;
    C[c].lw_c = k;
    memset(C[c].rd, 0, sizeof C[c].rd);
}

static void log_model(int e, uint32_t k, hx_entry en)
{
    ent *x = &E[e];
    HX_ASSERT(x->mn < x->mcap, "model log full");
    x->mlog[x->mn++] = en;
    x->log_last = k;
}

/* ---- kernels ------------------------------------------------------------------------------- */

/* dims: logs {kid, grid x, block x << 32 | val}; val's top bit says the launch allowed
 * programmatic serialization: one behind a programmatic edge without it is counted. */
static void k_dims(const void *pp, const unsigned g[3], const unsigned b[3])
{
    const hx_p_rec *p = pp;
    int port = fakecuda_launch_attr(FAKECUDA_ATTR_PROGRAMMATIC);
    if (port && (!(p->val >> 31) || port != CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC))
        atomic_fetch_add(&g_pdl_bad, 1);
    hx_log *l = p->log;
    uint32_t n = l->n;
    if (n < l->cap) {
        l->e[n] = (hx_entry){ p->kid, g[0], ((uint64_t)b[0] << 32) | p->val };
        __atomic_store_n(&l->n, n + 1, __ATOMIC_RELEASE);
    } else {
        l->overflow = 1;
    }
}

/* blobsz: the packed size (the last parameter's end; the fake wants it exact) */
static void launch(const op *o, int e, CUfunction f, unsigned g, unsigned b, unsigned smem,
                   void **params, void *blob, size_t blobsz)
{
    sref s = sref_of(e, o->form);
    if (o->launch == L_PLAIN || o->launch == L_EXTRA) {
        void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, blob, CU_LAUNCH_PARAM_BUFFER_SIZE,
                          &blobsz, CU_LAUNCH_PARAM_END };
        int ex = o->launch == L_EXTRA;
        CK((s.ptsz ? cuLaunchKernel_ptsz : cuLaunchKernel)(f, g, 1, 1, b, 1, 1, smem, s.h,
                                                           ex ? NULL : params,
                                                           ex ? extra : NULL));
        return;
    }
    CUlaunchAttribute at;
    memset(&at, 0x5a, sizeof at); /* garbage in the unused bytes */
    at.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at.value.programmaticStreamSerializationAllowed = o->launch == L_EX_PDL1;
    CUlaunchConfig cfg = { g, 1, 1, b, 1, 1, smem, s.h, o->launch == L_EX ? NULL : &at,
                           o->launch == L_EX ? 0 : 1 };
    CK((s.ptsz ? cuLaunchKernelEx_ptsz : cuLaunchKernelEx)(&cfg, f, params, NULL));
}

/* The cells run n of a kernel, copy or memset op reads and writes. */
static void accesses(const op *o, long n, int *rd, int *nrd, int *wr, int *nwr)
{
    int d = o->dst[pick(o, n, 0)], sc = o->src[pick(o, n, 1)];
    *nrd = *nwr = 0;
    if (o->k == O_KERNEL && o->sub == KK_ACC)
        rd[(*nrd)++] = d;
    if ((o->k == O_KERNEL && o->sub == KK_COPY) || o->k == O_DTOH || o->k == O_DTOD)
        rd[(*nrd)++] = sc;
    if ((o->k == O_KERNEL && (o->sub == KK_ACC || o->sub == KK_COPY)) || o->k == O_MEMSET ||
        o->k == O_HTOD || o->k == O_DTOH || o->k == O_DTOD)
        wr[(*nwr)++] = d;
}

static void run_kernel(op *o, int e, long n, CUfunction f)
{
    uint32_t v = opval(o, n);
    unsigned g = 1, b = 32, smem = 0;
    if (o->dims) {
        long m = g_alternate ? n & 1 : n;
        g = 1 + (unsigned)(m % 4);
        b = m % 2 ? 64 : 32;
        smem = (unsigned)(m % 3) * 128;
    }
    int d = o->dst[pick(o, n, 0)], sc = o->src[pick(o, n, 1)];
    int rd[1], wr[1], nrd, nwr;
    accesses(o, n, rd, &nrd, wr, &nwr);
    order_after(e, rd, nrd, wr, nwr);
    uint32_t k = work(e);
    hx_log *log = o->logged ? E[e].log : NULL;
    uint32_t kid = o->kid;
    TR("  %s %s%d fn %d on stream %d (form %d), val %#x, grid %u block %u smem %u, dst %d src "
       "%d%s\n", launch_name[o->launch], kk_name[o->sub], o->sub, o->fn, e, o->form, v, g, b,
       smem, d, sc, log ? ", logged" : "");
    switch (o->sub) {
    case KK_REC:
    case KK_DIMS: {
        uint32_t val = v;
        if (o->sub == KK_DIMS)
            val = (v & 0x7fffffffu) | (o->launch == L_EX_PDL1 ? 0x80000000u : 0);
        hx_p_rec blob;
        memset(&blob, 0x5a, sizeof blob); /* garbage in padding (none here) */
        blob.log = log, blob.kid = kid, blob.val = val;
        void *p[] = { &log, &kid, &val };
        launch(o, e, f, g, b, smem, p, &blob, 16);
        log_model(e, k, o->sub == KK_REC ? (hx_entry){ kid, val, 0 }
                                          : (hx_entry){ kid, g, ((uint64_t)b << 32) | val });
        break;
    }
    case KK_REC64: {
        uint64_t v64 = ((uint64_t)v << 20) ^ (uint64_t)n;
        uint8_t kid8 = (uint8_t)kid;
        uint16_t x = (uint16_t)v;
        hx_p_rec64 blob;
        memset(&blob, 0x5a, sizeof blob); /* garbage in the padding byte */
        blob.log = log, blob.v = v64, blob.kid = kid8, blob.x = x;
        void *p[] = { &log, &v64, &kid8, &x };
        launch(o, e, f, g, b, smem, p, &blob, 20);
        log_model(e, k, (hx_entry){ kid8, x, v64 });
        break;
    }
    case KK_ACC: {
        uint64_t *acc = C[d].p;
        hx_p_acc blob = { log, acc, kid, v };
        void *p[] = { &log, &acc, &kid, &v };
        launch(o, e, f, g, b, smem, p, &blob, 24);
        uint64_t nv = hx_mix(C[d].model, kid, v);
        did_write(d, e, k, nv);
        if (log)
            log_model(e, k, (hx_entry){ kid, v, nv });
        break;
    }
    default: { /* KK_COPY */
        uint64_t *dst = C[d].p;
        const uint64_t *src = C[sc].p;
        hx_p_copy blob = { dst, src, log, kid };
        void *p[] = { &dst, &src, &log, &kid };
        launch(o, e, f, g, b, smem, p, &blob, 28);
        uint64_t nv = C[sc].model;
        did_read(sc, e, k);
        did_write(d, e, k, nv);
        if (log)
            log_model(e, k, (hx_entry){ kid, 0, nv });
        break;
    }
    }
}

/* ---- the other operations ---------------------------------------------------------------- */
static uint64_t pattern(uint64_t unit, unsigned bytes)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < 8; i += bytes)
        v |= unit << (8 * i);
    return v;
}

static uint64_t *g_pinned_src;
static long g_npinned_src, g_pinned_used;

static int legacy_or_ptds(int ptds)
{
    return ptds && g_ptds >= 0 ? g_ptds : g_legacy;
}

static void recreate(op *o, int ps)
{
    int e = g_cur[ps];
    if (E[e].kind != E_BLOCKING && E[e].kind != E_NONBLOCKING)
        return;
    unsigned flags = E[e].kind == E_NONBLOCKING ? CU_STREAM_NON_BLOCKING : 0;
    if (o->sub == 1 && g_ne < MAXE) {
        /* destroyed with work pending: the new stream is another one; the old one's work
         * is reached through its last record (waits) */
        record_sev(e);
        TR("  destroy stream %d with work pending\n", e);
        CK(cuStreamDestroy_v2(E[e].h));
        E[e].alive = 0;
        int ne = new_entity(E[e].kind);
        g_cur[ps] = ne;
        TR("  program stream %d is now stream %d\n", ps, ne);
        return;
    }
    TR("  sync, destroy and create stream %d\n", e);
    sref s = sref_of(e, 0);
    CK(cuStreamSynchronize(s.h));
    host_saw(E[e].vc);
    CK(cuStreamDestroy_v2(E[e].h));
    CK(cuStreamCreate(&E[e].h, flags));
    observe("a stream synchronisation before its destruction");
}

/* A host function checks, when it runs, that exactly the log entries of the work before it
 * on its stream are there (later work on the stream comes after it; only the stream logs). */
typedef struct hostfn_arg {
    const hx_log *log;
    uint32_t want;
    long step;
} hostfn_arg;

static void hostfn(void *p)
{
    hostfn_arg *a = p;
    uint32_t have = __atomic_load_n(&a->log->n, __ATOMIC_ACQUIRE);
    HX_ASSERT(have == a->want, "seed %llu, step %ld: a host function found %u log entries on "
              "its stream, expected %u", (unsigned long long)g_seed, a->step, have, a->want);
    free(a);
}

static void run_op(op *o, long n)
{
    int e = g_cur[o->ps];
    sref s = sref_of(e, o->form);
    uint32_t v = opval(o, n);
    switch (o->k) {
    case O_KERNEL:
        run_kernel(o, e, n, F[o->sub][o->fn]);
        return;
    case O_MEMSET: {
        int d = o->dst[pick(o, n, 0)];
        order_after(e, NULL, 0, &d, 1);
        uint32_t k = work(e);
        uint64_t want;
        TR("  memsetD%d cell %d on stream %d, %#x\n", 8 << o->sub, d, e, v);
        if (o->sub == 0) {
            CK((s.ptsz ? cuMemsetD8Async_ptsz : cuMemsetD8Async)(dp(d), (uint8_t)v, 8, s.h));
            want = pattern((uint8_t)v, 1);
        } else if (o->sub == 1) {
            CK((s.ptsz ? cuMemsetD16Async_ptsz : cuMemsetD16Async)(dp(d), (uint16_t)v, 4, s.h));
            want = pattern((uint16_t)v, 2);
        } else {
            CK((s.ptsz ? cuMemsetD32Async_ptsz : cuMemsetD32Async)(dp(d), v, 2, s.h));
            want = pattern(v, 4);
        }
        did_write(d, e, k, want);
        return;
    }
    case O_HTOD: {
        int d = o->dst[pick(o, n, 0)];
        uint64_t val = ((uint64_t)v << 32) | (uint32_t)n;
        uint64_t *src = &g_pageable_src;
        if (o->sub == M_PINNED && g_pinned_used < g_npinned_src)
            src = &g_pinned_src[g_pinned_used++]; /* never written again */
        order_after(e, NULL, 0, &d, 1);
        uint32_t k = work(e);
        TR("  HtoD %s -> cell %d on stream %d, %#llx\n", src == &g_pageable_src ? "pageable"
           : "pinned", d, e, (unsigned long long)val);
        *src = val;
        CK((s.ptsz ? cuMemcpyHtoDAsync_v2_ptsz : cuMemcpyHtoDAsync_v2)(dp(d), src, 8, s.h));
        if (src == &g_pageable_src)
            g_pageable_src = 0xdeadbeefdeadbeefull; /* allowed: read during the call */
        did_write(d, e, k, val);
        return;
    }
    case O_DTOH:
    case O_DTOD: {
        int d = o->dst[pick(o, n, 0)], sc = o->src[pick(o, n, 1)];
        order_after(e, &sc, 1, &d, 1);
        uint32_t k = work(e);
        TR("  %s cell %d -> cell %d on stream %d\n", o->k == O_DTOH ? "DtoH" : "DtoD", sc, d, e);
        if (o->sub == 1)
            CK((s.ptsz ? cuMemcpyAsync_ptsz : cuMemcpyAsync)(dp(d), dp(sc), 8, s.h));
        else if (o->k == O_DTOH)
            CK((s.ptsz ? cuMemcpyDtoHAsync_v2_ptsz : cuMemcpyDtoHAsync_v2)(C[d].p, dp(sc), 8,
                                                                            s.h));
        else
            CK((s.ptsz ? cuMemcpyDtoDAsync_v2_ptsz : cuMemcpyDtoDAsync_v2)(dp(d), dp(sc), 8,
                                                                            s.h));
        did_read(sc, e, k);
        did_write(d, e, k, C[sc].model);
        if (o->k == O_DTOH && C[d].kind == M_PAGEABLE && g_pageable_sync) {
            host_saw(E[e].vc); /* as drivers do, though CUDA promises only "might be" */
            observe("an async copy into pageable memory (RANDOM_PAGEABLE_SYNC=1)");
        }
        return;
    }
    case O_EVSYNC:
        if (o->sub == 2) {
            TR("  cuCtxRecordEvent + cuEventSynchronize\n");
            CK(cuCtxRecordEvent(g_ctx, o->ev));
            uint32_t all[MAXE] = { 0 };
            for (int t = 0; t < g_ne; t++)
                vc_join(all, E[t].vc);
            CK(cuEventSynchronize(o->ev));
            host_saw(all);
            observe("cuCtxRecordEvent + cuEventSynchronize");
            return;
        }
        TR("  event record on stream %d + %s\n", e, o->sub ? "query until done" : "synchronize");
        CK((s.ptsz ? cuEventRecord_ptsz : cuEventRecord)(o->ev, s.h));
        if (o->sub == 0) {
            CK(cuEventSynchronize(o->ev));
        } else {
            CUresult r;
            double t0 = hx_now();
            while ((r = cuEventQuery(o->ev)) == CUDA_ERROR_NOT_READY) {
                HX_ASSERT(hx_now() - t0 < 30, "seed %llu, step %ld: an event never completed",
                          (unsigned long long)g_seed, g_step);
                sched_yield();
            }
            CK(r);
        }
        host_saw(E[e].vc);
        observe(o->sub ? "an event query" : "an event synchronisation");
        return;
    case O_WAIT: {
        int t = o->ps2 < 0 ? g_legacy : g_cur[o->ps2];
        sref s2 = sref_of(t, o->form2);
        TR("  stream %d waits for an event recorded on stream %d\n", e, t);
        CK((s2.ptsz ? cuEventRecord_ptsz : cuEventRecord)(o->ev, s2.h));
        uint32_t evc[MAXE];
        memcpy(evc, E[t].vc, sizeof evc);
        CK((s.ptsz ? cuStreamWaitEvent_ptsz : cuStreamWaitEvent)(s.h, o->ev, 0));
        vc_join(E[e].vc, evc);
        return;
    }
    case O_QUERY: {
        TR("  cuStreamQuery stream %d%s\n", e, o->sub ? " until done" : "");
        CUresult r;
        double t0 = hx_now();
        while ((r = (s.ptsz ? cuStreamQuery_ptsz : cuStreamQuery)(s.h)) == CUDA_ERROR_NOT_READY &&
               o->sub)
            HX_ASSERT(hx_now() - t0 < 30, "seed %llu, step %ld: a stream was never done",
                      (unsigned long long)g_seed, g_step);
        if (r == CUDA_ERROR_NOT_READY)
            return;
        CK(r);
        host_saw(E[e].vc);
        observe("cuStreamQuery");
        return;
    }
    case O_SSYNC:
        TR("  cuStreamSynchronize stream %d (form %d)\n", e, o->form);
        CK((s.ptsz ? cuStreamSynchronize_ptsz : cuStreamSynchronize)(s.h));
        host_saw(E[e].vc);
        observe("cuStreamSynchronize");
        return;
    case O_CSYNC:
        TR("  cuCtxSynchronize\n");
        CK(cuCtxSynchronize());
        host_saw_all();
        observe("cuCtxSynchronize");
        return;
    case O_SYNCCOPY: {
        int t = legacy_or_ptds(o->sub == 1);
        int d = o->dst[pick(o, n, 0)], sc = o->src[pick(o, n, 1)];
        if (o->sub == 2) { /* HtoD from pageable memory: not assumed done when it returns */
            order_after(t, NULL, 0, &d, 1);
            uint32_t k = work(t);
            uint64_t val = ((uint64_t)v << 32) | 0xabcu;
            TR("  cuMemcpyHtoD_v2 -> cell %d, %#llx\n", d, (unsigned long long)val);
            g_pageable_src = val;
            CK(cuMemcpyHtoD_v2(dp(d), &g_pageable_src, 8));
            g_pageable_src = 0xdeadbeefdeadbeefull;
            did_write(d, t, k, val);
            return;
        }
        order_after(t, &sc, 1, NULL, 0);
        uint32_t k = work(t);
        uint64_t got = 0;
        TR("  %s cell %d (stream %d)\n", o->sub ? "cuMemcpyDtoH_v2_ptds" : "cuMemcpyDtoH_v2",
           sc, t);
        CK((o->sub && g_ptds >= 0 ? cuMemcpyDtoH_v2_ptds : cuMemcpyDtoH_v2)(&got, dp(sc), 8));
        did_read(sc, t, k);
        host_saw(E[t].vc);
        HX_ASSERT(got == C[sc].model, "seed %llu, step %ld (%s): a synchronous copy read %#llx "
                  "from cell %d, expected %#llx", (unsigned long long)g_seed, g_step, g_where,
                  (unsigned long long)got, sc, (unsigned long long)C[sc].model);
        observe("a synchronous copy");
        return;
    }
    case O_SYNCMEMSET: {
        int t = legacy_or_ptds(o->sub == 1);
        int d = o->dst[pick(o, n, 0)];
        if (C[d].kind != M_DEV)
            return; /* asynchronous only into device memory */
        order_after(t, NULL, 0, &d, 1);
        uint32_t k = work(t);
        TR("  cuMemsetD32_v2%s cell %d, %#x\n", t == g_ptds ? "_ptds" : "", d, v);
        CK((t == g_ptds ? cuMemsetD32_v2_ptds : cuMemsetD32_v2)(dp(d), v, 2));
        did_write(d, t, k, pattern(v, 4));
        return;
    }
    case O_XTHREAD:
        if (o->sub == 1 && E[e].kind != E_PTDS) {
            TR("  another thread synchronises stream %d\n", e);
            helper_do(2, E[e].kind == E_LEGACY ? NULL : E[e].h, NULL);
            host_saw(E[e].vc);
            observe("another thread's cuStreamSynchronize");
        } else if (o->sub == 2) {
            TR("  another thread frees\n");
            helper_do(3, NULL, NULL);
        } else {
            TR("  another thread synchronises the context\n");
            helper_do(1, NULL, NULL);
            host_saw_all();
            observe("another thread's cuCtxSynchronize");
        }
        return;
    case O_FREE: {
        TR("  cuMemAlloc + cuMemFree\n");
        CUdeviceptr d;
        CK(cuMemAlloc_v2(&d, 64));
        CK(cuMemFree_v2(d));
        return;
    }
    case O_RECREATE:
        recreate(o, o->ps);
        return;
    case O_HOSTFN: {
        hostfn_arg *a = malloc(sizeof *a);
        HX_ASSERT(a, "out of memory");
        *a = (hostfn_arg){ E[e].log, E[e].mn, g_step };
        TR("  cuLaunchHostFunc on stream %d: %u log entries\n", e, a->want);
        CK((s.ptsz ? cuLaunchHostFunc_ptsz : cuLaunchHostFunc)(s.h, hostfn, a));
        return;
    }
    default:
        return;
    }
}

/* ---- the program ------------------------------------------------------------------------- */
static void gen_program(void)
{
    int have_legacy = 0, have_ptds = 0;
    g_nps = 1 + (int)rnd(3);
    for (int p = 0; p < g_nps; p++) {
        uint32_t r = rnd(10);
        int kind = r < 5 ? E_BLOCKING : r < 8 ? E_NONBLOCKING : r < 9 ? E_LEGACY : E_PTDS;
        if ((kind == E_LEGACY && have_legacy) || (kind == E_PTDS && have_ptds))
            kind = E_BLOCKING;
        have_legacy |= kind == E_LEGACY;
        have_ptds |= kind == E_PTDS;
        g_cur[p] = new_entity(kind);
        if (kind == E_LEGACY)
            g_legacy = g_cur[p];
        if (kind == E_PTDS)
            g_ptds = g_cur[p];
    }
    if (g_legacy < 0)
        g_legacy = new_entity(E_LEGACY);
    for (int i = 0; i < 3 * NPRIV + NSHARED; i++)
        new_cell(M_DEV);
    for (int i = 0; i < NMANAGED; i++)
        new_cell(M_MANAGED);
    g_nb = 2 + (int)rnd(3);
    for (int b = 0; b < g_nb; b++) {
        B[b].n = 3 + (int)rnd(MAXOPS - 3);
        int sync_last = chance(60);
        for (int i = 0; i < B[b].n; i++)
            gen_op(&B[b].ops[i], sync_last && i == B[b].n - 1);
    }
    for (int i = 0; i < NEXTRA; i++) {
        memset(&X[i], 0, sizeof X[i]);
        X[i].id = g_nops++;
        X[i].ps = (int)rnd((uint32_t)g_nps);
        X[i].form = (int)rnd(3);
        X[i].vmode = 1;
        X[i].kid = 100 + (uint32_t)X[i].id;
        gen_kernel(&X[i]);
    }
    g_npat = 2 + (int)rnd(5);
    for (int i = 0; i < g_npat; i++)
        g_pat[i] = (int)rnd((uint32_t)g_nb);
}

static void print_program(void)
{
    printf("random: seed %llu, %d streams:", (unsigned long long)g_seed, g_nps);
    for (int p = 0; p < g_nps; p++)
        printf(" %s", ekind_name[E[g_cur[p]].kind]);
    printf("; order");
    for (int i = 0; i < g_npat; i++)
        printf(" %d", g_pat[i]);
    printf("\n");
    for (int b = 0; b < g_nb; b++) {
        printf("random: body %d:", b);
        for (int i = 0; i < B[b].n; i++) {
            const op *o = &B[b].ops[i];
            printf(" %s", o->k == O_KERNEL ? kk_name[o->sub] : opk_name[o->k]);
            printf("@%d", o->ps);
        }
        printf("\n");
    }
}

/* RANDOM_PAUSE: the library's pause and resume (NULL without the library or the setting). */
static int (*g_pause)(void), (*g_resume)(void);
static int g_paused;
static long g_toggles;

/* Before operation i of step it: now and then the library is paused, or resumed. */
static void maybe_toggle_pause(long it, int i)
{
    if (!g_pause || hash3(g_seed ^ 0x9a5e, (uint64_t)it, (uint64_t)i) % 100 >= 4)
        return;
    TR(" %s the library\n", g_paused ? "resume" : "pause");
    HX_ASSERT((g_paused ? g_resume() : g_pause()) == 0, "autograph_%s failed",
              g_paused ? "resume" : "pause");
    g_paused = !g_paused;
    g_toggles++;
}

static void run_body(int b, long it)
{
    body *bd = &B[b];
    /* divergence: now and then one operation is missing or an extra launch comes first */
    int div = -1, extra = 0;
    uint64_t h = hash3(g_seed ^ 0xd1, (uint64_t)it, 7);
    if (h % 100 < 10) {
        div = (int)((h >> 8) % (uint64_t)bd->n);
        extra = (int)((h >> 20) & 1);
    }
    TR("step %ld: body %d%s\n", it, b, div < 0 ? "" : extra ? " (extra launch)" : " (missing op)");
    for (int i = 0; i < bd->n; i++) {
        char where[48];
        snprintf(where, sizeof where, "body %d op %d", b, i);
        g_where = where;
        if (i == div && extra) {
            op *x = &X[(h >> 24) % NEXTRA];
            run_kernel(x, g_cur[x->ps], x->runs++, FX[x - X]);
        }
        if (i == div && !extra)
            continue;
        maybe_toggle_pause(it, i);
        op *o = &bd->ops[i];
        TR(" op %d (%s%s):\n", i, opk_name[o->k], o->helper ? ", another thread" : "");
        if (o->helper) {
            /* the waits it needs come first, from this thread: another thread cannot record
             * an event on this thread's per-thread stream */
            int rd[1], wr[1], nrd, nwr;
            accesses(o, o->runs, rd, &nrd, wr, &nwr);
            order_after(g_cur[o->ps], rd, nrd, wr, nwr);
            helper_do(4, NULL, o);
        }
        else
            run_op(o, o->runs++);
    }
}

int main(int argc, char **argv)
{
    g_seed = (uint64_t)strtoull(argc > 1 ? argv[1] : "1", NULL, 10);
    long iters = hx_arg(argc, argv, 2, 80);
    g_mask = argc > 3 ? strtol(argv[3], NULL, 0) : 0;
    g_trace = getenv("RANDOM_TRACE") && atoi(getenv("RANDOM_TRACE"));
    g_pageable_sync = getenv("RANDOM_PAGEABLE_SYNC") && atoi(getenv("RANDOM_PAGEABLE_SYNC"));
    g_alternate = getenv("RANDOM_ALTERNATE") && atoi(getenv("RANDOM_ALTERNATE"));
    if (getenv("RANDOM_PAUSE") && atoi(getenv("RANDOM_PAUSE"))) {
        g_pause = (int (*)(void))dlsym(RTLD_DEFAULT, "autograph_pause");
        g_resume = (int (*)(void))dlsym(RTLD_DEFAULT, "autograph_resume");
        if (!g_pause || !g_resume)
            g_pause = g_resume = NULL;
    }
    g_rng = mix64(g_seed + 1);
    g_ctx = hx_init();
    static const size_t sz_rec[] = { 8, 4, 4 };
    for (int f = 0; f < NFN; f++) {
        char name[32];
        snprintf(name, sizeof name, "rnd_rec%d", f);
        F[KK_REC][f] = hx_kernel_rec(name);
        snprintf(name, sizeof name, "rnd_rec64_%d", f);
        F[KK_REC64][f] = hx_kernel_rec64(name);
        snprintf(name, sizeof name, "rnd_acc%d", f);
        F[KK_ACC][f] = hx_kernel_acc(name);
        snprintf(name, sizeof name, "rnd_copy%d", f);
        F[KK_COPY][f] = hx_kernel_copy(name);
        snprintf(name, sizeof name, "rnd_dims%d", f);
        F[KK_DIMS][f] = fakecuda_kernel(name, k_dims, 3, sz_rec);
        HX_ASSERT(F[KK_DIMS][f], "kernel %s", name);
    }
    g_logcap = (uint32_t)(iters * (MAXOPS + 1) + 64);
    gen_program();
    for (int i = 0; i < NEXTRA; i++) { /* extra launches: kernels of their own */
        char name[32];
        snprintf(name, sizeof name, "rnd_x%d_%s", i, kk_name[X[i].sub]);
        switch (X[i].sub) {
        case KK_REC: FX[i] = hx_kernel_rec(name); break;
        case KK_REC64: FX[i] = hx_kernel_rec64(name); break;
        case KK_ACC: FX[i] = hx_kernel_acc(name); break;
        case KK_COPY: FX[i] = hx_kernel_copy(name); break;
        default: FX[i] = fakecuda_kernel(name, k_dims, 3, sz_rec); break;
        }
        HX_ASSERT(FX[i], "kernel %s", name);
    }
    g_npinned_src = iters * MAXOPS + 16;
    CK(cuMemAllocHost_v2((void **)&g_pinned_src, (size_t)g_npinned_src * 8));
    print_program();
    fflush(stdout);
    pthread_t th;
    HX_ASSERT(!pthread_create(&th, NULL, helper, NULL), "pthread_create");

    for (long it = 0; it < iters; it++) {
        g_step = it;
        uint64_t h = hash3(g_seed ^ 0xb0d, (uint64_t)it, 3);
        int b = h % 100 < 8 ? (int)((h >> 8) % (uint64_t)g_nb) : g_pat[it % g_npat];
        run_body(b, it);
    }
    if (g_paused)
        HX_ASSERT(g_resume() == 0, "autograph_resume failed");
    if (g_pause)
        printf("random: the library paused or resumed %ld times\n", g_toggles);
    g_where = "end";
    CK(cuCtxSynchronize());
    host_saw_all();
    observe("the final cuCtxSynchronize");
    for (int i = 0; i < g_nc; i++)
        HX_ASSERT(C[i].lw_e < 0 || H[C[i].lw_e] >= C[i].lw_c, "model: cell %d not covered at the "
                  "end", i);
    for (int e = 0; e < g_ne; e++)
        HX_ASSERT(E[e].checked == E[e].mn, "model: log %d not compared at the end", e);
    helper_do(-1, NULL, NULL);
    pthread_join(th, NULL);
    for (int e = 0; e < g_ne; e++)
        if (E[e].alive && E[e].h)
            CK(cuStreamDestroy_v2(E[e].h));
    printf("random: seed %llu: %ld steps, %ld checks, %ld values and %ld log entries compared, "
           "%ld waits inserted\n", (unsigned long long)g_seed, iters, g_checks, g_values,
           g_entries, g_inserted);
    hx_pass("random");
    return 0;
}
