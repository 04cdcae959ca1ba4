/* Per-stream state: finding, creating and retiring it (see stream.h). */
#include "cache/stream.h"

#include <stdlib.h>
#include <string.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/driver.h"
#include "cache/graph.h"
#include "cache/selftime.h"
#include "cache/spare_uthash.h"
#include "cache/watch.h"


pthread_mutex_t ag_registry_mu = PTHREAD_MUTEX_INITIALIZER;
atomic_int ag_nholding;

/* Whether any stream's attributes were ever set. A stream is made with no window and the
 * default domain, and only cuStreamSetAttribute / cuStreamCopyAttributes (always wrapped,
 * however the application finds them) change that: until one is called, a state's first launch
 * need not ask the driver (two calls, 1.3-2.4 us of a cuBLAS program's first learning launch on
 * the H100 host, seventeenth session). Read relaxed: whatever ordered the application's setting
 * thread before the first launch orders the store too. */
static atomic_int g_attrs_set;

static ag_stream *g_table;
static ag_stream *g_retired;
__thread ag_stream_last ag_t_last __attribute__((tls_model("initial-exec")));

#define MAX_CTX 64
static ag_ctxinfo g_ctx[MAX_CTX];
static atomic_int g_nctx;


#define TCACHE 8
static __thread struct {
    ag_skey key;
    unsigned long gen;
    ag_stream *st;
} t_cache[TCACHE] __attribute__((tls_model("initial-exec")));

/* A context's slot (the registry lock held). Slots are reclaimed when every state is retired
 * (a context's destruction: ag_streams_retire_all); with MAX_CTX contexts alive at once, a
 * stream of one more passes through. */
static ag_ctxinfo *ctxinfo(CUcontext ctx)
{
    int n = atomic_load(&g_nctx);
    for (int i = 0; i < n; i++)
        if (g_ctx[i].ctx == ctx)
            return &g_ctx[i];
    /* called under the registry lock: no one else appends meanwhile */
    if (n >= 1) /* a second context has states: the legacy shortcut ends (before it can hold) */
        atomic_store_explicit(&ag_hot.legacy_one, NULL, memory_order_release);
    if (n == MAX_CTX) {
        static int said;
        if (!said) {
            said = 1;
            ag_log(AG_LOG_INFO, "more than %d CUDA contexts: streams of further contexts pass "
                   "through (never graphed)", MAX_CTX);
        }
        return NULL;
    }
    g_ctx[n].ctx = ctx;
    atomic_store(&g_nctx, n + 1);
    return &g_ctx[n];
}

/* Per-thread default streams die with their thread: a key's destructor, set by the owner
 * when its first per-thread stream state is made, retires them (flush.c: ag_ptds_thread_exit)
 * so that they neither stay in memory nor slow every walk of the registry. */
static pthread_key_t g_exit_key;
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;
static int g_exit_key_ok;

static void exit_key_make(void)
{
    g_exit_key_ok = pthread_key_create(&g_exit_key, ag_ptds_thread_exit) == 0;
}

static void ptds_exit_watch(void)
{
    pthread_once(&g_exit_once, exit_key_make);
    if (g_exit_key_ok && !pthread_getspecific(g_exit_key))
        pthread_setspecific(g_exit_key, (void *)1);
}

/* A block made ready at cuInit (spare.h), counted, or NULL. */
static void *spare(size_t size)
{
    void *p = ag_spare_take(size);
    if (p)
        ag_stat_inc(AG_ST_SPARES);
    return p;
}

static ag_stream *create_state(const ag_skey *k, int kind)
{
    ag_stream *st = spare(sizeof *st);
    if (!st && !(st = aligned_alloc(_Alignof(ag_stream), sizeof *st)))
        return NULL;
    memset(st, 0, sizeof *st);
    st->key = *k;
    st->kind = (uint8_t)kind;
    st->blocking = 1;
    if (kind == AG_SK_REGULAR) {
        unsigned flags = 0;
        if (ag_drv.cuStreamGetCtx(k->stream, &st->ctx) || ag_drv.cuStreamGetFlags(k->stream, &flags)) {
            free(st);
            return NULL;
        }
        st->handle = k->stream;
        st->blocking = !(flags & CU_STREAM_NON_BLOCKING);
    } else {
        st->ctx = k->ctx;
        st->handle = kind == AG_SK_LEGACY ? CU_STREAM_LEGACY : CU_STREAM_PER_THREAD;
    }
    st->issue = st->handle;
    return st;
}

/* Held launches' room at first: it grows with the longest piece held (hold.c). */
static uint32_t first_held_cap(uint32_t max_nodes)
{
    return max_nodes < 16 ? max_nodes : 16;
}

void ag_stream_spares(void)
{
    uint32_t max = (uint32_t)ag_opt(AG_OPT_MAX_NODES);
    ag_spare_keep(sizeof(ag_stream), _Alignof(ag_stream));
    ag_spare_keep(first_held_cap(max) * sizeof(((ag_stream *)0)->held[0]), 0);
    ag_learn_spares(max);
    ag_spare_keep_uthash();
    ag_spare_heap(64 << 10);
}

int ag_stream_prepare(ag_stream *st)
{
    if (st->held)
        return 0;
    AG_SELF_MARK(AG_SM_ARMED);
    ag_watch_learning(); /* it may be open from now on: the watch's legacy test (watch.h) */
    uint32_t max = (uint32_t)ag_opt(AG_OPT_MAX_NODES);
    if (ag_learn_init(&st->learn, max, 2, (uint32_t)ag_opt(AG_OPT_MIN_REPEATS)))
        return -1;
    st->held_cap = first_held_cap(max);
    if (!(st->held = spare(st->held_cap * sizeof *st->held)) &&
        !(st->held = calloc(st->held_cap, sizeof *st->held))) {
        ag_learn_free(&st->learn);
        return -1;
    }
    AG_SELF_MARK(AG_SM_ALLOCATED);
    if (atomic_load_explicit(&g_attrs_set, memory_order_relaxed))
        ag_stream_attrs_read(st); /* attributes set before its first launch */
    return 0;
}

int ag_stream_ptrs_reserve(ag_stream *st, uint32_t n)
{
    if (n <= st->ptrs_cap)
        return 0;
    void **p = realloc(st->ptrs, n * sizeof *p);
    if (!p)
        return -1;
    st->ptrs = p;
    st->ptrs_cap = n;
    return 0;
}

/* A created stream's state goes into the thread's one-entry cache (stream.h). */
static inline void remember_last(const ag_skey *k, int kind, unsigned long gen, ag_stream *st)
{
    if (kind == AG_SK_REGULAR) {
        ag_t_last.stream = k->stream;
        ag_t_last.gen = gen;
        ag_t_last.st = st;
    }
}

/* Whether a lookup in mode `create` makes the state of a stream that has none. */
static int makes(enum ag_lookup create, int kind)
{
    return create == AG_LOOKUP_MAKE ||
           (create == AG_LOOKUP_ORDER && !ag_watch_rule_quiet(kind == AG_SK_LEGACY));
}

static ag_stream *lookup(const ag_skey *k, int kind, enum ag_lookup create, uint64_t wid)
{
    unsigned long gen = atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire);
    uintptr_t hv = (uintptr_t)k->stream ^ ((uintptr_t)k->ctx >> 4) ^ (uintptr_t)k->thread;
    unsigned i = (unsigned)((hv >> 4) ^ (hv >> 11)) & (TCACHE - 1);
    if (t_cache[i].gen == gen && t_cache[i].key.stream == k->stream &&
        t_cache[i].key.ctx == k->ctx && t_cache[i].key.thread == k->thread) {
        remember_last(k, kind, gen, t_cache[i].st);
        return t_cache[i].st;
    }

    /* a stream the watch kept stateless (watch.h) is answered without the registry's lock */
    int make = makes(create, kind);
    if (!make && !ag_watch_may_have_state(wid))
        return NULL;
    ag_stream *st;
    pthread_mutex_lock(&ag_registry_mu);
    HASH_FIND(hh, g_table, k, sizeof *k, st);
    if (!st && !make) {
        pthread_mutex_unlock(&ag_registry_mu);
        return NULL;
    }
    if (!st) {
        pthread_mutex_unlock(&ag_registry_mu);
        ag_stream *n = create_state(k, kind);   /* asks the driver: not under our lock */
        if (!n)
            return NULL;
        pthread_mutex_lock(&ag_registry_mu);
        HASH_FIND(hh, g_table, k, sizeof *k, st);
        if (!st && !(n->ci = ctxinfo(n->ctx))) {
            pthread_mutex_unlock(&ag_registry_mu);
            free(n);
            return NULL;
        }
        if (!st) {
            if (kind == AG_SK_PTDS)
                ptds_exit_watch();
            ag_watch_state_made(wid);
            HASH_ADD(hh, g_table, key, sizeof n->key, n);
            ag_stat_inc(AG_ST_STREAMS);
            if (kind == AG_SK_LEGACY) {
                n->ci->legacy = n;
                if (atomic_load(&g_nctx) == 1)
                    atomic_store_explicit(&ag_hot.legacy_one, n, memory_order_release);
            }
            st = n;
            n = NULL;
            ag_log(AG_LOG_DEBUG, "stream %p (%s, ctx %p) seen", (void *)k->stream,
                   kind == AG_SK_LEGACY ? "legacy default" : kind == AG_SK_PTDS ? "per-thread default"
                   : st->blocking ? "blocking" : "non-blocking", (void *)st->ctx);
        }
        if (n) {
            free(n);
        }
    }
    gen = atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire);
    pthread_mutex_unlock(&ag_registry_mu);
    t_cache[i].key = *k;
    t_cache[i].gen = gen;
    t_cache[i].st = st;
    remember_last(k, kind, gen, st);
    return st;
}

ag_stream *ag_stream_lookup(CUstream s, int ptsz, enum ag_lookup create)
{
    ag_skey k = { s, NULL, 0 };
    int kind = AG_SK_REGULAR;
    if (s == NULL)
        kind = ptsz ? AG_SK_PTDS : AG_SK_LEGACY;
    else if (s == CU_STREAM_LEGACY)
        kind = AG_SK_LEGACY;
    else if (s == CU_STREAM_PER_THREAD)
        kind = AG_SK_PTDS;
    uint64_t wid = ag_watch_stream_id(s, ptsz);
    if (kind != AG_SK_REGULAR) {
        /* a default stream the watch kept stateless (in every context) needs no context to
         * be told so: no driver call for it (a program's first launches, on the legacy stream) */
        if (!makes(create, kind) && !ag_watch_may_have_state(wid))
            return NULL;
        if (ag_drv.cuCtxGetCurrent(&k.ctx) || !k.ctx)
            return NULL;
        k.stream = kind == AG_SK_LEGACY ? CU_STREAM_LEGACY : CU_STREAM_PER_THREAD;
        if (kind == AG_SK_PTDS)
            k.thread = ag_thread_id();
    }
    return lookup(&k, kind, create, wid);
}


void ag_streams_each(void (*fn)(ag_stream *, void *), void *arg)
{
    ag_stream *st, *tmp;
    pthread_mutex_lock(&ag_registry_mu);
    HASH_ITER(hh, g_table, st, tmp) fn(st, arg);
    pthread_mutex_unlock(&ag_registry_mu);
}

static void retire_locked(ag_stream *st, void (*empty)(ag_stream *))
{
    HASH_DEL(g_table, st);
    if (st->ci && st->ci->legacy == st)
        st->ci->legacy = NULL;
    if (atomic_load_explicit(&ag_hot.legacy_one, memory_order_relaxed) == st)
        atomic_store_explicit(&ag_hot.legacy_one, NULL, memory_order_release);
    ag_lock(&st->mu);
    empty(st);
    /* dead: whoever still holds a pointer passes through (read unlocked by the launch path) */
    __atomic_store_n(&st->kind, (uint8_t)AG_SK_DEAD, __ATOMIC_RELAXED);
    ag_unlock(&st->mu);
    st->hh.next = g_retired;
    g_retired = st;
}

void ag_stream_retire(ag_stream *st, void (*empty)(ag_stream *))
{
    pthread_mutex_lock(&ag_registry_mu);
    ag_stream *cur;
    HASH_FIND(hh, g_table, &st->key, sizeof st->key, cur);
    if (cur == st)
        retire_locked(st, empty);
    atomic_fetch_add_explicit(&ag_hot.registry_gen, 1, memory_order_release);
    pthread_mutex_unlock(&ag_registry_mu);
}

void ag_streams_retire_all(void (*empty)(ag_stream *))
{
    ag_stream *st, *tmp;
    pthread_mutex_lock(&ag_registry_mu);
    HASH_ITER(hh, g_table, st, tmp) retire_locked(st, empty);
    /* no live state points at a context slot now: all are free again (a retired state may
     * still read its old slot's counters, which are zero after its retirement, and at worst
     * flushes the streams of the slot's next context once) */
    int n = atomic_load(&g_nctx);
    for (int i = 0; i < n; i++) {
        g_ctx[i].ctx = NULL;
        g_ctx[i].legacy = NULL;
    }
    atomic_store(&g_nctx, 0);
    atomic_fetch_add_explicit(&ag_hot.registry_gen, 1, memory_order_release);
    pthread_mutex_unlock(&ag_registry_mu);
}

int ag_streams_retire_thread(uint64_t thread, void (*flush)(ag_stream *),
                             void (*empty)(ag_stream *))
{
    ag_stream *st, *tmp;
    int n = 0;
    pthread_mutex_lock(&ag_registry_mu);
    HASH_ITER(hh, g_table, st, tmp) {
        if (st->kind != AG_SK_PTDS || st->key.thread != thread)
            continue;
        ag_lock(&st->mu);
        flush(st);
        ag_unlock(&st->mu);
        retire_locked(st, empty);
        n++;
    }
    if (n)
        atomic_fetch_add_explicit(&ag_hot.registry_gen, 1, memory_order_release);
    pthread_mutex_unlock(&ag_registry_mu);
    return n;
}

/* ---- stream attributes -------------------------------------------------------------------- */

void ag_stream_attrs_touched(void)
{
    if (!atomic_load_explicit(&g_attrs_set, memory_order_relaxed))
        atomic_store_explicit(&g_attrs_set, 1, memory_order_relaxed);
}

void ag_stream_attrs_read(ag_stream *st)
{
    CUstreamAttrValue v;
    uint8_t a = 0;
    if (!ag_drv.cuStreamGetAttribute) { /* a driver without stream attributes */
        st->sattr = 0;
        return;
    }
    /* an attribute the driver cannot tell us about is taken as set: never graphed wrongly */
    memset(&v, 0, sizeof v);
    if (ag_drv.cuStreamGetAttribute(st->handle, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v) ||
        v.accessPolicyWindow.num_bytes)
        a |= 1;
    memset(&v, 0, sizeof v);
    if (ag_drv.cuStreamGetAttribute(st->handle, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v) ||
        v.memSyncDomain != CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT)
        a |= 2;
    if (a && !st->sattr)
        ag_log(AG_LOG_DEBUG, "stream %p has an access policy window or memory sync domain: its "
               "launches are not graphed", (void *)st->handle);
    st->sattr = a;
}
