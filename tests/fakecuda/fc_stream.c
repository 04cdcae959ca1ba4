/* fakecuda: streams and their worker threads, the default-stream rules, events, kernel
 * launches, host functions and memory. See fakecuda.h for the model.
 *
 * Each stream has a FIFO of items and one worker thread that runs them in order. An item may
 * carry dependencies -- (stream, n): wait until that stream has completed its first n items --
 * taken when it is enqueued: the legacy default stream's rule, event waits. Dependencies only
 * ever point to items enqueued earlier, so they form no cycle. `enq` and `done` count the
 * items a stream has been given and has completed; both only grow. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <time.h>

#include "fc_internal.h"

enum fc_ikind { FC_I_NOP, FC_I_KERNEL, FC_I_MEMCPY, FC_I_MEMSET, FC_I_HOSTFN, FC_I_FREE };

typedef struct fc_dep {
    fc_stream *s;
    uint64_t seq;
} fc_dep;

typedef struct fc_item {
    struct fc_item *next;
    uint64_t seq;
    int kind;
    int from_graph;
    int ndeps;
    fc_dep *deps;
    fc_kcall k;                      /* FC_I_KERNEL */
    void *dst;                       /* FC_I_MEMCPY, FC_I_MEMSET32 */
    const void *src;
    size_t n;
    uint32_t val;
    unsigned elem;                   /* FC_I_MEMSET: element size, 1, 2 or 4 */
    void *stage;                     /* FC_I_MEMCPY from pageable memory: owned copy */
    CUhostFn hfn;                    /* FC_I_HOSTFN */
    void *ud;
    struct fc_stamp *stamp;          /* an event record's: stamped when the item completes */
} fc_item;

/* When an event's record completed, for cuEventElapsedTime: shared by the record's item and
 * the event (either may go first: an event may be destroyed or recorded again while a record
 * is pending), freed by the last reference. */
typedef struct fc_stamp {
    atomic_int refs;
    atomic_ullong ns;                /* CLOCK_MONOTONIC; written before the item is done */
} fc_stamp;

static fc_stamp *stamp_new(void)
{
    fc_stamp *t = calloc(1, sizeof *t);
    if (t)
        atomic_store(&t->refs, 2); /* the event's and the item's */
    return t;
}

static void stamp_put(fc_stamp *t)
{
    if (t && atomic_fetch_sub(&t->refs, 1) == 1)
        free(t);
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static unsigned g_delay_us;
static unsigned g_launch_host_us; /* FAKECUDA_LAUNCH_HOST_US: a kernel launch's host time */
static uint64_t g_seed;
static int g_reuse = 1;
static atomic_int g_next_stream_id;

void fc_stream_config(unsigned delay_us, uint64_t seed, int reuse_handles)
{
    const char *e = getenv("FAKECUDA_LAUNCH_HOST_US");
    g_launch_host_us = e && *e ? (unsigned)strtoul(e, NULL, 10) : 0;
    g_delay_us = delay_us;
    g_seed = seed;
    g_reuse = reuse_handles;
}

static uint64_t splitmix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static uint64_t rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1Dull;
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A random delay in [0, FAKECUDA_DELAY_US] before each item. Short ones spin: a sleep that
 * short is rounded up to the timer slack, and a yield can hand the core away for a whole
 * time slice. */
static void delay(fc_stream *s)
{
    if (!g_delay_us)
        return;
    uint64_t us = rng_next(&s->rng) % (g_delay_us + 1);
    if (!us)
        return;
    if (us > 200) {
        struct timespec ts = { (time_t)(us / 1000000u), (long)(us % 1000000u) * 1000 };
        nanosleep(&ts, NULL);
        return;
    }
    uint64_t end = now_ns() + us * 1000u;
    while (now_ns() < end)
        ;
}

/* ---- creation -------------------------------------------------------------------------- */

fc_stream *fc_stream_new_internal(fc_ctx *c, int kind, unsigned flags, int prio)
{
    fc_stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = FC_M_STREAM;
    s->id = atomic_fetch_add(&g_next_stream_id, 1) + 1;
    s->ctx = c;
    s->flags = flags;
    s->priority = prio;
    s->kind = kind;
    s->blocking = !(flags & CU_STREAM_NON_BLOCKING);
    s->rng = splitmix(g_seed ^ ((uint64_t)s->id << 32)) | 1;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->work_cv, NULL);
    pthread_cond_init(&s->done_cv, NULL);
    pthread_mutex_lock(&c->mu);
    s->ctx_next = c->streams;
    c->streams = s;
    pthread_mutex_unlock(&c->mu);
    /* Streams are never freed: a destroyed one only stops being a valid handle. */
    return s;
}

#define FC_PTDS_MAX 16
static __thread struct {
    fc_ctx *c;
    fc_stream *s;
} t_ptds[FC_PTDS_MAX];
static __thread int t_nptds;

static fc_stream *ptds_of(fc_ctx *c)
{
    for (int i = 0; i < t_nptds; i++)
        if (t_ptds[i].c == c)
            return t_ptds[i].s;
    if (t_nptds == FC_PTDS_MAX)
        return NULL;
    fc_stream *s = fc_stream_new_internal(c, FC_S_PTDS, 0, 0);
    if (!s)
        return NULL;
    t_ptds[t_nptds].c = c;
    t_ptds[t_nptds].s = s;
    t_nptds++;
    return s;
}

fc_stream *fc_stream_resolve(CUstream h, int ptsz, CUresult *err)
{
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        fc_ctx *c;
        if ((*err = fc_need_ctx(&c)))
            return NULL;
        int per_thread = h == CU_STREAM_PER_THREAD || (h == NULL && ptsz);
        fc_stream *s = per_thread ? ptds_of(c) : c->legacy;
        if (!s)
            *err = CUDA_ERROR_OUT_OF_MEMORY;
        return s;
    }
    fc_stream *s = (fc_stream *)h;
    if (!fc_valid(s, FC_M_STREAM)) {
        *err = CUDA_ERROR_INVALID_HANDLE;
        return NULL;
    }
    if (s->ctx->destroyed) {
        *err = CUDA_ERROR_CONTEXT_IS_DESTROYED;
        return NULL;
    }
    *err = CUDA_SUCCESS;
    return s;
}

static int g_check_current = 1;

void fc_check_current_config(int on)
{
    g_check_current = on;
}

CUresult fc_check_current(const fc_stream *s)
{
    /* the driver refuses work on a stream of a context that is not current on this thread */
    if (g_check_current && s->ctx != fc_current_ctx())
        return CUDA_ERROR_INVALID_CONTEXT;
    return CUDA_SUCCESS;
}

/* ---- the worker ----------------------------------------------------------------------- */

/* Waits until s has completed its first seq items; 0, or -1 past the deadline (0: none). */
static int wait_upto(fc_stream *s, uint64_t seq, uint64_t deadline_ns)
{
    if (atomic_load(&s->done) >= seq)
        return 0;
    int rc = 0;
    pthread_mutex_lock(&s->mu);
    while (atomic_load(&s->done) < seq) {
        if (!deadline_ns) {
            pthread_cond_wait(&s->done_cv, &s->mu);
            continue;
        }
        if (now_ns() >= deadline_ns) {
            rc = -1;
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 10 * 1000 * 1000;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&s->done_cv, &s->mu, &ts);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

static void item_free(fc_item *it)
{
    stamp_put(it->stamp);
    free(it->deps);
    free(it->k.blob);
    free(it->stage);
    free(it);
}

struct fc_alloc;
static void poison(struct fc_alloc *a);

static void run_item(fc_item *it)
{
    switch (it->kind) {
    case FC_I_KERNEL: {
        extern __thread const fc_attrs *fc_cur_attrs;
        fc_cur_attrs = &it->k.attrs;
        it->k.fn(it->k.blob, it->k.grid, it->k.block);
        fc_cur_attrs = NULL;
        if (fc_is_copy_fn(it->k.fn)) { /* a memset or memcpy graph node (fc_graph.c) */
            FC_COUNT(graph_copies_executed);
            break;
        }
        FC_COUNT(kernels_executed);
        if (it->from_graph)
            FC_COUNT(graph_kernels_executed);
        break;
    }
    case FC_I_MEMCPY:
        memmove(it->dst, it->src, it->n);
        break;
    case FC_I_MEMSET:
        fc_memset_run(it->dst, it->val, it->elem, it->n);
        break;
    case FC_I_HOSTFN:
        it->hfn(it->ud);
        FC_COUNT(host_funcs);
        break;
    case FC_I_FREE: /* cuMemFreeAsync's, in stream order (below) */
        poison(it->dst);
        break;
    default:
        break;
    }
}

static void *worker(void *arg)
{
    fc_stream *s = arg;
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, NULL);
    char name[16];
    snprintf(name, sizeof name, "fakecuda-s%d", s->id);
    pthread_setname_np(pthread_self(), name);
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->head && !s->dying)
            pthread_cond_wait(&s->work_cv, &s->mu);
        fc_item *it = s->head;
        if (!it)
            break; /* destroyed and drained */
        s->head = it->next;
        if (!s->head)
            s->tail = NULL;
        pthread_mutex_unlock(&s->mu);
        for (int i = 0; i < it->ndeps; i++)
            wait_upto(it->deps[i].s, it->deps[i].seq, 0);
        delay(s);
        run_item(it);
        if (it->stamp) /* before done: whoever sees the record complete sees its time */
            atomic_store(&it->stamp->ns, mono_ns());
        pthread_mutex_lock(&s->mu);
        atomic_store(&s->done, it->seq);
        pthread_cond_broadcast(&s->done_cv);
        item_free(it);
    }
    s->exited = 1;
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

/* ---- enqueueing ----------------------------------------------------------------------- */

static int dep_push(fc_dep **deps, int *n, int *cap, fc_dep *small, fc_stream *t, uint64_t seq)
{
    if (seq <= atomic_load(&t->done))
        return 0;
    if (*n == *cap) {
        int ncap = *cap * 2;
        fc_dep *d = malloc((size_t)ncap * sizeof *d);
        if (!d)
            return -1;
        memcpy(d, *deps, (size_t)*n * sizeof *d);
        if (*deps != small)
            free(*deps);
        *deps = d;
        *cap = ncap;
    }
    (*deps)[(*n)++] = (fc_dep){ t, seq };
    return 0;
}

/* Enqueues items (a list in order) on s, whose lock the caller holds. The first item gets the
 * implicit dependencies of the default-stream rule and the extra ones (event waits). The
 * caller has checked that s is not capturing. *last gets the last item's number. */
static CUresult submit_locked(fc_stream *s, fc_item **items, int n, const fc_dep *extra,
                              int nextra, uint64_t *last)
{
    fc_dep small[8], *deps = small;
    int nd = 0, cap = 8, oom = 0;
    if (s->kind == FC_S_LEGACY) {
        fc_ctx *c = s->ctx;
        fc_stream *conflict = NULL;
        pthread_mutex_lock(&c->mu);
        for (fc_stream *t = c->streams; t; t = t->ctx_next) {
            if (t == s || !t->blocking)
                continue;
            if (atomic_load(&t->cap_status) == CU_STREAM_CAPTURE_STATUS_ACTIVE &&
                t->cap_mode != CU_STREAM_CAPTURE_MODE_RELAXED) {
                conflict = t;
                break;
            }
            oom |= dep_push(&deps, &nd, &cap, small, t, atomic_load(&t->enq));
        }
        pthread_mutex_unlock(&c->mu);
        if (conflict) {
            /* the legacy stream would have to wait for a capturing stream */
            atomic_store(&conflict->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
            if (deps != small)
                free(deps);
            return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        }
    } else if (s->blocking) {
        fc_stream *L = s->ctx->legacy;
        oom |= dep_push(&deps, &nd, &cap, small, L, atomic_load(&L->enq));
    }
    for (int i = 0; i < nextra; i++)
        oom |= dep_push(&deps, &nd, &cap, small, extra[i].s, extra[i].seq);
    if (oom) {
        if (deps != small)
            free(deps);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (nd) {
        fc_dep *d = malloc((size_t)nd * sizeof *d);
        if (!d) {
            if (deps != small)
                free(deps);
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        memcpy(d, deps, (size_t)nd * sizeof *d);
        items[0]->deps = d;
        items[0]->ndeps = nd;
    }
    if (deps != small)
        free(deps);
    if (!s->started) {
        pthread_attr_t a;
        pthread_attr_init(&a);
        pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
        int rc = pthread_create(&s->thr, &a, worker, s);
        pthread_attr_destroy(&a);
        if (rc) {
            free(items[0]->deps);
            items[0]->deps = NULL;
            items[0]->ndeps = 0;
            return CUDA_ERROR_OUT_OF_MEMORY;
        }
        s->started = 1;
    }
    for (int i = 0; i < n; i++) {
        fc_item *it = items[i];
        it->seq = atomic_load(&s->enq) + 1;
        atomic_store(&s->enq, it->seq);
        it->next = NULL;
        if (s->tail)
            s->tail->next = it;
        else
            s->head = it;
        s->tail = it;
    }
    *last = items[n - 1]->seq;
    pthread_cond_signal(&s->work_cv);
    return CUDA_SUCCESS;
}

/* Work other than kernel launches is refused on a capturing stream, which it invalidates. */
static CUresult capture_refuses(fc_stream *s)
{
    int st = atomic_load(&s->cap_status);
    if (st == CU_STREAM_CAPTURE_STATUS_NONE)
        return CUDA_SUCCESS;
    atomic_store(&s->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    return st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
                                                 : CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
}

/* Enqueues one item (taking ownership) on s; *seq gets its number. */
static CUresult submit(fc_stream *s, fc_item *it, const fc_dep *extra, int nextra, uint64_t *seq)
{
    uint64_t last = 0;
    pthread_mutex_lock(&s->mu);
    CUresult r = capture_refuses(s);
    if (!r)
        r = submit_locked(s, &it, 1, extra, nextra, &last);
    pthread_mutex_unlock(&s->mu);
    if (r) {
        item_free(it);
        return r;
    }
    if (seq)
        *seq = last;
    return CUDA_SUCCESS;
}

CUresult fc_enqueue_marker(fc_stream *s)
{
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return CUDA_ERROR_OUT_OF_MEMORY;
    it->kind = FC_I_NOP;
    return submit(s, it, NULL, 0, NULL);
}

CUresult fc_enqueue_kernels(fc_stream *s, const fc_kcall *k, int n, int from_graph)
{
    if (n == 0)
        return fc_enqueue_marker(s);
    fc_item **items = calloc((size_t)n, sizeof *items);
    if (!items)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    for (int i = 0; i < n && !r; i++) {
        if (!(items[i] = calloc(1, sizeof *items[i]))) {
            r = CUDA_ERROR_OUT_OF_MEMORY;
            break;
        }
        items[i]->kind = FC_I_KERNEL;
        items[i]->from_graph = from_graph;
        items[i]->k = k[i];
        items[i]->k.blob = malloc(k[i].size ? k[i].size : 1);
        if (!items[i]->k.blob)
            r = CUDA_ERROR_OUT_OF_MEMORY;
        else if (k[i].size)
            memcpy(items[i]->k.blob, k[i].blob, k[i].size);
    }
    if (!r) {
        uint64_t last;
        pthread_mutex_lock(&s->mu);
        r = capture_refuses(s);
        if (!r)
            r = submit_locked(s, items, n, NULL, 0, &last);
        pthread_mutex_unlock(&s->mu);
    }
    if (r)
        for (int i = 0; i < n; i++)
            if (items[i])
                item_free(items[i]);
    free(items);
    return r;
}

/* ---- synchronisation ------------------------------------------------------------------ */

static void sync_stream(fc_stream *s)
{
    wait_upto(s, atomic_load(&s->enq), 0);
}

void fc_ctx_sync(fc_ctx *c)
{
    pthread_mutex_lock(&c->mu);
    fc_stream *list = c->streams;
    pthread_mutex_unlock(&c->mu);
    /* new streams go in front: the list from here on is stable */
    for (fc_stream *t = list; t; t = t->ctx_next)
        sync_stream(t);
}

typedef struct {
    uint64_t deadline;
    int late;
} drain_arg;

static void drain_ctx(fc_ctx *c, void *arg)
{
    drain_arg *d = arg;
    pthread_mutex_lock(&c->mu);
    fc_stream *list = c->streams;
    pthread_mutex_unlock(&c->mu);
    for (fc_stream *t = list; t; t = t->ctx_next)
        if (wait_upto(t, atomic_load(&t->enq), d->deadline))
            d->late = 1;
}

void fc_drain_all(double seconds)
{
    drain_arg d = { now_ns() + (uint64_t)(seconds * 1e9), 0 };
    fc_for_each_ctx(drain_ctx, &d);
    if (d.late)
        fprintf(stderr, "fakecuda: warning: work still pending at exit after %.0f s\n", seconds);
}

/* Whether a capture in c forbids context-wide synchronisation (invalidating it). */
static int capture_blocks_ctx_sync(fc_ctx *c)
{
    int hit = 0;
    pthread_mutex_lock(&c->mu);
    for (fc_stream *t = c->streams; t; t = t->ctx_next)
        if (atomic_load(&t->cap_status) == CU_STREAM_CAPTURE_STATUS_ACTIVE &&
            t->cap_mode == CU_STREAM_CAPTURE_MODE_GLOBAL) {
            atomic_store(&t->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
            hit = 1;
        }
    pthread_mutex_unlock(&c->mu);
    return hit;
}

FC_EXPORT CUresult CUDAAPI cuCtxSynchronize(void)
{
    FC_ENTER();
    fc_ctx *c;
    CUresult r = fc_need_ctx(&c);
    if (r)
        return fc_err(r);
    if (capture_blocks_ctx_sync(c))
        return fc_err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    FC_COUNT(syncs);
    fc_ctx_sync(c);
    return CUDA_SUCCESS;
}

/* ---- streams -------------------------------------------------------------------------- */

/* A destroyed stream of c whose work has all run gives its handle to a new stream, as a real
 * driver may. Its counters go on growing, so old dependencies on it stay satisfied; its
 * worker, if still there, serves the new stream. */
static fc_stream *reuse_stream(fc_ctx *c, unsigned flags, int prio)
{
    if (!g_reuse)
        return NULL;
    fc_stream *hit = NULL;
    int busy = 1;
    /* a dying stream's lock may be held for a moment by its finishing worker: look again
     * rather than skip it (the unload scenario counts on the handle coming back) */
    for (int attempt = 0; !hit && busy && attempt < 1000; attempt++) {
    if (attempt)
        usleep(100);
    busy = 0;
    pthread_mutex_lock(&c->mu);
    for (fc_stream *t = c->streams; t && !hit; t = t->ctx_next) {
        if (t->kind != FC_S_REGULAR)
            continue;
        if (pthread_mutex_trylock(&t->mu)) {
            busy |= t->dying;
            continue;
        }
        if (t->dying && atomic_load(&t->done) == atomic_load(&t->enq)) {
            hit = t;
            t->dying = 0;
            if (t->exited)
                t->started = t->exited = 0;
            t->flags = flags;
            t->priority = prio;
            t->blocking = !(flags & CU_STREAM_NON_BLOCKING);
            t->cap_graph = NULL;
            t->cap_last = NULL;
            atomic_store(&t->cap_status, CU_STREAM_CAPTURE_STATUS_NONE);
            t->sattr_init = 0; /* stream attributes back to their defaults (fc_sattr.c) */
        }
        pthread_mutex_unlock(&t->mu);
    }
    pthread_mutex_unlock(&c->mu);
    }
    return hit;
}

static CUresult stream_create(CUstream *ph, unsigned flags, int prio)
{
    fc_ctx *c;
    CUresult r;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if ((r = fc_need_ctx(&c)))
        return fc_err(r);
    if (prio < -5)
        prio = -5;
    if (prio > 0)
        prio = 0;
    fc_stream *s = reuse_stream(c, flags, prio);
    if (!s)
        s = fc_stream_new_internal(c, FC_S_REGULAR, flags, prio);
    if (!s)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    fc_reg_add(s);
    FC_COUNT(streams_created);
    *ph = (CUstream)s;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    FC_ENTER();
    return stream_create(phStream, Flags, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags,
                                                      int priority)
{
    FC_ENTER();
    return stream_create(phStream, flags, priority);
}

static CUresult stream_destroy(CUstream h)
{
    fc_stream *s = (fc_stream *)h;
    if (!fc_valid(s, FC_M_STREAM)) /* NULL and the special handles included */
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_reg_del(s);
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->cap_status) != CU_STREAM_CAPTURE_STATUS_NONE)
        atomic_store(&s->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    s->dying = 1; /* its work still runs; then its worker ends */
    pthread_cond_signal(&s->work_cv);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamDestroy_v2(CUstream hStream)
{
    FC_ENTER();
    return stream_destroy(hStream);
}

FC_EXPORT CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    FC_ENTER();
    return stream_destroy(hStream);
}

static CUresult stream_sync(CUstream h, int ptsz)
{
    CUresult r;
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    pthread_mutex_lock(&s->mu);
    r = capture_refuses(s);
    pthread_mutex_unlock(&s->mu);
    if (r)
        return fc_err(r);
    FC_COUNT(syncs);
    sync_stream(s);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    FC_ENTER();
    return stream_sync(hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamSynchronize_ptsz(CUstream hStream)
{
    FC_ENTER();
    return stream_sync(hStream, 1);
}

static CUresult stream_query(CUstream h, int ptsz)
{
    CUresult r;
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    pthread_mutex_lock(&s->mu);
    r = capture_refuses(s);
    pthread_mutex_unlock(&s->mu);
    if (r)
        return fc_err(r);
    return atomic_load(&s->done) >= atomic_load(&s->enq) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    FC_ENTER();
    return stream_query(hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamQuery_ptsz(CUstream hStream)
{
    FC_ENTER();
    return stream_query(hStream, 1);
}

static CUresult stream_flags(CUstream h, int ptsz, unsigned *flags)
{
    CUresult r;
    if (!flags)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    *flags = s->flags;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    FC_ENTER();
    return stream_flags(hStream, 0, flags);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetFlags_ptsz(CUstream hStream, unsigned int *flags)
{
    FC_ENTER();
    return stream_flags(hStream, 1, flags);
}

static CUresult stream_ctx(CUstream h, int ptsz, CUcontext *pctx)
{
    CUresult r;
    if (!pctx)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    *pctx = (CUcontext)s->ctx;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    FC_ENTER();
    return stream_ctx(hStream, 0, pctx);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetCtx_ptsz(CUstream hStream, CUcontext *pctx)
{
    FC_ENTER();
    return stream_ctx(hStream, 1, pctx);
}

static CUresult stream_is_capturing(CUstream h, int ptsz, CUstreamCaptureStatus *st)
{
    CUresult r;
    if (!st)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    if (s->kind == FC_S_LEGACY) {
        /* asking about the legacy stream while a blocking stream captures is refused */
        int implicit = 0;
        pthread_mutex_lock(&s->ctx->mu);
        for (fc_stream *t = s->ctx->streams; t; t = t->ctx_next)
            if (t != s && t->blocking &&
                atomic_load(&t->cap_status) == CU_STREAM_CAPTURE_STATUS_ACTIVE &&
                t->cap_mode != CU_STREAM_CAPTURE_MODE_RELAXED)
                implicit = 1;
        pthread_mutex_unlock(&s->ctx->mu);
        if (implicit)
            return fc_err(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
    }
    *st = (CUstreamCaptureStatus)atomic_load(&s->cap_status);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream,
                                               CUstreamCaptureStatus *captureStatus)
{
    FC_ENTER();
    return stream_is_capturing(hStream, 0, captureStatus);
}

FC_EXPORT CUresult CUDAAPI cuStreamIsCapturing_ptsz(CUstream hStream,
                                                    CUstreamCaptureStatus *captureStatus)
{
    FC_ENTER();
    return stream_is_capturing(hStream, 1, captureStatus);
}

static CUresult begin_capture(CUstream h, int ptsz, int mode)
{
    CUresult r;
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    if (s->kind == FC_S_LEGACY)
        return fc_err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    fc_graph *g = fc_graph_new();
    if (!g)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    pthread_mutex_lock(&s->mu);
    if (atomic_load(&s->cap_status) != CU_STREAM_CAPTURE_STATUS_NONE) {
        pthread_mutex_unlock(&s->mu);
        fc_graph_free(g);
        return fc_err(CUDA_ERROR_ILLEGAL_STATE);
    }
    s->cap_graph = g;
    s->cap_last = NULL;
    s->cap_mode = mode;
    atomic_store(&s->cap_status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    pthread_mutex_unlock(&s->mu);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2(CUstream hStream, CUstreamCaptureMode mode)
{
    FC_ENTER();
    return begin_capture(hStream, 0, (int)mode);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_v2_ptsz(CUstream hStream,
                                                        CUstreamCaptureMode mode)
{
    FC_ENTER();
    return begin_capture(hStream, 1, (int)mode);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream)
{
    FC_ENTER();
    return begin_capture(hStream, 0, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

FC_EXPORT CUresult CUDAAPI cuStreamBeginCapture_ptsz(CUstream hStream)
{
    FC_ENTER();
    return begin_capture(hStream, 1, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

static CUresult end_capture(CUstream h, int ptsz, CUgraph *pg)
{
    CUresult r;
    if (!pg)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(h, ptsz, &r);
    if (!s)
        return fc_err(r);
    pthread_mutex_lock(&s->mu);
    int st = atomic_load(&s->cap_status);
    fc_graph *g = s->cap_graph;
    if (st == CU_STREAM_CAPTURE_STATUS_NONE) {
        pthread_mutex_unlock(&s->mu);
        return fc_err(CUDA_ERROR_ILLEGAL_STATE);
    }
    s->cap_graph = NULL;
    s->cap_last = NULL;
    atomic_store(&s->cap_status, CU_STREAM_CAPTURE_STATUS_NONE);
    pthread_mutex_unlock(&s->mu);
    if (st == CU_STREAM_CAPTURE_STATUS_INVALIDATED) {
        fc_graph_free(g);
        *pg = NULL;
        return fc_err(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    }
    *pg = (CUgraph)g;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    FC_ENTER();
    return end_capture(hStream, 0, phGraph);
}

FC_EXPORT CUresult CUDAAPI cuStreamEndCapture_ptsz(CUstream hStream, CUgraph *phGraph)
{
    FC_ENTER();
    return end_capture(hStream, 1, phGraph);
}

/* ---- events --------------------------------------------------------------------------- */

typedef struct fc_event {
    uint32_t magic;
    unsigned flags;
    fc_ctx *ctx;                     /* current when it was created */
    pthread_mutex_t mu;
    fc_stream *s;                    /* of the most recent record; NULL: never recorded */
    uint64_t seq;
    fc_stamp *stamp;                 /* of the most recent record (under mu) */
} fc_event;

static fc_event *event_get(CUevent h)
{
    fc_event *e = (fc_event *)h;
    return fc_valid(e, FC_M_EVENT) ? e : NULL;
}

/* A record took effect: the event now stands for (s, seq), timed by stamp (which passes
 * its event reference to e). */
static void event_set(fc_event *e, fc_stream *s, uint64_t seq, fc_stamp *stamp)
{
    pthread_mutex_lock(&e->mu);
    fc_stamp *old = e->stamp;
    e->s = s;
    e->seq = seq;
    e->stamp = stamp;
    pthread_mutex_unlock(&e->mu);
    stamp_put(old);
}

static void event_read(fc_event *e, fc_stream **s, uint64_t *seq)
{
    pthread_mutex_lock(&e->mu);
    *s = e->s;
    *seq = e->seq;
    pthread_mutex_unlock(&e->mu);
}

FC_EXPORT CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    FC_ENTER();
    fc_ctx *c;
    CUresult r;
    if (!phEvent || (Flags & ~0xFu) ||
        ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING)))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if ((r = fc_need_ctx(&c)))
        return fc_err(r);
    fc_event *e = calloc(1, sizeof *e);
    if (!e)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    e->magic = FC_M_EVENT;
    e->flags = Flags;
    e->ctx = c;
    pthread_mutex_init(&e->mu, NULL);
    fc_reg_add(e);
    *phEvent = (CUevent)e;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventDestroy_v2(CUevent hEvent)
{
    FC_ENTER();
    fc_event *e = event_get(hEvent);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_reg_del(e);
    e->magic = 0;
    stamp_put(e->stamp);
    pthread_mutex_destroy(&e->mu);
    free(e);
    return CUDA_SUCCESS;
}

static CUresult event_record(CUevent h, CUstream hs, int ptsz)
{
    CUresult r;
    fc_event *e = event_get(h);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    if ((r = fc_check_current(s)))
        return fc_err(r);
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_NOP;
    fc_stamp *stamp = (e->flags & CU_EVENT_DISABLE_TIMING) ? NULL : stamp_new();
    if (!(e->flags & CU_EVENT_DISABLE_TIMING) && !stamp) {
        free(it);
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    it->stamp = stamp;
    uint64_t seq = 0;
    pthread_mutex_lock(&s->mu);
    r = capture_refuses(s);
    if (!r)
        r = submit_locked(s, &it, 1, NULL, 0, &seq);
    if (!r) {
        /* under the stream's lock: records on one stream take effect in their order */
        event_set(e, s, seq, stamp);
    } else {
        stamp_put(stamp); /* the event's reference: the item's goes with the item */
    }
    pthread_mutex_unlock(&s->mu);
    if (r) {
        item_free(it);
        return fc_err(r);
    }
    FC_COUNT(events_recorded);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    FC_ENTER();
    return event_record(hEvent, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuEventRecord_ptsz(CUevent hEvent, CUstream hStream)
{
    FC_ENTER();
    return event_record(hEvent, hStream, 1);
}

FC_EXPORT CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    FC_ENTER();
    fc_event *e = event_get(hEvent);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_stream *s;
    uint64_t seq;
    event_read(e, &s, &seq);
    return !s || atomic_load(&s->done) >= seq ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

FC_EXPORT CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    FC_ENTER();
    fc_event *e = event_get(hEvent);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_stream *s;
    uint64_t seq;
    event_read(e, &s, &seq);
    FC_COUNT(syncs);
    if (s)
        wait_upto(s, seq, 0);
    return CUDA_SUCCESS;
}

/* One event's completion time, as cuEventElapsedTime needs it: INVALID_HANDLE for an event
 * never recorded or created with CU_EVENT_DISABLE_TIMING, NOT_READY while its record is
 * pending. */
static CUresult event_time(CUevent h, uint64_t *ns)
{
    fc_event *e = event_get(h);
    if (!e || (e->flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_HANDLE;
    pthread_mutex_lock(&e->mu);
    fc_stream *s = e->s;
    uint64_t seq = e->seq;
    fc_stamp *t = e->stamp;
    uint64_t v = t ? atomic_load(&t->ns) : 0;
    int done = s && atomic_load(&s->done) >= seq;
    pthread_mutex_unlock(&e->mu);
    if (!s || !t)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!done)
        return CUDA_ERROR_NOT_READY;
    *ns = v;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart,
                                                 CUevent hEnd)
{
    FC_ENTER();
    if (!pMilliseconds)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    uint64_t a = 0, b = 0;
    CUresult r = event_time(hStart, &a), r2 = event_time(hEnd, &b);
    /* an invalid handle outranks a pending record */
    if (r == CUDA_ERROR_INVALID_HANDLE || r2 == CUDA_ERROR_INVALID_HANDLE)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    if (r || r2)
        return fc_err(CUDA_ERROR_NOT_READY);
    *pMilliseconds = (float)(((double)b - (double)a) / 1e6); /* negative when hEnd came first */
    return CUDA_SUCCESS;
}

/* The symbol of CUDA before 12.8 (cuda.h maps the name to _v2; the ABI is the same). */
#undef cuEventElapsedTime
FC_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd);
FC_EXPORT CUresult CUDAAPI cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    return cuEventElapsedTime_v2(pMilliseconds, hStart, hEnd);
}

static CUresult wait_event(CUstream hs, CUevent h, unsigned flags, int ptsz)
{
    CUresult r;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_event *e = event_get(h);
    if (!e)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    fc_dep d;
    event_read(e, &d.s, &d.seq);
    if (atomic_load(&s->cap_status) == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        /* the fake records no events inside a capture: any event waited for comes from
         * outside it, a dependency across the capture boundary */
        atomic_store(&s->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
        return fc_err(CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    }
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_NOP;
    r = submit(s, it, &d, d.s ? 1 : 0, NULL);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    FC_ENTER();
    return wait_event(hStream, hEvent, Flags, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamWaitEvent_ptsz(CUstream hStream, CUevent hEvent,
                                                  unsigned int Flags)
{
    FC_ENTER();
    return wait_event(hStream, hEvent, Flags, 1);
}

/* cuCtxRecordEvent: the event completes when all work issued in the context before the call
 * has completed. The record is a no-op item on a hidden non-blocking stream of the context
 * (outside the legacy-stream rule, never handed out), depending on every other stream of the
 * context up to its last item. */
static fc_stream *ctx_rec_stream(fc_ctx *c)
{
    pthread_mutex_lock(&c->mu);
    fc_stream *s = c->rec;
    pthread_mutex_unlock(&c->mu);
    if (s)
        return s;
    s = fc_stream_new_internal(c, FC_S_HIDDEN, CU_STREAM_NON_BLOCKING, 0);
    if (!s)
        return NULL;
    pthread_mutex_lock(&c->mu);
    if (!c->rec)
        c->rec = s;
    s = c->rec; /* a racing creator's extra stream stays idle */
    pthread_mutex_unlock(&c->mu);
    return s;
}

FC_EXPORT CUresult CUDAAPI cuCtxRecordEvent(CUcontext hCtx, CUevent hEvent)
{
    FC_ENTER();
    fc_ctx *c = (fc_ctx *)hCtx;
    if (!fc_valid(c, FC_M_CTX) || c->destroyed)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT);
    fc_event *e = event_get(hEvent);
    if (!e || e->ctx != c)
        return fc_err(CUDA_ERROR_INVALID_HANDLE); /* the event must be of that context */
    /* a stream of the context capturing: refused, and the capture invalidated */
    int capturing = 0;
    pthread_mutex_lock(&c->mu);
    for (fc_stream *t = c->streams; t; t = t->ctx_next)
        if (atomic_load(&t->cap_status) == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
            atomic_store(&t->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
            capturing = 1;
        }
    pthread_mutex_unlock(&c->mu);
    if (capturing)
        return fc_err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    fc_stream *rs = ctx_rec_stream(c);
    if (!rs)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    int n = 0;
    pthread_mutex_lock(&c->mu);
    for (fc_stream *t = c->streams; t; t = t->ctx_next)
        n++;
    fc_dep *deps = malloc((size_t)(n ? n : 1) * sizeof *deps);
    int nd = 0;
    for (fc_stream *t = c->streams; deps && t; t = t->ctx_next)
        if (t != rs)
            deps[nd++] = (fc_dep){ t, atomic_load(&t->enq) };
    pthread_mutex_unlock(&c->mu);
    fc_item *it = calloc(1, sizeof *it);
    if (!deps || !it) {
        free(deps);
        free(it);
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    it->kind = FC_I_NOP;
    fc_stamp *stamp = (e->flags & CU_EVENT_DISABLE_TIMING) ? NULL : stamp_new();
    if (!(e->flags & CU_EVENT_DISABLE_TIMING) && !stamp) {
        free(deps);
        free(it);
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    it->stamp = stamp;
    uint64_t seq = 0;
    pthread_mutex_lock(&rs->mu);
    CUresult r = submit_locked(rs, &it, 1, deps, nd, &seq);
    if (!r)
        event_set(e, rs, seq, stamp);
    else
        stamp_put(stamp);
    pthread_mutex_unlock(&rs->mu);
    free(deps);
    if (r) {
        item_free(it);
        return fc_err(r);
    }
    FC_COUNT(events_recorded);
    return CUDA_SUCCESS;
}

/* The fake has no green contexts. */
FC_EXPORT CUresult CUDAAPI cuGreenCtxRecordEvent(CUgreenCtx hCtx, CUevent hEvent)
{
    FC_ENTER();
    (void)hCtx;
    (void)hEvent;
    return fc_err(CUDA_ERROR_NOT_SUPPORTED);
}

/* ---- host functions ------------------------------------------------------------------- */

static CUresult host_func(CUstream hs, CUhostFn fn, void *ud, int ptsz)
{
    CUresult r;
    if (!fn)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_HOSTFN;
    it->hfn = fn;
    it->ud = ud;
    r = submit(s, it, NULL, 0, NULL);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    FC_ENTER();
    return host_func(hStream, fn, userData, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchHostFunc_ptsz(CUstream hStream, CUhostFn fn, void *userData)
{
    FC_ENTER();
    return host_func(hStream, fn, userData, 1);
}

/* ---- kernel launches ------------------------------------------------------------------ */

static CUresult launch(const void *hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                       unsigned by, unsigned bz, unsigned smem, CUstream hs, void **params,
                       void **extra, int ptsz, const CUlaunchAttribute *attrs, unsigned nattrs)
{
    fc_ctx *c;
    CUresult r;
    if (g_launch_host_us) { /* the call's own host time, before the kernel reaches the "GPU" */
        uint64_t end = now_ns() + g_launch_host_us * 1000ull;
        while (now_ns() < end)
            ;
    }
    if ((r = fc_need_ctx(&c)))
        return fc_err(r);
    fc_func *f = fc_func_get(hf, 0); /* a CUfunction or a CUkernel */
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    if (!gx || !gy || !gz || !bx || !by || !bz || gy > 65535 || gz > 65535 ||
        (uint64_t)bx * by * bz > 1024 || bz > 64 || smem > 227 * 1024)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (params && extra)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (nattrs && !attrs)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    for (unsigned i = 0; i < nattrs; i++)
        if ((int)attrs[i].id < 0 || (int)attrs[i].id >= (int)CU_LAUNCH_ATTRIBUTE_MAX)
            return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    if (f->magic == FC_M_FUNC && f->ctx && f->ctx != s->ctx)
        return fc_err(CUDA_ERROR_INVALID_CONTEXT); /* a function of another context */
    if ((r = fc_check_current(s)))
        return fc_err(r);
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_KERNEL;
    it->k.fn = f->def.fn;
    it->k.grid[0] = gx;
    it->k.grid[1] = gy;
    it->k.grid[2] = gz;
    it->k.block[0] = bx;
    it->k.block[1] = by;
    it->k.block[2] = bz;
    it->k.size = f->def.size;
    fc_attrs_now(f, &it->k.attrs); /* the driver snapshots attributes at launch */
    if (!fc_attrs_allow_smem(&it->k.attrs, smem)) {
        free(it);
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    }
    if (!(it->k.blob = malloc(f->def.size ? f->def.size : 1))) {
        free(it);
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    if ((r = fc_pack_params(&f->def, params, extra, it->k.blob))) {
        item_free(it);
        return fc_err(r);
    }
    uint64_t last;
    pthread_mutex_lock(&s->mu);
    int st = atomic_load(&s->cap_status);
    if (st == CU_STREAM_CAPTURE_STATUS_ACTIVE) {
        fc_node *n = NULL;
        r = fc_graph_append_kernel(s->cap_graph, s->cap_last, f, hf, s->ctx, it->k.grid,
                                   it->k.block, smem, params, extra, &n);
        if (!r)
            s->cap_last = n;
        else
            atomic_store(&s->cap_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
        pthread_mutex_unlock(&s->mu);
        item_free(it);
        if (r)
            return fc_err(r);
        FC_COUNT(captured_launches);
        return CUDA_SUCCESS;
    }
    if (st == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    else
        r = submit_locked(s, &it, 1, NULL, 0, &last);
    pthread_mutex_unlock(&s->mu);
    if (r) {
        item_free(it);
        return fc_err(r);
    }
    FC_COUNT(eager_launches);
    fc_t_launcher = 1;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX,
                                          unsigned int gridDimY, unsigned int gridDimZ,
                                          unsigned int blockDimX, unsigned int blockDimY,
                                          unsigned int blockDimZ, unsigned int sharedMemBytes,
                                          CUstream hStream, void **kernelParams, void **extra)
{
    FC_ENTER();
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, extra, 0, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX,
                                               unsigned int gridDimY, unsigned int gridDimZ,
                                               unsigned int blockDimX, unsigned int blockDimY,
                                               unsigned int blockDimZ,
                                               unsigned int sharedMemBytes, CUstream hStream,
                                               void **kernelParams, void **extra)
{
    FC_ENTER();
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, extra, 1, NULL, 0);
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra,
                          int ptsz)
{
    if (!c)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
                  c->blockDimZ, c->sharedMemBytes, c->hStream, params, extra, ptsz, c->attrs,
                  c->numAttrs);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f,
                                            void **kernelParams, void **extra)
{
    FC_ENTER();
    return launch_ex(config, f, kernelParams, extra, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchKernelEx_ptsz(const CUlaunchConfig *config, CUfunction f,
                                                 void **kernelParams, void **extra)
{
    FC_ENTER();
    return launch_ex(config, f, kernelParams, extra, 1);
}

FC_EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel(CUfunction f, unsigned int gridDimX,
                                                     unsigned int gridDimY,
                                                     unsigned int gridDimZ,
                                                     unsigned int blockDimX,
                                                     unsigned int blockDimY,
                                                     unsigned int blockDimZ,
                                                     unsigned int sharedMemBytes,
                                                     CUstream hStream, void **kernelParams)
{
    FC_ENTER();
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, NULL, 0, NULL, 0);
}

FC_EXPORT CUresult CUDAAPI cuLaunchCooperativeKernel_ptsz(
    CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
    unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
    unsigned int sharedMemBytes, CUstream hStream, void **kernelParams)
{
    FC_ENTER();
    return launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ,
                  sharedMemBytes, hStream, kernelParams, NULL, 1, NULL, 0);
}

/* ---- the deprecated launches ----------------------------------------------------------- */

/* cuLaunch, cuLaunchGrid (the legacy default stream) and cuLaunchGridAsync: the block shape,
 * dynamic shared memory and packed parameters come from the function's deprecated launch
 * state (fc_attr.c), taken now. */
static CUresult legacy_launch(CUfunction hf, int gw, int gh, CUstream hs)
{
    fc_func *f = fc_func_get(hf, FC_M_FUNC);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    if (gw <= 0 || gh <= 0)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    static __thread uint8_t buf[sizeof ((fc_legacy *)0)->params];
    unsigned block[3] = { 1, 1, 1 }, smem = 0;
    size_t size = 0;
    pthread_mutex_lock(&fc_attr_mu);
    fc_legacy *L = fc_legacy_of(f);
    if (L) {
        for (int i = 0; i < 3; i++)
            block[i] = (unsigned)L->block[i];
        smem = L->shared;
        size = L->psize;
        memcpy(buf, L->params, size);
    }
    pthread_mutex_unlock(&fc_attr_mu);
    if (!L)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                      CU_LAUNCH_PARAM_END };
    CUresult r = launch(hf, (unsigned)gw, (unsigned)gh, 1, block[0], block[1], block[2], smem,
                        hs, NULL, extra, 0, NULL, 0);
    if (!r)
        FC_COUNT(legacy_launches);
    return r;
}

FC_EXPORT CUresult CUDAAPI cuLaunch(CUfunction f)
{
    FC_ENTER();
    return legacy_launch(f, 1, 1, NULL);
}

FC_EXPORT CUresult CUDAAPI cuLaunchGrid(CUfunction f, int grid_width, int grid_height)
{
    FC_ENTER();
    return legacy_launch(f, grid_width, grid_height, NULL);
}

FC_EXPORT CUresult CUDAAPI cuLaunchGridAsync(CUfunction f, int grid_width, int grid_height,
                                             CUstream hStream)
{
    FC_ENTER();
    return legacy_launch(f, grid_width, grid_height, hStream);
}

/* ---- memory --------------------------------------------------------------------------- */

typedef struct fc_alloc {
    uintptr_t p;
    size_t n;
    int host;                        /* 1: cuMemAllocHost / cuMemHostAlloc, 2: managed */
    int freed;                       /* poisoned and quarantined: never reused */
    struct fc_alloc *next;
} fc_alloc;

static pthread_mutex_t g_mem_mu = PTHREAD_MUTEX_INITIALIZER;
static fc_alloc *g_allocs;

static CUresult mem_alloc(void **out, size_t n, int host)
{
    fc_ctx *c;
    CUresult r;
    if (!out || !n)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if ((r = fc_need_ctx(&c)))
        return fc_err(r);
    size_t rounded = (n + 255) & ~(size_t)255;
    void *p = aligned_alloc(256, rounded);
    fc_alloc *a = malloc(sizeof *a);
    if (!p || !a) {
        free(p);
        free(a);
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    }
    memset(p, 0xCD, rounded); /* never zero: nothing may rely on fresh memory being clear */
    a->p = (uintptr_t)p;
    a->n = n;
    a->host = host;
    a->freed = 0;
    pthread_mutex_lock(&g_mem_mu);
    a->next = g_allocs;
    g_allocs = a;
    pthread_mutex_unlock(&g_mem_mu);
    *out = p;
    return CUDA_SUCCESS;
}

/* The live allocation starting at p, of that kind (host: -1 for either). */
static fc_alloc *alloc_at(uintptr_t p, int host)
{
    pthread_mutex_lock(&g_mem_mu);
    fc_alloc *a = g_allocs;
    while (a && (a->p != p || a->freed || (host >= 0 && a->host != host)))
        a = a->next;
    pthread_mutex_unlock(&g_mem_mu);
    return a;
}

/* Whether [p, p+n) lies inside one live allocation. */
static int range_ok(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&g_mem_mu);
    fc_alloc *a = g_allocs;
    while (a && (a->freed || p < a->p || p + n > a->p + a->n || p + n < p))
        a = a->next;
    pthread_mutex_unlock(&g_mem_mu);
    return a != NULL;
}

static void poison(fc_alloc *a)
{
    memset((void *)a->p, 0xDB, a->n);
    pthread_mutex_lock(&g_mem_mu);
    a->freed = 1;
    pthread_mutex_unlock(&g_mem_mu);
}

FC_EXPORT CUresult CUDAAPI cuMemAlloc_v2(CUdeviceptr *dptr, size_t bytesize)
{
    FC_ENTER();
    void *p = NULL;
    if (!dptr)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    CUresult r = mem_alloc(&p, bytesize, 0);
    if (!r)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

FC_EXPORT CUresult CUDAAPI cuMemAllocHost_v2(void **pp, size_t bytesize)
{
    FC_ENTER();
    return mem_alloc(pp, bytesize, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemHostAlloc(void **pp, size_t bytesize, unsigned int Flags)
{
    FC_ENTER();
    if (Flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP |
                            CU_MEMHOSTALLOC_WRITECOMBINED))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    return mem_alloc(pp, bytesize, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocManaged(CUdeviceptr *dptr, size_t bytesize,
                                             unsigned int flags)
{
    FC_ENTER();
    void *p = NULL;
    if (!dptr || (flags != CU_MEM_ATTACH_GLOBAL && flags != CU_MEM_ATTACH_HOST))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    CUresult r = mem_alloc(&p, bytesize, 2);
    if (!r)
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

int fc_mem_kind(uintptr_t p, size_t n)
{
    pthread_mutex_lock(&g_mem_mu);
    fc_alloc *a = g_allocs;
    while (a && (a->freed || p < a->p || p + n > a->p + a->n || p + n < p))
        a = a->next;
    int k = a ? a->host : -1;
    pthread_mutex_unlock(&g_mem_mu);
    return k;
}

/* Device and managed allocations are device memory (managed says so too), cuMemAllocHost /
 * cuMemHostAlloc memory is host memory; anything else is unknown to the driver (pageable):
 * CUDA_ERROR_INVALID_VALUE, as the real driver answers. */
FC_EXPORT CUresult CUDAAPI cuPointerGetAttribute(void *data, CUpointer_attribute attribute,
                                                 CUdeviceptr ptr)
{
    FC_ENTER();
    if (!data)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    int k = fc_mem_kind((uintptr_t)ptr, 1);
    static int hmm = -1; /* FAKECUDA_HMM=1: pageable memory is "host" memory, as a driver with
                          * heterogeneous memory management may say */
    if (hmm < 0) {
        const char *e = getenv("FAKECUDA_HMM");
        hmm = e && !strcmp(e, "1");
    }
    if (k < 0 && hmm && attribute == CU_POINTER_ATTRIBUTE_MEMORY_TYPE) {
        *(unsigned int *)data = CU_MEMORYTYPE_HOST;
        return CUDA_SUCCESS;
    }
    if (k < 0 && hmm && attribute == CU_POINTER_ATTRIBUTE_IS_MANAGED) {
        *(unsigned int *)data = 0;
        return CUDA_SUCCESS;
    }
    if (k < 0)
        return CUDA_ERROR_INVALID_VALUE; /* a normal answer for pageable memory: not counted */
    switch ((int)attribute) {
    case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:
        *(unsigned int *)data = k == 1 ? CU_MEMORYTYPE_HOST : CU_MEMORYTYPE_DEVICE;
        return CUDA_SUCCESS;
    case CU_POINTER_ATTRIBUTE_IS_MANAGED:
        *(unsigned int *)data = k == 2;
        return CUDA_SUCCESS;
    default:
        return fc_err(CUDA_ERROR_NOT_SUPPORTED);
    }
}

/* Fails unless p lies in a cuMemAllocHost / cuMemHostAlloc allocation (flags: always 0). */
FC_EXPORT CUresult CUDAAPI cuMemHostGetFlags(unsigned int *pFlags, void *p)
{
    FC_ENTER();
    if (!pFlags || fc_mem_kind((uintptr_t)p, 1) != 1)
        return CUDA_ERROR_INVALID_VALUE; /* the answer for other memory: not counted */
    *pFlags = 0;
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemFree_v2(CUdeviceptr dptr)
{
    FC_ENTER();
    fc_ctx *c;
    CUresult r;
    if (!dptr)
        return CUDA_SUCCESS;
    if ((r = fc_need_ctx(&c)))
        return fc_err(r);
    fc_alloc *a = alloc_at((uintptr_t)dptr, 0);
    if (!a)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (capture_blocks_ctx_sync(c))
        return fc_err(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    fc_ctx_sync(c); /* a free waits for the context's work */
    poison(a);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemFreeHost(void *p)
{
    FC_ENTER();
    fc_alloc *a = alloc_at((uintptr_t)p, 1);
    if (!a)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    poison(a); /* no synchronisation: late work finds garbage, not a crash */
    return CUDA_SUCCESS;
}

/* The stream-ordered allocator: an allocation is made at once (as the pool hands out memory
 * it has), its free takes effect when the stream reaches it -- work issued after the free
 * finds the memory poisoned. */
static CUresult alloc_async(CUdeviceptr *dptr, size_t bytesize, CUstream hs, int ptsz)
{
    CUresult r;
    if (!dptr)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (!fc_stream_resolve(hs, ptsz, &r))
        return fc_err(r);
    void *p = NULL;
    if (!(r = mem_alloc(&p, bytesize, 0)))
        *dptr = (CUdeviceptr)(uintptr_t)p;
    return r;
}

static CUresult free_async(CUdeviceptr dptr, CUstream hs, int ptsz)
{
    CUresult r;
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    fc_alloc *a = alloc_at((uintptr_t)dptr, 0);
    if (!a)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_FREE;
    it->dst = a;
    uint64_t seq = 0;
    return (r = submit(s, it, NULL, 0, &seq)) ? fc_err(r) : CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync(CUdeviceptr *dptr, size_t bytesize, CUstream hStream)
{
    FC_ENTER();
    return alloc_async(dptr, bytesize, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemAllocAsync_ptsz(CUdeviceptr *dptr, size_t bytesize,
                                                CUstream hStream)
{
    FC_ENTER();
    return alloc_async(dptr, bytesize, hStream, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemFreeAsync(CUdeviceptr dptr, CUstream hStream)
{
    FC_ENTER();
    return free_async(dptr, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemFreeAsync_ptsz(CUdeviceptr dptr, CUstream hStream)
{
    FC_ENTER();
    return free_async(dptr, hStream, 1);
}

/* A copy or memset: synchronous ones go on the default stream of the entry point and wait. */
static CUresult mem_op(fc_item *it, CUstream hs, int ptsz, int sync)
{
    CUresult r;
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s) {
        item_free(it);
        return fc_err(r);
    }
    uint64_t seq = 0;
    if ((r = submit(s, it, NULL, 0, &seq)))
        return fc_err(r);
    FC_COUNT(memcpys);
    if (sync)
        wait_upto(s, seq, 0);
    return CUDA_SUCCESS;
}

static CUresult copy(void *dst, const void *src, size_t n, int to_dev, int from_dev, CUstream hs,
                     int ptsz, int sync)
{
    if ((!dst || !src) && n)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if ((to_dev && !range_ok((uintptr_t)dst, n)) || (from_dev && !range_ok((uintptr_t)src, n)))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_MEMCPY;
    it->dst = dst;
    it->src = src;
    it->n = n;
    /* As the real driver: a copy from pageable memory (not known to the driver) reads it
     * before the call returns -- the program may overwrite it right after -- and a copy into
     * pageable memory returns only once it is done. */
    if (!from_dev && n && fc_mem_kind((uintptr_t)src, n) < 0) {
        if (!(it->stage = malloc(n))) {
            free(it);
            return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
        }
        memcpy(it->stage, src, n);
        it->src = it->stage;
    }
    if (!to_dev && n && fc_mem_kind((uintptr_t)dst, n) < 0)
        sync = 1;
    return mem_op(it, hs, ptsz, sync);
}

#define DPTR(x) ((void *)(uintptr_t)(x))

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2(CUdeviceptr dstDevice, const void *srcHost,
                                           size_t ByteCount)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), srcHost, ByteCount, 1, 0, NULL, 0, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoD_v2_ptds(CUdeviceptr dstDevice, const void *srcHost,
                                                size_t ByteCount)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), srcHost, ByteCount, 1, 0, NULL, 1, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    FC_ENTER();
    return copy(dstHost, DPTR(srcDevice), ByteCount, 0, 1, NULL, 0, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice,
                                                size_t ByteCount)
{
    FC_ENTER();
    return copy(dstHost, DPTR(srcDevice), ByteCount, 0, 1, NULL, 1, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoD_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                           size_t ByteCount)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), DPTR(srcDevice), ByteCount, 1, 1, NULL, 0, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2(CUdeviceptr dstDevice, const void *srcHost,
                                                size_t ByteCount, CUstream hStream)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), srcHost, ByteCount, 1, 0, hStream, 0, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr dstDevice, const void *srcHost,
                                                     size_t ByteCount, CUstream hStream)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), srcHost, ByteCount, 1, 0, hStream, 1, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2(void *dstHost, CUdeviceptr srcDevice,
                                                size_t ByteCount, CUstream hStream)
{
    FC_ENTER();
    return copy(dstHost, DPTR(srcDevice), ByteCount, 0, 1, hStream, 0, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoHAsync_v2_ptsz(void *dstHost, CUdeviceptr srcDevice,
                                                     size_t ByteCount, CUstream hStream)
{
    FC_ENTER();
    return copy(dstHost, DPTR(srcDevice), ByteCount, 0, 1, hStream, 1, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                size_t ByteCount, CUstream hStream)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), DPTR(srcDevice), ByteCount, 1, 1, hStream, 0, 0);
}

void fc_memset_run(void *dst, uint32_t v, unsigned elem, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (elem == 1)
            ((uint8_t *)dst)[i] = (uint8_t)v;
        else if (elem == 2)
            ((uint16_t *)dst)[i] = (uint16_t)v;
        else
            ((uint32_t *)dst)[i] = v;
    }
}

FC_EXPORT CUresult CUDAAPI cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr dstDevice, CUdeviceptr srcDevice,
                                                     size_t ByteCount, CUstream hStream)
{
    FC_ENTER();
    return copy(DPTR(dstDevice), DPTR(srcDevice), ByteCount, 1, 1, hStream, 1, 0);
}

/* Unified addressing: the kinds come from the pointers (unknown memory is pageable host). */
static CUresult copy_unified(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream hs, int ptsz)
{
    int dk = fc_mem_kind((uintptr_t)dst, n ? n : 1), sk = fc_mem_kind((uintptr_t)src, n ? n : 1);
    return copy(DPTR(dst), DPTR(src), n, dk == 0 || dk == 2, sk == 0 || sk == 2, hs, ptsz, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                         CUstream hStream)
{
    FC_ENTER();
    return copy_unified(dst, src, ByteCount, hStream, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemcpyAsync_ptsz(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount,
                                              CUstream hStream)
{
    FC_ENTER();
    return copy_unified(dst, src, ByteCount, hStream, 1);
}

static CUresult memset_n(CUdeviceptr d, unsigned v, unsigned elem, size_t n, CUstream hs,
                         int ptsz, int sync)
{
    if ((d & (elem - 1)) || !range_ok((uintptr_t)d, n * elem))
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_item *it = calloc(1, sizeof *it);
    if (!it)
        return fc_err(CUDA_ERROR_OUT_OF_MEMORY);
    it->kind = FC_I_MEMSET;
    it->dst = DPTR(d);
    it->n = n;
    it->val = v;
    it->elem = elem;
    return mem_op(it, hs, ptsz, sync);
}

static CUresult memset32(CUdeviceptr d, unsigned v, size_t n, CUstream hs, int ptsz, int sync)
{
    return memset_n(d, v, 4, n, hs, ptsz, sync);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N,
                                           CUstream hStream)
{
    FC_ENTER();
    return memset_n(dstDevice, uc, 1, N, hStream, 0, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD8Async_ptsz(CUdeviceptr dstDevice, unsigned char uc,
                                                size_t N, CUstream hStream)
{
    FC_ENTER();
    return memset_n(dstDevice, uc, 1, N, hStream, 1, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD16Async(CUdeviceptr dstDevice, unsigned short us, size_t N,
                                            CUstream hStream)
{
    FC_ENTER();
    return memset_n(dstDevice, us, 2, N, hStream, 0, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD16Async_ptsz(CUdeviceptr dstDevice, unsigned short us,
                                                 size_t N, CUstream hStream)
{
    FC_ENTER();
    return memset_n(dstDevice, us, 2, N, hStream, 1, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32_v2(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    FC_ENTER();
    return memset32(dstDevice, ui, N, NULL, 0, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    FC_ENTER();
    return memset32(dstDevice, ui, N, NULL, 1, 1);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N,
                                            CUstream hStream)
{
    FC_ENTER();
    return memset32(dstDevice, ui, N, hStream, 0, 0);
}

FC_EXPORT CUresult CUDAAPI cuMemsetD32Async_ptsz(CUdeviceptr dstDevice, unsigned int ui,
                                                 size_t N, CUstream hStream)
{
    FC_ENTER();
    return memset32(dstDevice, ui, N, hStream, 1, 0);
}
