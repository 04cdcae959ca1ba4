/* The watch: a stream has no state until a function launched on it repeats. */
/* A program's first launches -- C1 (one launch), C2 (50 kernels once), a warm-up -- are often
 * timed, and a stream's state (driver questions, allocations, the registry), its learner and a
 * function's first sighting cost microseconds that only pay off once something repeats. So a
 * launch on a stream that has no state passes straight through, remembered only by three bits
 * of a process-wide filter of (stream, function) pairs, until a pair repeats: that launch
 * makes the stream's state, and the stream learns from there on as before.
 *
 * Why per (stream, function), not per function or per process: sequences are learned per
 * stream, so a function seen on another stream says nothing about this one; and a process-wide
 * "watching" phase would end for good at the first repeat anywhere, after which every new
 * stream (a server's stream per request, a library's own stream) would pay at its first
 * launch again. The cost: a loop with no function repeated inside one iteration is learned
 * one iteration later (its first iteration is only watched).
 *
 * Why nothing is lost: a stream without state holds nothing and has no learning segment, so
 * it is never "open" (stream.h), and no ordering point on it has anything to issue. What
 * remains is the legacy-stream rule (DESIGN.md, "Ordering points"): a call on a blocking
 * stream must first flush the legacy stream of its context if that is open, and a call on the
 * legacy stream every open blocking stream. A stateless stream cannot tell its context or
 * flags without asking the driver, so it stays stateless only while the rule surely has nothing
 * to flush: for the legacy stream, while no stream has learned at all (ag_watch.learned); for
 * any other stream, while no legacy stream is open (ag_hot.legacy_open_any). Otherwise its
 * launch or ordering point makes the state as before. The same test lets an ordering point on
 * a stateless stream pass without making a state (ag_stream_of).
 *
 * Both filters are approximate in the safe direction only: a bit set by another pair (or
 * stream) makes a state earlier than needed, never later (50 new pairs on one stream: with two
 * bits a pair, a state was made in 3 of 1500 harness processes, as the addresses' randomisation
 * fell; with three, 0 of 4000: test_watch.c); bits are never cleared (a destroyed
 * stream's handle, reused, gets its state at once, as before the watch). With a profile loaded
 * nothing is watched (a profile sequence may start at a function's first launches). Copies
 * and memsets on a stateless stream are ordering points: a stream of copies alone is never
 * learned. */
#ifndef AG_WATCH_H
#define AG_WATCH_H

#include <cuda.h>
#include <stdatomic.h>
#include <stdint.h>

#include "cache/compiler.h"
#include "cache/process.h"

#define AG_WATCH_PAIR_WORDS 512  /* 4 KiB: (stream, function) pairs, three bits each */
#define AG_WATCH_STATE_WORDS 64  /* 512 B: streams that may have a state, one bit each */

typedef struct ag_watch_t {
    atomic_int learned;          /* some stream has learned (its state was prepared: it may be
                                  * open); never cleared */
    _Alignas(64) _Atomic uint64_t states[AG_WATCH_STATE_WORDS];
    _Alignas(64) _Atomic uint64_t pairs[AG_WATCH_PAIR_WORDS];
} ag_watch_t;

extern ag_watch_t ag_watch;


static inline uint64_t ag_watch_mix(uint64_t x)
{
    x ^= x >> 31;
    x *= 0x9E3779B97F4A7C15ull;
    x ^= x >> 29;
    x *= 0xBF58476D1CE4E5B9ull;
    return x ^ (x >> 32);
}

static inline int ag_watch_is_legacy(CUstream s, int ptsz)
{
    return s == CU_STREAM_LEGACY || (s == NULL && !ptsz);
}

/* The stream as the filters know it: its handle; the legacy stream (of any context) one name,
 * a per-thread stream one per thread. */
static inline uint64_t ag_watch_stream_id(CUstream s, int ptsz)
{
    if (ag_watch_is_legacy(s, ptsz))
        return (uintptr_t)CU_STREAM_LEGACY;
    if (s == NULL || s == CU_STREAM_PER_THREAD)
        return (uintptr_t)CU_STREAM_PER_THREAD ^ (ag_thread_id() << 12);
    return (uintptr_t)s;
}

static inline void ag_watch_state_bit(uint64_t id, _Atomic uint64_t **w, uint64_t *bit)
{
    uint64_t h = ag_watch_mix(id ^ 0x5bd1e995u);
    *w = &ag_watch.states[h % AG_WATCH_STATE_WORDS];
    *bit = 1ull << ((h >> 16) & 63);
}

/* A state for stream `id` is being made (the registry lock held, before it is published). */
static inline void ag_watch_state_made(uint64_t id)
{
    _Atomic uint64_t *w;
    uint64_t bit;
    ag_watch_state_bit(id, &w, &bit);
    atomic_fetch_or_explicit(w, bit, memory_order_release);
}

/* 0: the stream surely has no state (the registry need not be asked). */
static inline int ag_watch_may_have_state(uint64_t id)
{
    _Atomic uint64_t *w;
    uint64_t bit;
    ag_watch_state_bit(id, &w, &bit);
    return (atomic_load_explicit(w, memory_order_acquire) & bit) != 0;
}

/* A stream's state is about to learn (ag_stream_prepare). */
static inline void ag_watch_learning(void)
{
    if (!atomic_load_explicit(&ag_watch.learned, memory_order_relaxed))
        atomic_store_explicit(&ag_watch.learned, 1, memory_order_release);
}

/* Whether the legacy rule surely has nothing to flush for a call on a stream without state
 * (`legacy`: the legacy default stream; else any other). */
static inline int ag_watch_rule_quiet(int legacy)
{
    return legacy ? !atomic_load_explicit(&ag_watch.learned, memory_order_acquire)
                  : !atomic_load_explicit(&ag_hot.legacy_open_any, memory_order_acquire);
}

/* The pair (stream id, f)'s word of ag_watch.pairs and its three bits there (one word: one
 * cache line to touch). tests/test_watch.c measures the false positives. */
static inline uint64_t ag_watch_pair_bits(uint64_t id, const void *f, unsigned *word)
{
    uint64_t h = ag_watch_mix(id * 0x9FB21C651E98DF25ull ^ (uintptr_t)f);
    *word = (unsigned)(h % AG_WATCH_PAIR_WORDS);
    return 1ull << ((h >> 16) & 63) | 1ull << ((h >> 22) & 63) | 1ull << ((h >> 28) & 63);
}

/* A launch of f on stream s, which has no state: 1 when it passes watched (the pair was not
 * seen before; now it is), 0 when the stream must have its state now. */
static inline int ag_watch_launch(CUstream s, int ptsz, const void *f)
{
    if (!ag_watch_rule_quiet(ag_watch_is_legacy(s, ptsz)) ||
        atomic_load_explicit(&ag_hot.profile_live, memory_order_relaxed) > 0)
        return 0;
    unsigned word;
    uint64_t mask = ag_watch_pair_bits(ag_watch_stream_id(s, ptsz), f, &word);
    _Atomic uint64_t *w = &ag_watch.pairs[word];
    if ((atomic_load_explicit(w, memory_order_relaxed) & mask) == mask)
        return 0;
    return (atomic_fetch_or_explicit(w, mask, memory_order_relaxed) & mask) != mask;
}

/* At cuInit (ag_launch_rehearse): the filters read into the cache, nothing set. */
static inline void ag_watch_rehearse(void)
{
    (void)ag_watch_rule_quiet(0);
    ag_prefetch(ag_watch.pairs, sizeof ag_watch.pairs, 1);
    ag_prefetch(ag_watch.states, sizeof ag_watch.states, 0);
}

#endif
