/* The per-stream lock: a spin lock, one atomic exchange when uncontended. */
/* Why not a pthread mutex: DESIGN.md, "Threads and locks". Under contention it spins briefly,
 * then yields: what it waits for is a flush (microseconds) or, rarely, a graph build (a
 * millisecond). */
#ifndef AG_LOCK_H
#define AG_LOCK_H

#include <sched.h>

#include "cache/compiler.h"

typedef struct { int v; } ag_lock_t;

static inline int ag_trylock(ag_lock_t *l)
{
    return __atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE) == 0;
}

static inline void ag_lock(ag_lock_t *l)
{
    if (AG_LIKELY(ag_trylock(l)))
        return;
    for (unsigned n = 0;; n++) {
        if (!__atomic_load_n(&l->v, __ATOMIC_RELAXED) && ag_trylock(l))
            return;
        if (n < 64)
            ag_cpu_pause();
        else
            sched_yield();
    }
}

static inline void ag_unlock(ag_lock_t *l)
{
    __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}
#endif
