/* The rest path: what passes while learning rests, with or without a rest token. */
/* Why and how: DESIGN.md, "Resting" and "Rest tokens". A launch tries the steps below in this
 * order and passes at the first that says so; an ordering point uses the ones marked for it.
 * Everything here is inline: it is the launch path's fast path. */
#ifndef AG_REST_H
#define AG_REST_H

#include <stdatomic.h>

#include "cache/compiler.h"
#include "cache/process.h"
#include "cache/stream.h"

#define AG_REST_BATCH 64             /* launches a token takes off a rest at once */

typedef struct ag_rest_token {
    CUstream stream;
    unsigned long gen, epoch;        /* ag_hot.registry_gen and rest_epoch when taken */
    uint32_t units;                  /* launches left */
    uint8_t blocking;
    uint8_t why;                     /* the rest's cause (enum ag_rest_why): their fate */
} ag_rest_token;

extern __thread ag_rest_token ag_t_token __attribute__((tls_model("initial-exec")));

/* 1. Before the stream's state is looked up (launches and ordering points): this thread's
 * token covers a call on s. A blocking stream must still obey the legacy rule: while any
 * legacy stream is open, it takes the long way. */
static inline int ag_rest_token_covers(CUstream s)
{
    const ag_rest_token *t = &ag_t_token;
    return t->units && t->stream == s &&
           t->gen == atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire) &&
           t->epoch == atomic_load_explicit(&ag_hot.rest_epoch, memory_order_acquire) &&
           !(t->blocking && atomic_load_explicit(&ag_hot.legacy_open_any, memory_order_acquire));
}

/* 1 for a launch: the token covers it, and the launch spends one of its units. */
static inline int ag_rest_token_spend(CUstream s)
{
    if (!ag_rest_token_covers(s))
        return 0;
    ag_t_token.units--;
    return 1;
}

/* 1b. The legacy default stream has no token: its state is that of the current context, which
 * takes a driver call and the registry's thread cache to find (two fifths of a cuBLAS loop's own
 * time on the legacy stream: DESIGN.md). While only one context has states, its legacy state
 * answers for every context's legacy stream, but only for the rest (steps 2 for launches and
 * ordering points): if the current context is another, that one has no state, so nothing of it
 * is held or open, the call passes to the driver as it came (in the right context), and the
 * worst done is a flush of the one context's blocking streams that was not needed, or a launch
 * taken off its rest. Anything else takes the long way, which finds the right state. */
static inline ag_stream *ag_rest_legacy_one(CUstream s, int ptsz)
{
    if (s != CU_STREAM_LEGACY && (s || ptsz))
        return NULL;
    return atomic_load_explicit(&ag_hot.legacy_one, memory_order_acquire);
}

/* 2. After the lookup, without the stream's lock: takes one launch off st's rest, and for a
 * created stream a batch more into this thread's token. gen and epoch: as read before st was
 * looked up. Never on a per-thread stream: its owner must first join what another thread
 * flushed to its side stream -- and that flush may be what began the rest. */
static inline int ag_rest_take_unlocked(ag_stream *st, CUstream s, unsigned long gen,
                                        unsigned long epoch)
{
    uint8_t kind = __atomic_load_n(&st->kind, __ATOMIC_RELAXED);
    if (kind == AG_SK_PTDS || __atomic_load_n(&st->err, __ATOMIC_RELAXED))
        return 0; /* (an error a held launch left is returned under the lock) */
    if (kind != AG_SK_REGULAR)
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
    t->why = (uint8_t)ag_learn_rest_why(&st->learn);
    return 1;
}

/* 2 for an ordering point: learning rests on st, so nothing is held and no segment is open:
 * there is nothing to end (not on a per-thread stream, as above). */
static inline int ag_rest_order_passes(ag_stream *st)
{
    return __atomic_load_n(&st->kind, __ATOMIC_RELAXED) != AG_SK_PTDS &&
           !__atomic_load_n(&st->err, __ATOMIC_RELAXED) && ag_learn_rests(&st->learn);
}

/* 3. Under the stream's lock (per-thread streams, and whoever lost a race for the last of a
 * rest): nothing is held, and one launch comes off the rest. */
static inline int ag_rest_take_locked(ag_stream *st)
{
    return !st->cand && ag_learn_resting(&st->learn);
}

/* 4. The rest is over and st learns again -- and so may hold -- (its lock held): first every
 * thread's tokens for it are voided, by moving the rest epoch. */
static inline void ag_rest_end(ag_stream *st)
{
    if (AG_UNLIKELY(__atomic_load_n(&st->tokens_out, __ATOMIC_ACQUIRE))) {
        __atomic_store_n(&st->tokens_out, 0, __ATOMIC_RELAXED);
        atomic_fetch_add_explicit(&ag_hot.rest_epoch, 1, memory_order_acq_rel);
    }
}

#endif
