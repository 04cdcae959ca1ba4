/* The last value set per (function handle, attribute, device): see funcattr.h.
 *
 * A fixed open-addressing table, no allocation. Handles of unloaded functions may come back
 * for other functions (with the driver's default values): the wrappers of unloads and context
 * teardown forget everything (ag_funcattr_reset). When the table is full, new keys are not
 * remembered: every set of them counts as a change (correct, only slower). */
#include "funcattr.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "policy/log.h"

#define FA_CAP 1024 /* power of two */
#define FA_PROBE 32  /* longest probe sequence looked at */

typedef struct {
    const void *h;   /* NULL: empty */
    int attr, dev, v;
    int known;       /* 0: the slot stays taken (probe chains), the value is not known */
} fa_entry;

static fa_entry g_fa[FA_CAP];
/* Shared: same-value calls (the table is only read); exclusive: changes, resets. */
static pthread_rwlock_t g_fa_lock = PTHREAD_RWLOCK_INITIALIZER;

static unsigned fa_hash(const void *h, int attr, int dev)
{
    uint64_t x = (uint64_t)(uintptr_t)h ^ ((uint64_t)(uint32_t)attr << 40) ^
                 ((uint64_t)(uint32_t)dev << 52);
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 40) & (FA_CAP - 1);
}

/* The entry of the key, or the empty slot where it would go; NULL when neither is within
 * FA_PROBE slots. Under g_fa_lock (shared to read). */
static fa_entry *fa_slot(const void *h, int attr, int dev)
{
    unsigned i = fa_hash(h, attr, dev);
    for (int n = 0; n < FA_PROBE; n++, i = (i + 1) & (FA_CAP - 1)) {
        fa_entry *e = &g_fa[i];
        if (!e->h || (e->h == h && e->attr == attr && e->dev == dev))
            return e;
    }
    return NULL;
}

static int known_same(const void *h, int attr, int dev, int v)
{
    fa_entry *e = h ? fa_slot(h, attr, dev) : NULL; /* a NULL handle: the driver's to refuse */
    return e && e->h && e->known && e->v == v;
}

/* A fork while another thread holds the lock would leave it held in the child. */
static void fork_prepare(void) { pthread_rwlock_wrlock(&g_fa_lock); }
static void fork_after(void) { pthread_rwlock_unlock(&g_fa_lock); }
static void fork_child(void)
{
    /* only this thread exists now; a lock taken by the prepare handler is released */
    pthread_rwlock_t fresh = PTHREAD_RWLOCK_INITIALIZER;
    g_fa_lock = fresh;
}
static pthread_once_t g_fa_once = PTHREAD_ONCE_INIT;
static void fa_init(void) { pthread_atfork(fork_prepare, fork_after, fork_child); }

int ag_funcattr_begin(const void *h, int attr, int dev, int v)
{
    pthread_once(&g_fa_once, fa_init);
    pthread_rwlock_rdlock(&g_fa_lock);
    if (known_same(h, attr, dev, v))
        return AG_FA_SAME;
    pthread_rwlock_unlock(&g_fa_lock);
    pthread_rwlock_wrlock(&g_fa_lock);
    if (known_same(h, attr, dev, v)) /* another thread set it meanwhile */
        return AG_FA_SAME_EXCL;
    if (AG_LOG_DEBUG <= ag_log_level()) { /* (which attribute churns, when graphs keep going) */
        fa_entry *e = h ? fa_slot(h, attr, dev) : NULL;
        if (e && e->h && e->known)
            ag_log(AG_LOG_DEBUG, "function %p, attribute %d, device %d: %d -> %d", h, attr, dev,
                   e->v, v);
        else
            ag_log(AG_LOG_DEBUG, "function %p, attribute %d, device %d: set to %d (first)", h,
                   attr, dev, v);
    }
    ag_order_func(h, 0);
    return AG_FA_CHANGE;
}

/* Remembers v for (h, attr, dev). Under the exclusive lock. */
static void remember(const void *h, int attr, int dev, int v)
{
    /* The same attribute set on the same handle for another device (or through the other
     * API, cuFunc* vs cuKernel*, for a handle both accept) may share the driver's storage:
     * forget those values, so that a later call with one of them is not taken as "same". */
    for (int d = -1; d < 64; d++) {
        if (d == dev)
            continue;
        unsigned i = fa_hash(h, attr, d);
        for (int n = 0; n < FA_PROBE; n++, i = (i + 1) & (FA_CAP - 1)) {
            fa_entry *e = &g_fa[i];
            if (!e->h)
                break;
            if (e->h == h && e->attr == attr && e->dev == d) {
                e->known = 0;
                break;
            }
        }
    }
    fa_entry *e = fa_slot(h, attr, dev);
    if (e) {
        e->h = h;
        e->attr = attr;
        e->dev = dev;
        e->v = v;
        e->known = 1;
    }
}

void ag_funcattr_end(const void *h, int attr, int dev, int v, int how, CUresult r)
{
    if (how == AG_FA_CHANGE) {
        if (r == CUDA_SUCCESS) {
            ag_order_func(h, 1); /* nothing built under the old value is replayed */
            if (h)
                remember(h, attr, dev, v);
        } else if (h) {
            /* a refused call may still have changed something: know nothing */
            fa_entry *e = fa_slot(h, attr, dev);
            if (e && e->h)
                e->known = 0;
        }
    }
    pthread_rwlock_unlock(&g_fa_lock);
}

void ag_funcattr_reset(void)
{
    pthread_rwlock_wrlock(&g_fa_lock);
    memset(g_fa, 0, sizeof g_fa);
    pthread_rwlock_unlock(&g_fa_lock);
}
