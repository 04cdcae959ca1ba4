/* Process-wide state: the words every launch reads, together in one cache line. */
/* Why one line: DESIGN.md, "The launch path on a real host". */
#ifndef AG_PROCESS_H
#define AG_PROCESS_H

#include <stdatomic.h>
#include <stdint.h>

typedef struct ag_hot {
    atomic_int state;          /* enum ag_engine_state (internal.h) */
    atomic_int captures;       /* application stream captures in progress */
    atomic_int paused;         /* the program's pauses of the library in force (pause.c) */
    atomic_int barred;         /* captures + paused, the one word the launch path reads */
    atomic_ulong registry_gen; /* bumped whenever a stream state is retired (stream.h) */
    atomic_int profile_live;   /* loaded profile sequences not yet failed out (profile.c) */
    atomic_int legacy_open_any; /* legacy default streams open (holding or learning), in all
                                 * contexts: written when one opens or closes */
    atomic_ulong rest_epoch;   /* bumped when a stream whose rest tokens are out stops resting
                                * (rest.h): every thread's tokens are void from then on */
    struct ag_stream *_Atomic legacy_one; /* the legacy default stream's state while its context
                                * is the only one with states; else NULL (stream.c, rest.h) */
} ag_hot_t;
_Static_assert(sizeof(ag_hot_t) <= 64, "the words every launch reads: one cache line");

extern ag_hot_t ag_hot;

/* Whether nothing may be held now: an application capture is in progress, or the program has
 * paused the library (autograph_pause). Launches and copies then pass straight through. */
static inline int ag_holds_barred(void)
{
    return atomic_load_explicit(&ag_hot.barred, memory_order_acquire);
}

/* This thread's number in the process (1, 2, ...; never reused): names a per-thread default
 * stream's state and a learning segment's last thread. */
uint64_t ag_thread_id(void);

#endif
