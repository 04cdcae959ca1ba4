/* The legacy default stream rule, asked before anything is issued or held on a stream (flush.c
 * does the flushing; the rest of flush.c's functions are declared in internal.h). */
#ifndef AG_FLUSH_H
#define AG_FLUSH_H

#include "cache/internal.h"

/* The legacy stream rule: work on a blocking stream waits for the legacy default stream of
 * its context and vice versa, so before anything is issued or held on one side, the other
 * side must not hold. */
void ag_cross_flush_slow(ag_stream *st);

static inline void ag_cross_flush(ag_stream *st)
{
    ag_ctxinfo *ci = st->ci;
    /* a blocking stream looks at its context only when some legacy stream is open at all:
     * one line fewer to read on the common path (see process.h) */
    if (st->kind == AG_SK_LEGACY
            ? atomic_load_explicit(&ci->blocking_open, memory_order_acquire) != 0
            : st->blocking && atomic_load_explicit(&ag_hot.legacy_open_any, memory_order_acquire) &&
                  atomic_load_explicit(&ci->legacy_open, memory_order_acquire))
        ag_cross_flush_slow(st);
}

#endif
