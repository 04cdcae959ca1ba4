/* Memory made ready in cuInit: blocks a first stream state and its first learning launches take. */
/* A program's first stream state is made in a launch, often inside the program's timed region:
 * its allocations there found fresh heap pages (a page fault each, microseconds on a virtual
 * machine) and cost 3-6 us of a 12-16 us first learning launch on the H100 host (G2's phase
 * marks, twelfth session). cuInit, where the program sets CUDA up anyway, pays instead. */
#include "cache/spare.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "policy/stats.h"

#define SLOTS 16

static struct {
    _Atomic(void *) p;
    size_t size;
} g_slot[SLOTS];
static unsigned g_nslots; /* (keep's alone: the engine starts on one thread) */

void ag_spare_keep(size_t size, size_t align)
{
    if (g_nslots == SLOTS || !size)
        return;
    void *p = align ? aligned_alloc(align, (size + align - 1) / align * align) : malloc(size);
    if (!p)
        return;
    memset(p, 0, size); /* the touch that maps its pages in now */
    g_slot[g_nslots].size = size;
    atomic_store_explicit(&g_slot[g_nslots].p, p, memory_order_release);
    g_nslots++;
}

void *ag_spare_take(size_t size)
{
    for (unsigned i = 0; i < SLOTS; i++) {
        if (!atomic_load_explicit(&g_slot[i].p, memory_order_acquire) || g_slot[i].size != size)
            continue;
        void *p = atomic_exchange_explicit(&g_slot[i].p, NULL, memory_order_acquire);
        if (p)
            return p;
    }
    return NULL;
}

static void *take_counted(size_t size)
{
    void *p = ag_spare_take(size);
    if (p)
        ag_stat_inc(AG_ST_SPARES_TABLES);
    return p;
}

void *ag_spare_alloc(size_t size)
{
    void *p = take_counted(size);
    return p ? p : malloc(size);
}

void *ag_spare_calloc(size_t size)
{
    void *p = take_counted(size);
    return p ? p : calloc(1, size);
}

void ag_spare_heap(size_t size)
{
    void *p = malloc(size);
    if (!p)
        return;
    /* one store a page, through volatile: a memset after malloc becomes a calloc, which
     * leaves fresh heap untouched */
    for (size_t i = 0; i < size; i += 4096)
        ((volatile char *)p)[i] = 0;
    free(p);
}
