/* The trace recorder (see tracerec.h; the file format: tracefmt.h, docs/TRACE.md). */
/* One writer mutex guards the buffer, the sequence numbers, the tables of functions, streams
 * and names already described, and the ring of GPU timing event pairs. Records go into a
 * 64 KiB buffer written with write(2) when full, before fork and at exit. */
#include "cache/tracerec.h"

#include "policy/fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "policy/log.h"
#include "policy/options.h"
#include "cache/clock.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/engine.h"
#include "cache/params.h"
#include "cache/process.h"
#include "cache/shape.h"
#include "cache/tracefmt.h"

_Static_assert(sizeof(ag_tr_file) == 128, "ag_tr_file");
_Static_assert(sizeof(ag_tr_hdr) == 32, "ag_tr_hdr");
_Static_assert(sizeof(ag_tr_name) == 40 && sizeof(ag_tr_func) == 64, "name, func");
_Static_assert(sizeof(ag_tr_stream) % 8 == 0 && sizeof(ag_tr_launch) % 8 == 0 &&
                   sizeof(ag_tr_op) % 8 == 0 && sizeof(ag_tr_copy) % 8 == 0 &&
                   sizeof(ag_tr_gpu) % 8 == 0 && sizeof(ag_tr_end) % 8 == 0 &&
                   sizeof(ag_tr_gpu) == 40 && sizeof(ag_tr_gpu_ext) == 48,
               "records are multiples of 8 bytes");

int ag_tr_on;

#define TR_MAX_REC 65528u        /* the largest record (ag_tr_hdr.size is 16 bits) */
#define TR_PAIRS 512             /* GPU timing event pairs in flight */
#define TR_WAIT_FULL_NS 1000000000ull   /* pool full: how long to wait for the oldest */
#define TR_WAIT_EXIT_NS 10000000000ull  /* at exit: for all that are pending */

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_fd = -1;
static pid_t g_pid;
static uint32_t g_gpu;           /* AUTOGRAPH_TRACE_GPU (1: every launch timed, N: one in N of
                                  * each function and dimensions), when the driver has what it
                                  * needs; 0: off */
static uint64_t g_t0;            /* the file's t0 (atomic: read unlocked) */
static uint64_t g_over;          /* the recorder's own time so far (atomic) */
static char g_path[4096];
static ag_tr_file g_file;
static int g_file_written;
static uint8_t g_buf[1 << 16];
static size_t g_len;
static uint32_t g_seq, g_next_name, g_next_func, g_next_tid;
static uint64_t g_calls, g_dropped;
static __thread uint32_t t_tid;
/* The recorder's time is taken off a thread's later timestamps only where it could have
 * delayed that thread: not the other threads' recording while this one was inside a driver
 * call (a sync waiting for the GPU is not delayed by it). t_kept is that part of g_over; t_end
 * is where the thread's last call ended, in its application time: its next call cannot begin
 * before (threads recording at once would otherwise take more off than passed). */
static __thread uint64_t t_kept, t_end;
static __thread int t_in;        /* inside a recorded call: a driver (or a shim) that calls an
                                  * exported wrapper itself is one call, not two */

/* ---- time -------------------------------------------------------------------------------- */

static inline void over_since(uint64_t from)
{
    __atomic_fetch_add(&g_over, ag_now_ns() - from, __ATOMIC_RELAXED);
}

/* A clock reading in the application's time: since t0, less the recorder's own time that
 * could have delayed this thread (above). */
static inline uint64_t app_ns(uint64_t raw)
{
    uint64_t over = __atomic_load_n(&g_over, __ATOMIC_RELAXED);
    uint64_t base = __atomic_load_n(&g_t0, __ATOMIC_RELAXED) + (over > t_kept ? over - t_kept : 0);
    return raw > base ? raw - base : 0;
}

/* The driver call that began at t->t ended at raw clock c: what the other threads recorded
 * meanwhile is kept on this thread's clock, and its next call begins after this one's end. */
static inline void call_ended(const ag_tr_tok *t, uint64_t c)
{
    t_kept += __atomic_load_n(&g_over, __ATOMIC_RELAXED) - t->over_at;
    t_end = t->t_app + (c - t->t);
}

static inline uint32_t sat32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static uint32_t tid(void)
{
    if (AG_UNLIKELY(!t_tid))
        t_tid = __atomic_add_fetch(&g_next_tid, 1, __ATOMIC_RELAXED);
    return t_tid;
}

static void hdr(ag_tr_hdr *h, int type, size_t size, uint64_t t_app, uint64_t stream)
{
    h->type = (uint16_t)type;
    h->size = (uint16_t)size;
    h->tid = tid();
    h->t_ns = t_app;
    h->stream = stream;
}

/* ---- the file ---------------------------------------------------------------------------- */

static int write_all(const void *p, size_t n)
{
    return ag_write_all(g_fd, p, n);
}

/* Writes the buffer out (the file header first, once). A write error ends the recording. */
static void flush_locked(void)
{
    if (g_fd < 0)
        return;
    if (!g_file_written) {
        g_file.t0_ns = __atomic_load_n(&g_t0, __ATOMIC_RELAXED);
        g_file_written = 1;
        if (write_all(&g_file, sizeof g_file))
            goto fail;
    }
    if (g_len && write_all(g_buf, g_len))
        goto fail;
    g_len = 0;
    return;
fail:
    ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE: writing %s failed (%s): recording stops, the trace "
           "is cut short", g_path, strerror(errno));
    __atomic_store_n(&ag_tr_on, 0, __ATOMIC_RELAXED);
    close(g_fd);
    g_fd = -1;
    g_len = 0;
}

static void put_locked(const void *rec, size_t n)
{
    if (g_len + n > sizeof g_buf)
        flush_locked();
    if (g_fd < 0)
        return;
    memcpy(g_buf + g_len, rec, n);
    g_len += n;
}

/* A string record (ag_tr_name, or the tail of ag_tr_func): the string NUL-padded to 8. */
static size_t pad8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static void name_locked(uint32_t *id, const char *name)
{
    uint8_t rec[sizeof(ag_tr_name) + 256];
    size_t len = strnlen(name, 255), size = sizeof(ag_tr_name) + pad8(len + 1);
    memset(rec, 0, size);
    ag_tr_name *r = (ag_tr_name *)rec;
    *id = ++g_next_name;
    hdr(&r->h, AG_TR_NAME, size, 0, 0);
    r->id = *id;
    r->len = (uint32_t)len;
    memcpy(rec + sizeof *r, name, len);
    put_locked(rec, size);
}

/* ---- GPU timing ---------------------------------------------------------------------------- */

enum { P_FREE, P_BEGUN, P_ENDED, P_VOID };
typedef struct tr_pair {
    CUevent a, b;
    CUcontext ctx;               /* where the events were created */
    uint64_t stream;
    uint32_t seq;
    uint8_t state;
    uint8_t flags;               /* AG_TRG_*: the stream's state when the call was issued */
} tr_pair;
static tr_pair g_pairs[TR_PAIRS];
static uint32_t g_head, g_npairs; /* the ring, oldest first */

static void gpu_record_locked(const tr_pair *p, float ms)
{
    ag_tr_gpu_ext r;
    memset(&r, 0, sizeof r);
    hdr(&r.g.h, AG_TR_GPU, sizeof r, app_ns(ag_now_ns()), p->stream);
    r.g.of_seq = p->seq;
    r.g.gpu_ns = ms > 0 ? sat32((uint64_t)((double)ms * 1e6)) : 0;
    r.flags = p->flags;
    put_locked(&r, sizeof r);
}

/* Reads back the oldest pairs the GPU has passed, without waiting -- or, with a deadline,
 * polling until then. Stops at a pair whose call is still under way. */
static void harvest_locked(uint64_t deadline)
{
    while (g_npairs) {
        tr_pair *p = &g_pairs[g_head];
        if (p->state == P_BEGUN)
            return;
        if (p->state == P_ENDED) {
            CUresult q = ag_drv.cuEventQuery(p->b);
            if (q == CUDA_ERROR_NOT_READY) {
                if (!deadline || ag_now_ns() > deadline)
                    return;
                struct timespec ts = { 0, 20000 };
                nanosleep(&ts, NULL);
                continue;
            }
            float ms = 0;
            if (q == CUDA_SUCCESS && ag_drv.cuEventElapsedTime_v2(&ms, p->a, p->b) == CUDA_SUCCESS)
                gpu_record_locked(p, ms);
            else
                g_dropped++;
        }
        p->state = P_FREE;
        g_head = (g_head + 1) % TR_PAIRS;
        g_npairs--;
    }
}

/* Before the call: a pair for it (t->gpu); then, as the very last thing before the call, the
 * pair's first event recorded on the call's stream (begin() only reads the clock after it). */
static void gpu_begin(ag_tr_tok *t, CUstream s)
{
    t->gpu = -1;
    if (!g_gpu || atomic_load_explicit(&ag_hot.captures, memory_order_acquire))
        return; /* an event recorded into an application's capture would change its graph */
    if (s == NULL && t->ptsz)
        s = CU_STREAM_PER_THREAD;
    CUcontext cur = NULL;
    ag_drv.cuCtxGetCurrent(&cur);
    pthread_mutex_lock(&g_mu);
    harvest_locked(0);
    if (g_npairs == TR_PAIRS && g_pairs[g_head].state != P_BEGUN)
        harvest_locked(ag_now_ns() + TR_WAIT_FULL_NS); /* wait for the oldest */
    if (g_npairs == TR_PAIRS || g_fd < 0) {
        g_dropped += g_fd >= 0;
        pthread_mutex_unlock(&g_mu);
        return;
    }
    uint32_t i = (g_head + g_npairs++) % TR_PAIRS;
    tr_pair *p = &g_pairs[i];
    p->state = P_BEGUN; /* ours until the call's record is written */
    p->flags = 0;
    pthread_mutex_unlock(&g_mu);
    if (p->a && p->ctx != cur) {
        ag_drv.cuEventDestroy_v2(p->a);
        ag_drv.cuEventDestroy_v2(p->b);
        p->a = p->b = NULL;
    }
    if (!p->a) {
        p->ctx = cur;
        if (ag_drv.cuEventCreate(&p->a, CU_EVENT_DEFAULT))
            p->a = NULL;
        else if (ag_drv.cuEventCreate(&p->b, CU_EVENT_DEFAULT)) {
            ag_drv.cuEventDestroy_v2(p->a);
            p->a = p->b = NULL;
        }
    }
    t->gpu = (int32_t)i;
    if (!p->a || ag_drv.cuEventRecord(p->a, s))
        t->gpu = -2 - (int32_t)i; /* the slot stays ours; voided when the record is written */
}

/* Right after the call: its second event; then whether the first one has fired yet (the pair's
 * AG_TRG_* flags). Not yet: the stream was busy with earlier work (of any kind) until after the
 * call returned, so the duration holds none of the call's host time (queued). Fired: it may
 * hold up to all of it (idle). Returns 0 when the pair is good. */
static int gpu_end(ag_tr_tok *t, CUstream s)
{
    if (t->gpu < 0)
        return -1;
    if (s == NULL && t->ptsz)
        s = CU_STREAM_PER_THREAD;
    tr_pair *p = &g_pairs[t->gpu];
    if (ag_drv.cuEventRecord(p->b, s))
        return -1;
    CUresult q = ag_drv.cuEventQuery(p->a);
    p->flags = q == CUDA_ERROR_NOT_READY ? AG_TRG_QUEUED : q == CUDA_SUCCESS ? AG_TRG_IDLE : 0;
    return 0;
}

/* ---- functions and streams, described once ------------------------------------------------ */

/* A function's launches per launch dimensions, for AUTOGRAPH_TRACE_GPU=N (N > 1). */
typedef struct tr_dkey {
    uint32_t grid[3], block[3], smem;
} tr_dkey;
typedef struct tr_dims {
    tr_dkey key;
    uint64_t n;                  /* launches so far */
    UT_hash_handle hh;
} tr_dims;

typedef struct tr_func {
    void *h;
    uint32_t id;
    const ag_layout *lay;
    tr_dims *dims;
    UT_hash_handle hh;
} tr_func;
static tr_func *g_funcs;

/* Whether this launch of f is timed: with AUTOGRAPH_TRACE_GPU=N > 1, the first launch of each
 * function and dimensions and every N-th after it (a count per key, so that every kernel of a
 * loop is timed, not the same few positions of it). */
static int sample_locked(tr_func *f, const ag_launch *l)
{
    if (g_gpu <= 1)
        return g_gpu == 1;
    if (!f)
        return 0;
    tr_dkey k;
    memset(&k, 0, sizeof k);
    memcpy(k.grid, l->grid, sizeof k.grid);
    memcpy(k.block, l->block, sizeof k.block);
    k.smem = l->smem;
    tr_dims *d;
    HASH_FIND(hh, f->dims, &k, sizeof k, d);
    if (!d) {
        if (!(d = calloc(1, sizeof *d)))
            return 0;
        d->key = k;
        HASH_ADD(hh, f->dims, key, sizeof d->key, d);
    }
    return d->n++ % g_gpu == 0;
}

static void free_func(tr_func *f)
{
    tr_dims *d, *dt;
    HASH_ITER(hh, f->dims, d, dt) {
        HASH_DEL(f->dims, d);
        free(d);
    }
    free(f);
}

typedef struct tr_skey {
    uint64_t stream;
    uint32_t tid;                /* per-thread default streams: whose */
    uint32_t ptsz_null;          /* NULL through a _ptsz entry point */
} tr_skey;
typedef struct tr_stream {
    tr_skey key;
    UT_hash_handle hh;
} tr_stream;
static tr_stream *g_streams;

static tr_func *func_locked(void *h)
{
    tr_func *f;
    HASH_FIND_PTR(g_funcs, &h, f);
    if (f)
        return f;
    if (!(f = calloc(1, sizeof *f)))
        return NULL;
    f->h = h;
    f->id = ++g_next_func;
    f->lay = ag_layout_get(h); /* the engine's layouts (cache/params.c) */
    HASH_ADD_PTR(g_funcs, h, f);
    uint32_t flags = 0, np = 0;
    int is_kernel = f->lay && f->lay->is_kernel;
    const char *name = NULL;
    if (!is_kernel && ag_drv.cuFuncGetName && ag_drv.cuFuncGetName(&name, (CUfunction)h))
        name = NULL;
    if (!name && ag_drv.cuKernelGetName && !ag_drv.cuKernelGetName(&name, (CUkernel)h))
        is_kernel = 1;
    if (!name)
        name = "";
    if (is_kernel)
        flags |= AG_TRFN_KERNEL;
    if (f->lay && sizeof(ag_tr_func) + 4ull * f->lay->nparams + 8 <= TR_MAX_REC / 2) {
        flags |= AG_TRFN_LAYOUT;
        np = f->lay->nparams;
    }
    size_t fixed = sizeof(ag_tr_func) + 4 * (size_t)np, len = strlen(name);
    if (pad8(fixed + len + 1) > TR_MAX_REC)
        len = TR_MAX_REC - fixed - 1; /* a name longer than a record: cut */
    size_t size = pad8(fixed + len + 1);
    uint8_t *rec = calloc(1, size);
    if (!rec) {
        g_dropped++;
        return f;
    }
    ag_tr_func *r = (ag_tr_func *)rec;
    hdr(&r->h, AG_TR_FUNC, size, 0, 0);
    r->handle = (uint64_t)(uintptr_t)h;
    r->id = f->id;
    r->flags = flags;
    r->param_bytes = f->lay ? f->lay->size : 0;
    r->nparams = np;
    r->name_len = (uint32_t)len;
    uint32_t *pp = (uint32_t *)(rec + sizeof *r);
    for (uint32_t i = 0; i < np; i++)
        pp[i] = f->lay->off[i] << 16 | (f->lay->sz[i] & 0xffff);
    memcpy(rec + fixed, name, len);
    put_locked(rec, size);
    free(rec);
    return f;
}

static int is_default(uint64_t s)
{
    return s == 0 || s == (uint64_t)(uintptr_t)CU_STREAM_LEGACY ||
           s == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD;
}

static tr_skey skey(uint64_t s, int ptsz)
{
    tr_skey k = { s, 0, 0 };
    k.ptsz_null = s == 0 && ptsz;
    if (k.ptsz_null || s == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)
        k.tid = tid();
    return k;
}

static void stream_locked(uint64_t s, int ptsz)
{
    tr_skey k = skey(s, ptsz);
    tr_stream *e;
    HASH_FIND(hh, g_streams, &k, sizeof k, e);
    if (e || !(e = calloc(1, sizeof *e)))
        return;
    e->key = k;
    HASH_ADD(hh, g_streams, key, sizeof k, e);
    ag_tr_stream r;
    memset(&r, 0, sizeof r);
    hdr(&r.h, AG_TR_STREAM, sizeof r, 0, s);
    CUcontext ctx = NULL;
    if (is_default(s)) {
        r.flags = AG_TRST_DEFAULT | (k.ptsz_null ? AG_TRST_PTSZ : 0);
        if (ag_drv.cuCtxGetCurrent && ag_drv.cuCtxGetCurrent(&ctx))
            ctx = NULL;
    } else if (!atomic_load_explicit(&ag_hot.captures, memory_order_acquire)) {
        /* (never while the application captures: a question about a capturing stream can
         * invalidate its capture) */
        CUstream h = (CUstream)(uintptr_t)s;
        unsigned fl = 0;
        int prio = 0;
        if (ag_drv.cuStreamGetFlags && !ag_drv.cuStreamGetFlags(h, &fl) &&
            (fl & CU_STREAM_NON_BLOCKING))
            r.flags |= AG_TRST_NONBLOCKING;
        if (ag_drv.cuStreamGetPriority && !ag_drv.cuStreamGetPriority(h, &prio))
            r.priority = prio;
        if (ag_drv.cuStreamGetCtx && ag_drv.cuStreamGetCtx(h, &ctx))
            ctx = NULL;
    }
    r.ctx = (uint64_t)(uintptr_t)ctx;
    put_locked(&r, sizeof r);
}

/* Handles may be reused once a stream is destroyed, or modules unloaded and contexts torn
 * down: they are described again at their next use. */
static void forget_stream_locked(uint64_t s)
{
    tr_skey k = skey(s, 0);
    tr_stream *e;
    HASH_FIND(hh, g_streams, &k, sizeof k, e);
    if (e) {
        HASH_DEL(g_streams, e);
        free(e);
    }
}

static void forget_all_locked(void)
{
    tr_func *f, *ft;
    HASH_ITER(hh, g_funcs, f, ft) {
        HASH_DEL(g_funcs, f);
        free_func(f);
    }
    tr_stream *s, *st;
    HASH_ITER(hh, g_streams, s, st) {
        HASH_DEL(g_streams, s);
        free(s);
    }
    ag_layout_invalidate(); /* the engine, disabled, does not do it itself */
}

/* ---- calls ---------------------------------------------------------------------------------- */

/* The common start of a call: what the recorder did since `a` is its own time. */
static void begin(ag_tr_tok *t, uint64_t a, CUstream s, int ptsz, int has_stream, int gpu)
{
    t->stream = has_stream ? (uint64_t)(uintptr_t)s : 0;
    t->ptsz = (uint8_t)ptsz;
    t->gpu = -1;
    if (has_stream) {
        pthread_mutex_lock(&g_mu);
        if (g_fd >= 0)
            stream_locked(t->stream, ptsz);
        pthread_mutex_unlock(&g_mu);
    }
    if (gpu)
        gpu_begin(t, s);
    t->t = ag_now_ns();
    t->over_at = __atomic_add_fetch(&g_over, t->t - a, __ATOMIC_RELAXED);
    t->t_app = app_ns(t->t);
    if (t->t_app < t_end)
        t->t_app = t_end;
}

/* Under the lock: the call's record gets its sequence number (and its GPU pair with it). */
static void put_call_locked(ag_tr_hdr *h, size_t size, ag_tr_tok *t, int gpu_ok)
{
    if (t->gpu != -1) {
        tr_pair *p = &g_pairs[t->gpu >= 0 ? t->gpu : -2 - t->gpu];
        p->state = gpu_ok == 0 && t->gpu >= 0 && g_fd >= 0 ? P_ENDED : P_VOID;
        if (p->state == P_VOID)
            g_dropped++;
        p->seq = g_seq;
        p->stream = h->stream;
    }
    if (g_fd < 0)
        return;
    h->seq = g_seq++;
    g_calls++;
    put_locked(h, size);
}

/* A launch's or copy's record, its call ended at clock c with result r: header, time and
 * result, written under the lock; the recorder's own time since c is set aside. */
static void put_call(ag_tr_hdr *h, size_t size, int type, int32_t *result, CUresult r,
                     ag_tr_tok *t, uint64_t c, int gpu_ok)
{
    hdr(h, type, size, t->t_app, t->stream);
    h->dur_ns = sat32(c - t->t);
    *result = (int32_t)r;
    pthread_mutex_lock(&g_mu);
    put_call_locked(h, size, t, gpu_ok);
    pthread_mutex_unlock(&g_mu);
    over_since(c);
}

int ag_tr_op_begin_slow(ag_tr_tok *t, CUstream s, int ptsz, int has_stream, const char *name)
{
    if (t_in)
        return 0;
    t_in = 1;
    uint64_t a = ag_now_ns();
    begin(t, a, s, ptsz, has_stream, has_stream && !strncmp(name, "cuGraphLaunch", 13));
    return 1;
}

void ag_tr_op_end(ag_tr_tok *t, uint32_t *name_id, const char *name, int cls, CUresult r,
                  uint64_t arg, uint64_t arg2)
{
    uint64_t c = ag_now_ns();
    t_in = 0;
    call_ended(t, c);
    int gpu_ok = gpu_end(t, (CUstream)(uintptr_t)t->stream);
    ag_tr_op rec;
    memset(&rec, 0, sizeof rec);
    hdr(&rec.h, AG_TR_OP, sizeof rec, t->t_app, t->stream);
    rec.h.dur_ns = sat32(c - t->t);
    rec.cls = (uint8_t)cls;
    rec.ptsz = t->ptsz;
    rec.result = (int32_t)r;
    rec.arg = arg;
    rec.arg2 = arg2;
    pthread_mutex_lock(&g_mu);
    if (g_fd >= 0 && !*name_id)
        name_locked(name_id, name);
    if (cls == AG_TRC_FUNCATTR) { /* the handle, as the function's id (its record first) */
        tr_func *f = g_fd >= 0 && arg ? func_locked((void *)(uintptr_t)arg) : NULL;
        rec.arg = f ? f->id : 0;
    }
    rec.name = *name_id;
    put_call_locked(&rec.h, sizeof rec, t, gpu_ok);
    if (cls == AG_TRC_DESTROY && r == CUDA_SUCCESS)
        forget_stream_locked(t->stream);
    else if (cls == AG_TRC_INVALIDATE && r == CUDA_SUCCESS)
        forget_all_locked();
    pthread_mutex_unlock(&g_mu);
    over_since(c);
}

void ag_tr_init_call(uint64_t t0, uint64_t t1, CUresult r)
{
    static uint32_t name_id;
    uint64_t a = ag_now_ns();
    pthread_mutex_lock(&g_mu);
    if (g_seq == 0 && !g_file_written && t0 < __atomic_load_n(&g_t0, __ATOMIC_RELAXED)) {
        /* the first call: the file begins with it, and what we did since it returned (our
         * own set-up) is our time */
        __atomic_store_n(&g_t0, t0, __ATOMIC_RELAXED);
        __atomic_store_n(&g_over, a - t1, __ATOMIC_RELAXED);
    }
    ag_tr_tok t = { .t = t0, .t_app = app_ns(t0), .gpu = -1 };
    t_end = t.t_app + (t1 - t0);
    ag_tr_op rec;
    memset(&rec, 0, sizeof rec);
    hdr(&rec.h, AG_TR_OP, sizeof rec, t.t_app, 0);
    rec.h.dur_ns = sat32(t1 - t0);
    rec.cls = AG_TRC_INIT;
    rec.result = (int32_t)r;
    if (g_fd >= 0 && !name_id)
        name_locked(&name_id, "cuInit");
    rec.name = name_id;
    put_call_locked(&rec.h, sizeof rec, &t, -1);
    pthread_mutex_unlock(&g_mu);
    over_since(a);
}

/* The launch's parameters, packed as the engine packs them for holds, hashed. On the stack
 * when they fit (a buffer kept per thread was never freed when the thread ended). */
static uint64_t param_hash(const ag_layout *lay, const ag_launch *l, uint32_t *bytes)
{
    *bytes = 0;
    if (!lay)
        return 0;
    uint8_t small[4096];
    uint8_t *buf = lay->size <= sizeof small ? small : malloc(lay->size);
    uint64_t h = 0;
    if (buf && !ag_params_copy(lay, l->params, l->extra, buf)) {
        *bytes = lay->size;
        h = ag_hash(buf, lay->size);
    }
    if (buf != small)
        free(buf);
    return h;
}

CUresult ag_tr_rec_launch(const ag_launch *l, CUresult (*call)(const ag_launch *))
{
    if (t_in)
        return call(l);
    uint64_t a = ag_now_ns();
    ag_tr_launch rec;
    memset(&rec, 0, sizeof rec);
    pthread_mutex_lock(&g_mu);
    tr_func *f = g_fd >= 0 ? func_locked((void *)l->f) : NULL;
    int timed = sample_locked(f, l);
    pthread_mutex_unlock(&g_mu);
    rec.func = f ? f->id : 0;
    rec.param_hash = param_hash(f ? f->lay : NULL, l, &rec.param_bytes);
    rec.entry = l->entry;
    rec.nattrs = (uint8_t)(l->nattrs > 255 ? 255 : l->nattrs);
    for (unsigned i = 0; l->attrs && i < l->nattrs; i++) {
        const CUlaunchAttribute *at = &l->attrs[i];
        if ((unsigned)at->id < 32)
            rec.attrs |= 1u << at->id;
        if (at->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
            at->value.programmaticStreamSerializationAllowed)
            rec.pdl = 1;
        if (at->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
            rec.cluster[0] = at->value.clusterDim.x;
            rec.cluster[1] = at->value.clusterDim.y;
            rec.cluster[2] = at->value.clusterDim.z;
        }
    }
    for (int i = 0; i < 3; i++) {
        rec.grid[i] = l->grid[i];
        rec.block[i] = l->block[i];
    }
    rec.smem = l->smem;
    ag_tr_tok t;
    begin(&t, a, l->stream, ag_entry_ptsz(l->entry), 1, timed);
    t_in = 1;
    CUresult r = call(l);
    uint64_t c = ag_now_ns();
    t_in = 0;
    call_ended(&t, c);
    int gpu_ok = gpu_end(&t, l->stream);
    put_call(&rec.h, sizeof rec, AG_TR_LAUNCH, &rec.result, r, &t, c, gpu_ok);
    return r;
}

int ag_tr_rec_copy(const ag_copy *op, CUresult *res)
{
    static const uint8_t elem[3] = { 1, 2, 4 };
    if (t_in)
        return 0; /* (then not recorded either: see ag_tr_op_begin_slow) */
    uint64_t a = ag_now_ns();
    ag_tr_copy rec;
    memset(&rec, 0, sizeof rec);
    int memset_op = op->entry <= AG_CP_MEMSET32;
    rec.op = op->entry;
    rec.ptsz = op->ptsz;
    /* the engine's classification (cache/copy.c) */
    rec.dst_mem = (uint8_t)ag_copy_mem_kind(op->dst);
    rec.src_mem = memset_op ? AG_MEM_NONE : (uint8_t)ag_copy_mem_kind(op->src);
    rec.bytes = memset_op ? (uint64_t)op->n * elem[op->entry] : op->n;
    rec.dst = op->dst;
    rec.src = memset_op ? 0 : op->src;
    rec.value = memset_op ? op->value : 0;
    ag_tr_tok t;
    begin(&t, a, op->stream, op->ptsz, 1, 1);
    t_in = 1;
    CUresult r = ag_copy_call(op);
    uint64_t c = ag_now_ns();
    t_in = 0;
    call_ended(&t, c);
    int gpu_ok = gpu_end(&t, op->stream);
    put_call(&rec.h, sizeof rec, AG_TR_COPY, &rec.result, r, &t, c, gpu_ok);
    *res = r;
    return 1;
}

/* ---- process life ------------------------------------------------------------------------ */

int ag_tr_prepare(void)
{
    const char *pattern = ag_opt_str(AG_OPT_TRACE);
    if (!*pattern)
        return 0;
    if (ag_path_expand(pattern, g_path, sizeof g_path)) {
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE=\"%s\": the path is too long; no trace is recorded",
               pattern);
        return 1;
    }
    int fd = open(g_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE: cannot write %s (%s); no trace is recorded",
               g_path, strerror(errno));
        return 1;
    }
    memcpy(g_file.magic, AG_TR_MAGIC, 8);
    g_file.version = AG_TR_VERSION;
    g_file.hdr_size = sizeof g_file;
    g_file.pid = (uint32_t)getpid();
    int events = ag_drv.cuEventCreate && ag_drv.cuEventRecord && ag_drv.cuEventQuery &&
                 ag_drv.cuEventElapsedTime_v2 && ag_drv.cuEventDestroy_v2 &&
                 ag_drv.cuCtxGetCurrent;
    g_gpu = events ? (uint32_t)ag_opt(AG_OPT_TRACE_GPU) : 0;
    if (ag_opt(AG_OPT_TRACE_GPU) && !g_gpu)
        ag_log(AG_LOG_WARN, "AUTOGRAPH_TRACE_GPU: the driver lacks the event functions; no GPU "
               "times are recorded");
    g_file.flags = (g_gpu ? AG_TRF_GPU : 0) | (g_gpu > 1 ? AG_TRF_GPU_SAMPLED : 0);
    if (gethostname(g_file.host, sizeof g_file.host - 1))
        g_file.host[0] = 0;
    int cf = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (cf >= 0) {
        ssize_t n = read(cf, g_file.cmd, sizeof g_file.cmd - 1);
        for (ssize_t i = 0; i + 1 < n; i++)
            if (!g_file.cmd[i])
                g_file.cmd[i] = ' ';
        close(cf);
    }
    g_pid = getpid();
    g_fd = fd;
    __atomic_store_n(&g_t0, ag_now_ns(), __ATOMIC_RELAXED);
    atexit(ag_tr_finish); /* where no launch registered the engine's exit handler (life.c) */
    ag_log(AG_LOG_INFO, "recording a trace into %s%s: nothing is graphed", g_path,
           g_gpu > 1 ? ", with GPU times of a sample of the launches" : g_gpu ? ", with GPU times" : "");
    __atomic_store_n(&ag_tr_on, 1, __ATOMIC_RELEASE);
    return 1;
}

void ag_tr_before_fork(void)
{
    if (!ag_tr_active())
        return;
    pthread_mutex_lock(&g_mu);
    flush_locked();
    pthread_mutex_unlock(&g_mu);
}

void ag_tr_in_child(void)
{
    /* the parent's file is the parent's: the child records nothing (one thread here: no
     * lock, which another thread of the parent may have held at the fork) */
    __atomic_store_n(&ag_tr_on, 0, __ATOMIC_RELAXED);
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
}

void ag_tr_finish(void)
{
    if (g_pid != getpid())
        return;
    uint64_t a = ag_now_ns();
    pthread_mutex_lock(&g_mu);
    if (g_fd < 0) {
        pthread_mutex_unlock(&g_mu);
        return;
    }
    __atomic_store_n(&ag_tr_on, 0, __ATOMIC_RELAXED);
    harvest_locked(a + TR_WAIT_EXIT_NS); /* the GPU times still pending */
    g_dropped += g_npairs;
    ag_tr_end e;
    memset(&e, 0, sizeof e);
    hdr(&e.h, AG_TR_END, sizeof e, app_ns(ag_now_ns()), 0);
    e.calls = g_calls;
    e.dropped = g_dropped;
    put_locked(&e, sizeof e);
    flush_locked();
    if (g_fd >= 0)
        close(g_fd);
    g_fd = -1;
    pthread_mutex_unlock(&g_mu);
}
