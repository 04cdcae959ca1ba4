/* The per-stream lock: a spin lock, one atomic exchange when uncontended. */
/* Why not a pthread mutex: DESIGN.md, "Threads and locks". Under contention it spins briefly,
 * then yields: what it waits for is a flush (microseconds) or, rarely, a graph build (a
 * millisecond). */
#ifndef AG_LOCK_H
#define AG_LOCK_H

#include <sched.h>

#include "cache/compiler.h"
#include "cache/debug.h"

typedef struct { int v; } ag_lock_t;  /* 0: free; else who holds it (ag_lock_tag) */

#ifdef AG_DEBUG
#include <sys/syscall.h>
#include <unistd.h>
/* A debug build stores the holder's thread id, so that ag_lock_held can tell who holds it. */
static inline int ag_lock_tag(void)
{
    static __thread int tid;
    if (!tid)
        tid = (int)syscall(SYS_gettid);
    return tid;
}
#else
static inline int ag_lock_tag(void) { return 1; }
#endif

/* Whether the calling thread holds l (exact in a debug build, where only AG_ASSERT asks). */
static inline int ag_lock_held(const ag_lock_t *l)
{
    return __atomic_load_n(&l->v, __ATOMIC_RELAXED) == ag_lock_tag();
}

static inline int ag_trylock(ag_lock_t *l)
{
#ifdef AG_DEBUG
    int free_v = 0; /* a failed exchange would overwrite the holder's tag */
    return __atomic_compare_exchange_n(&l->v, &free_v, ag_lock_tag(), 0, __ATOMIC_ACQUIRE,
                                       __ATOMIC_RELAXED);
#else
    return __atomic_exchange_n(&l->v, 1, __ATOMIC_ACQUIRE) == 0;
#endif
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
    AG_ASSERT(ag_lock_held(l));
    __atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
}
#endif
