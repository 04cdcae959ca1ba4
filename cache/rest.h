/* The rest path: what passes while learning rests, with or without a rest token. */
#ifndef AG_REST_H
#define AG_REST_H

#include <stdatomic.h>

#include "cache/process.h"
#include "cache/stream.h"

/* A thread that launches on a resting created stream takes a batch of the rest's launches at
 * once and keeps them here; its next launches and ordering points on that stream then pass
 * without touching the stream's state at all (on a real host each line we touch between two
 * driver calls is a cache miss, see process.h). Tokens are void when the registry generation moves
 * (the stream was destroyed; its handle may be reused) or when the rest epoch moves: a stream
 * whose tokens are out bumps it before it learns again, so before it can hold anything, and a
 * thread that comes after that (in the application's own order) sees its tokens void. */
#define AG_REST_BATCH 64

typedef struct ag_rest_token {
    CUstream stream;
    unsigned long gen, epoch;
    uint32_t units;
    uint8_t blocking;
} ag_rest_token;

extern __thread ag_rest_token ag_t_token __attribute__((tls_model("initial-exec")));

/* Whether this thread's token lets a call on stream s pass untouched. A blocking stream must
 * still obey the legacy rule: while any legacy stream is open, it takes the long way. */
static inline int ag_token_valid(CUstream s)
{
    const ag_rest_token *t = &ag_t_token;
    return t->units && t->stream == s &&
           t->gen == atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire) &&
           t->epoch == atomic_load_explicit(&ag_hot.rest_epoch, memory_order_acquire) &&
           !(t->blocking && atomic_load_explicit(&ag_hot.legacy_open_any, memory_order_acquire));
}

/* Takes one launch off st's rest, and a batch more for this thread's token when st is a
 * created stream. gen and epoch: as read before st was looked up. */
static inline int ag_rest_take(ag_stream *st, CUstream s, unsigned long gen, unsigned long epoch)
{
    if (__atomic_load_n(&st->kind, __ATOMIC_RELAXED) != AG_SK_REGULAR)
        return ag_learn_resting(&st->learn);
    if (!__atomic_load_n(&st->learn.rest_left, __ATOMIC_RELAXED))
        return 0;
    __atomic_store_n(&st->tokens_out, 1, __ATOMIC_RELAXED); /* published by the CAS */
    uint32_t n = ag_learn_rest_take(&st->learn, AG_REST_BATCH + 1);
    if (!n)
        return 0;
    ag_rest_token *t = &ag_t_token;
    t->stream = s;
    t->gen = gen;
    t->epoch = epoch;
    t->units = n - 1;
    t->blocking = st->blocking;
    return 1;
}

/* st stops resting (its lock held): void every thread's tokens for it. */
static inline void ag_tokens_void(ag_stream *st)
{
    __atomic_store_n(&st->tokens_out, 0, __ATOMIC_RELAXED);
    atomic_fetch_add_explicit(&ag_hot.rest_epoch, 1, memory_order_acq_rel);
}

#endif
