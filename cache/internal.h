/* What the engine's files share among themselves. */
#ifndef AG_INTERNAL_H
#define AG_INTERNAL_H

#include <stdatomic.h>

#include "../policy/stats.h"
#include "hot.h"
#include "stream.h"

enum ag_engine_state {
    AG_ENGINE_UNINIT,
    AG_ENGINE_ON,
    AG_ENGINE_DISABLED,   /* AUTOGRAPH_DISABLE: count and pass through */
    AG_ENGINE_EXITING,    /* after our atexit handler: pass through */
    AG_ENGINE_FORKED,     /* a fork child: pass through, touch nothing */
};

/* Initialises on first use; true when launches may be held. */
int ag_engine_on(void);
/* True when the engine runs (never initialises: ordering points before any launch hold
 * nothing). */
int ag_engine_started(void);

/* Flushes what st holds (st->mu held by the caller). */
void ag_flush_locked(ag_stream *st, enum ag_stat reason);
/* Flushes and ends st's learning segment: an ordering point on st. */
void ag_order_locked(ag_stream *st, enum ag_stat reason);
void ag_flush_all(enum ag_stat reason);
/* ag_flush_locked (order 0) or ag_order_locked (order 1) from any thread: switches to the
 * stream's context for what it issues. */
void ag_flush_foreign(ag_stream *st, enum ag_stat reason, int order);

/* The hold watchdog (watchdog.c): told when a hold begins. */
void ag_watchdog_kick(void);

/* AUTOGRAPH_PROFILE (profile.c). */
void ag_profile_load(void);
void ag_profile_save(void);
/* Keeps what a stream learned for the profile before the stream's state is emptied. */
void ag_profile_keep(ag_stream *st);

void ag_report_stats(void);

#endif
