/* Ordering points: what each CUDA call that can observe held work asks of the engine. */
/* Stream work and waits, synchronous copies, frees and context syncs, unloads, stream
 * destruction, captures. */
#include <pthread.h>
#include <string.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/engine.h"
#include "cache/flush.h"
#include "cache/internal.h"
#include "cache/params.h"
#include "cache/selftime.h"
#include "cache/watch.h"
#include "cache/worker.h"

static CUresult order_stream(CUstream s, int ptsz, int take);

__attribute__((hot)) CUresult ag_order_stream(CUstream s, int ptsz)
{
    if (!ag_engine_started())
        return CUDA_SUCCESS;
    AG_SELF_BEGIN(AG_SELF_STREAM_ORDER);
    CUresult e = order_stream(s, ptsz, 1);
    AG_SELF_END(AG_SELF_STREAM_ORDER);
    return e;
}

/* An ordering point with nothing to do (counted: what resting and stateless streams cost is
 * what the report and the replay model charge them). */
static inline CUresult passed(void)
{
    ag_stat_inc(AG_ST_ORDER_PASSED);
    return CUDA_SUCCESS;
}

/* An ordering point on the legacy stream while the one context's legacy state rests (rest.h):
 * out of line, as in launch.c. */
static __attribute__((noinline)) int legacy_rests(CUstream s)
{
    ag_stream *one = ag_rest_legacy_one(s, 0);
    if (!one)
        return 0;
    ag_cross_flush(one);
    return ag_rest_order_passes(one);
}

/* The ordering point; with `take`, returns (and clears) an error a held launch left on the
 * stream (an error there also keeps the rest paths below from passing: rest.h). */
static __attribute__((hot)) CUresult order_stream(CUstream s, int ptsz, int take)
{
    int captures = atomic_load_explicit(&ag_hot.captures, memory_order_acquire) != 0;
    if (!captures && ag_rest_token_covers(s))
        return passed();
    if (AG_UNLIKELY(ag_watch_is_legacy(s, ptsz)) && !captures && legacy_rests(s))
        return passed();
    /* a stream never seen needs no state, unless the legacy rule may concern it */
    ag_stream *st = captures ? ag_stream_find(s, ptsz) : ag_stream_of(s, ptsz);
    AG_SELF_MARK(AG_SM_LOOKUP);
    if (!st)
        return passed();
    ag_cross_flush(st);
    AG_SELF_MARK(AG_SM_O_CROSS);
    if (ag_rest_order_passes(st))
        return passed();
    ag_lock(&st->mu);
    if (st->kind == AG_SK_PTDS)
        ag_ptds_join(st);
    if (st->kind != AG_SK_DEAD)
        ag_order_locked(st, AG_ST_FL_ORDER);
    CUresult e = take ? ag_stream_error_take(st, CUDA_SUCCESS) : CUDA_SUCCESS;
    ag_sync_open(st);
    ag_unlock(&st->mu);
    return e;
}

CUresult ag_order_result(CUstream s, int ptsz, CUresult r, CUresult pending)
{
    if (r == CUDA_SUCCESS || !pending)
        return r ? r : pending;
    /* the call failed on its own: the driver's answer first, the held launch's error stays
     * on the stream for its next call */
    ag_stream *st = ag_stream_find(s, ptsz);
    if (!st) /* a context-wide call that failed (no stream to keep it on): said, at least */
        ag_log(AG_LOG_WARN, "the error (%d) of a held launch is lost: the call that was to "
               "return it failed (%d)", (int)pending, (int)r);
    if (st) {
        ag_lock(&st->mu);
        if (!st->err && st->kind != AG_SK_DEAD)
            __atomic_store_n(&st->err, (uint16_t)pending, __ATOMIC_RELAXED);
        ag_rest_end(st);
        ag_unlock(&st->mu);
    }
    return r;
}

/* Until the first launch, a call that waits (a synchronisation or a synchronous copy: programs
 * make one just before the region they time) runs the launch path's rehearsal again, and reads
 * an ordering point's code, C1's other call: what cuInit left in the CPU's caches is gone by
 * then (modules loaded, memory allocated and copied). The host waits there anyway. */
static void rehearse_before_first(void)
{
    if (AG_LIKELY(__atomic_load_n(&ag_launched, __ATOMIC_RELAXED)))
        return;
    ag_launch_rehearse();
    ag_prefetch((const void *)(uintptr_t)ag_order_stream, 1024, 0);
    ag_prefetch((const void *)(uintptr_t)order_stream, 1024, 0);
}

/* Cold work deferred to where the host waits: the worker's wake-up for layout probes. Not at
 * ordering points that do not wait (event records, queries): the worker's probes run in the
 * driver beside the application's launches and slow them (G2, 30 sgemm timed once, with an
 * event record after each: 0.854x with the worker, 0.930x without, H100, eleventh session). */
void ag_order_waits(void)
{
    if (ag_engine_started()) {
        ag_layout_wake_due();
        rehearse_before_first();
    }
}

CUresult ag_order_sync_copy(int ptsz)
{
    ag_order_waits();
    return ag_order_stream(NULL, ptsz);
}

void ag_order_all(void)
{
    if (ag_engine_started()) {
        ag_layout_wake_due();
        ag_flush_all(AG_ST_FL_ALL);
    }
}

CUresult ag_order_all_call(void)
{
    if (!ag_engine_started())
        return CUDA_SUCCESS;
    ag_layout_wake_due();
    rehearse_before_first();
    return ag_flush_all_take();
}

/* ---- a function's attributes change ------------------------------------------------------- */

/* What a change of h's attributes reaches: launches and graph nodes of h itself, and -- a
 * CUkernel and the CUfunction the driver makes of it in a context share their attributes --
 * of the other kind of handle with the same name. Other functions with the same name and
 * kind (another module's copy: cuDNN compiles one per sequence length, and sets its
 * attributes before its first launch) are not reached, so their graphs stay. A handle the
 * driver names nothing for reaches everything. */
typedef struct reach {
    const void *h;
    int is_kernel, named;
    char name[sizeof(((ag_layout *)0)->name)];
} reach;

static void reach_of(const void *h, reach *R)
{
    memset(R, 0, sizeof *R);
    R->h = h;
    if (!h)
        return;
    size_t off, sz;
    const char *name = NULL;
    /* the test params.c makes: a CUkernel is no CUfunction to cuFuncGetParamInfo */
    R->is_kernel = ag_drv.cuFuncGetParamInfo((CUfunction)h, 0, &off, &sz) ==
                   CUDA_ERROR_INVALID_HANDLE;
    if (R->is_kernel ? !ag_drv.cuKernelGetName || ag_drv.cuKernelGetName(&name, (CUkernel)h)
                     : !ag_drv.cuFuncGetName || ag_drv.cuFuncGetName(&name, (CUfunction)h))
        name = NULL;
    if (name && *name) {
        strncpy(R->name, name, sizeof R->name - 1);
        R->named = 1;
    }
}

static int reaches(const reach *R, const void *fn, const ag_layout *lay)
{
    if (fn == R->h || !R->named)
        return 1;
    return lay->is_kernel != R->is_kernel &&
           !strncmp(lay->name, R->name, sizeof lay->name - 1); /* (both cut alike) */
}

typedef struct func_req {
    reach R;
    int drop;
    uint64_t me;
    uint32_t flushed, dropped;
} func_req;

static int holds_reached(const ag_stream *st, const func_req *q)
{
    for (uint32_t i = 0; i < st->nheld; i++) {
        const ag_rec *r = &st->held[i];
        if (r->shape.kind != AG_KIND_COPY && reaches(&q->R, r->lay->handle, r->lay))
            return 1;
    }
    return 0;
}

static int graph_reached(const ag_tmpl *T, const func_req *q)
{
    for (uint32_t i = 0; i < T->len; i++) {
        const ag_node *n = &T->nodes[i];
        if (n->node && n->shape.kind != AG_KIND_COPY &&
            (reaches(&q->R, n->exec_fn, n->lay) || reaches(&q->R, n->graph_fn, n->lay)))
            return 1;
    }
    return 0;
}

/* T's graphs were just dropped for an attribute change. A library that sets a kernel's
 * attribute to values that alternate around its launches (PyTorch's BatchNorm under AMP:
 * MAX_DYNAMIC_SHARED_SIZE_BYTES of one kernel 0, then 8192, every step) drops the graph of
 * every occurrence: each is then held, built and issued eagerly for nothing (91% of an AMP
 * training step's launches, 0.81x eager on the H100, 2026-11-25). Twice in a row with fewer
 * than ATTR_PAYBACK replays between: the sequence goes eager for a back-off that doubles, as
 * after a failed build. */
#define ATTR_PAYBACK 4
static void attr_churn(ag_tmpl *T)
{
    int early = T->replays - T->attr_drop_replays < ATTR_PAYBACK;
    T->attr_drop_replays = T->replays;
    T->attr_churn = early ? T->attr_churn + 1 : 0;
    if (T->attr_churn < 2)
        return;
    T->attr_churn = 0;
    T->attr_offs++;
    ag_benefit_failed(T->bp);
    ag_stat_inc(AG_ST_POLICY_ATTR_OFF);
    ag_log(AG_LOG_DEBUG, "sequence %016llx: function attribute changes keep dropping its "
           "graphs before they pay back: eager for a while", (unsigned long long)T->key);
}

static void func_each(ag_stream *st, void *arg)
{
    func_req *q = arg;
    if (st->kind == AG_SK_DEAD)
        return;
    ag_lock(&st->mu);
    if (st->kind == AG_SK_DEAD) { /* (retired meanwhile) */
        ag_unlock(&st->mu);
        return;
    }
    if (!q->drop) {
        if (st->nheld && holds_reached(st, q)) {
            /* as a free or context sync would: an ordering point for the thread's own streams */
            ag_flush_foreign(st, AG_ST_FL_ALL, st->last_thread == q->me);
            q->flushed++;
        }
    } else {
        for (ag_tmpl *T = st->tmpls; T; T = T->next_all)
            if (T->nbuilt && graph_reached(T, q)) {
                ag_tmpl_drop_graph(st, T);
                ag_stat_inc(AG_ST_ATTR_DROPS);
                attr_churn(T);
                q->dropped++;
            }
    }
    ag_sync_open(st);
    ag_unlock(&st->mu);
}

void ag_order_func(const void *h, int drop)
{
    if (!ag_engine_started())
        return;
    func_req q;
    memset(&q, 0, sizeof q);
    reach_of(h, &q.R);
    q.drop = drop;
    q.me = ag_thread_id();
    if (drop)
        ag_graph_builds_void(); /* a build under way may hold the function: made again later */
    ag_streams_each(func_each, &q);
    if (q.flushed || q.dropped)
        ag_log(AG_LOG_DEBUG, "a function attribute changed: %u stream%s flushed, %u graph%s "
               "dropped", q.flushed, q.flushed == 1 ? "" : "s", q.dropped,
               q.dropped == 1 ? "" : "s");
}

/* The first error a held launch left on a state being retired (the call retiring it returns
 * it: it is the last call that can). */
static void take_error(ag_stream *st, void *arg)
{
    CUresult *e = arg;
    if (st->kind == AG_SK_DEAD || !__atomic_load_n(&st->err, __ATOMIC_RELAXED))
        return;
    ag_lock(&st->mu);
    CUresult x = ag_stream_error_take(st, CUDA_SUCCESS);
    if (!*e)
        *e = x;
    ag_unlock(&st->mu);
}

CUresult ag_order_invalidate(void)
{
    if (!ag_engine_started())
        return CUDA_SUCCESS;
    ag_layout_drop_pending(); /* no build or probe may use what goes now */
    ag_worker_quiesce(1);
    ag_flush_all(AG_ST_FL_ALL);
    CUresult e = CUDA_SUCCESS;
    ag_streams_each(take_error, &e);
    ag_streams_retire_all(ag_stream_empty);
    ag_layout_invalidate();
    ag_stat_inc(AG_ST_INVALIDATIONS);
    ag_log(AG_LOG_DEBUG, "module unload or context teardown: caches dropped");
    return e;
}

CUresult ag_order_stream_destroy(CUstream s)
{
    if (!ag_engine_started() || s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
        return CUDA_SUCCESS;
    ag_stream *st = ag_stream_find(s, 0);
    if (!st)
        return CUDA_SUCCESS;
    ag_cross_flush(st);
    /* flushed as from any thread: the caller's current context need not be the stream's */
    CUresult e = CUDA_SUCCESS;
    ag_lock(&st->mu);
    if (st->kind != AG_SK_DEAD) {
        ag_flush_foreign(st, AG_ST_FL_ORDER, 0);
        e = ag_stream_error_take(st, CUDA_SUCCESS);
    }
    ag_unlock(&st->mu);
    ag_stream_retire(st, ag_stream_empty);
    return e;
}

/* The application captures: flush everything first, and hold nothing until it is done. */
#define MAX_CAPTURES 64
static struct {
    CUstream s;
    uint64_t thread;
} g_capturing[MAX_CAPTURES];
static pthread_mutex_t g_cap_mu = PTHREAD_MUTEX_INITIALIZER;

void ag_order_capture_begin(CUstream s, int ptsz)
{
    /* first an ordering point on the stream itself, outside the capture: a per-thread stream
     * joins its side stream now (inside the capture the join would invalidate it) */
    if (ag_engine_started())
        order_stream(s, ptsz, 0); /* an error left on it waits: the capture does begin */
    atomic_fetch_add(&ag_hot.captures, 1);
    atomic_fetch_add(&ag_hot.barred, 1);
    if (ag_engine_started())
        ag_flush_all(AG_ST_FL_ORDER);
}

void ag_order_capture_begin_done(CUstream s, int ptsz, CUresult r)
{
    if (r != CUDA_SUCCESS) {
        atomic_fetch_sub(&ag_hot.barred, 1);
        atomic_fetch_sub(&ag_hot.captures, 1);
        return;
    }
    CUstream k = s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
    pthread_mutex_lock(&g_cap_mu);
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (!g_capturing[i].s) {
            g_capturing[i].s = k;
            g_capturing[i].thread = k == CU_STREAM_PER_THREAD ? ag_thread_id() : 0;
            break;
        }
    /* no free slot: the count stays up and launches keep passing through -- safe */
    pthread_mutex_unlock(&g_cap_mu);
}

void ag_order_capture_end(CUstream s, int ptsz)
{
    if (ag_engine_started())
        order_stream(s, ptsz, 0); /* the graph is made: an error left waits for the next call */
}

void ag_order_capture_end_done(CUstream s, int ptsz)
{
    CUstream k = s ? s : (ptsz ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY);
    uint64_t th = k == CU_STREAM_PER_THREAD ? ag_thread_id() : 0;
    pthread_mutex_lock(&g_cap_mu);
    for (int i = 0; i < MAX_CAPTURES; i++)
        if (g_capturing[i].s == k && g_capturing[i].thread == th) {
            g_capturing[i].s = NULL;
            atomic_fetch_sub(&ag_hot.barred, 1);
            atomic_fetch_sub(&ag_hot.captures, 1);
            break;
        }
    pthread_mutex_unlock(&g_cap_mu);
}

/* ---- stream attributes ------------------------------------------------------------------- */

CUresult ag_order_stream_attr(CUstream s, int ptsz)
{
    ag_stream_attrs_touched();
    return ag_order_stream(s, ptsz);
}

void ag_order_stream_attr_done(CUstream s, int ptsz, CUresult r)
{
    if (r != CUDA_SUCCESS || !ag_engine_started())
        return;
    ag_stream *st = ag_stream_find(s, ptsz); /* (ag_order_stream made it, when it matters) */
    if (!st)
        return;
    ag_lock(&st->mu);
    if (st->kind != AG_SK_DEAD && st->held) {
        /* while the application captures, the driver is asked nothing: taken as set until the
         * next change */
        if (atomic_load_explicit(&ag_hot.captures, memory_order_acquire))
            st->sattr = 1;
        else
            ag_stream_attrs_read(st);
    }
    ag_unlock(&st->mu);
}
