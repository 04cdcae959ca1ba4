/* The engine's start on first use (life.c): asked by the launch path and the offer of copies. */
#ifndef AG_LIFE_H
#define AG_LIFE_H

#include "cache/internal.h"

/* Initialises the engine (once, whoever calls first); returns its state. */
int ag_engine_init(void);

/* Registers the exit handler, once (life.c says why it waits for this). */
void ag_engine_arm_exit(void);
extern atomic_int ag_exit_armed;
/* A stream's state learns for the first time (life.c). */
void ag_engine_first_learning(void);

/* A hold is about to begin: the exit handler must be there to flush it. */
static inline void ag_engine_will_hold(void)
{
    if (AG_UNLIKELY(!atomic_load_explicit(&ag_exit_armed, memory_order_relaxed)))
        ag_engine_arm_exit();
}

/* A stream's state is about to learn. Returns ag_stream_prepare's answer. */
static inline int ag_stream_learns(ag_stream *st)
{
    if (AG_UNLIKELY(!st->held))
        ag_engine_first_learning();
    return ag_stream_prepare(st);
}

/* Initialises on first use; true when launches may be held (inline: every launch asks). */
static inline int ag_engine_on(void)
{
    int s = atomic_load_explicit(&ag_hot.state, memory_order_acquire);
    if (AG_UNLIKELY(s == AG_ENGINE_UNINIT))
        s = ag_engine_init();
    return s == AG_ENGINE_ON;
}

#endif
