/* Process-wide state: the words every launch reads, together in one cache line. */
/* Between two launches the driver's own work (microseconds of it) evicts much of what
 * libautograph touched, so on a real host each distinct line the launch path reads is likely a
 * cache miss: the fast paths are laid out to touch few of them (this line, the stream state's
 * first line, the thread's own lines). */
#ifndef AG_PROCESS_H
#define AG_PROCESS_H

#include <stdatomic.h>

typedef struct ag_hot {
    atomic_int state;          /* enum ag_engine_state (internal.h) */
    atomic_int captures;       /* application stream captures in progress */
    atomic_ulong registry_gen; /* bumped whenever a stream state is retired (stream.h) */
    atomic_int profile_live;   /* loaded profile sequences not yet failed out (profile.c) */
    atomic_int legacy_open_any; /* legacy default streams open (holding or learning), in all
                                 * contexts: written when one opens or closes */
    atomic_ulong rest_epoch;   /* bumped when a stream whose rest tokens are out stops resting
                                * (rest.h): every thread's tokens are void from then on */
} ag_hot_t;

extern ag_hot_t ag_hot;

#endif
