/* The last value set per (function handle, attribute, device): see funcattr.h.
 *
 * A fixed open-addressing table, no allocation. Handles of unloaded functions may come back
 * for other functions (with the driver's default values): the wrappers of unloads and context
 * teardown forget everything (ag_funcattr_reset). When the table is full, new keys are not
 * remembered: every set of them counts as a change (correct, only slower). */
#include "funcattr.h"

#include <stdint.h>
#include <string.h>

#include "engine.h"
#include "lock.h"

#define FA_CAP 1024 /* power of two */
#define FA_PROBE 32  /* longest probe sequence looked at */

typedef struct {
    const void *h;   /* NULL: empty */
    int attr, dev, v;
    int known;       /* 0: the slot stays taken (probe chains), the value is not known */
} fa_entry;

static fa_entry g_fa[FA_CAP];
static ag_lock_t g_fa_lock;

static unsigned fa_hash(const void *h, int attr, int dev)
{
    uint64_t x = (uint64_t)(uintptr_t)h ^ ((uint64_t)(uint32_t)attr << 40) ^
                 ((uint64_t)(uint32_t)dev << 52);
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    return (unsigned)(x >> 40) & (FA_CAP - 1);
}

/* The entry of the key, or the empty slot where it would go; NULL when neither is within
 * FA_PROBE slots. Under g_fa_lock. */
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

int ag_funcattr_same(const void *h, int attr, int dev, int v)
{
    if (!h)
        return 0; /* the driver's to refuse */
    ag_lock(&g_fa_lock);
    fa_entry *e = fa_slot(h, attr, dev);
    int same = e && e->h && e->known && e->v == v;
    ag_unlock(&g_fa_lock);
    return same;
}

void ag_funcattr_changed(const void *h, int attr, int dev, int v)
{
    /* Drop the caches before remembering: a concurrent same-value call that finds the value
     * passes straight through, and by then nothing built under the old value is left. */
    ag_order_invalidate();
    if (!h)
        return;
    ag_lock(&g_fa_lock);
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
    ag_unlock(&g_fa_lock);
}

void ag_funcattr_reset(void)
{
    ag_lock(&g_fa_lock);
    memset(g_fa, 0, sizeof g_fa);
    ag_unlock(&g_fa_lock);
}
