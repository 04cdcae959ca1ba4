/* Measuring libautograph's own time on a real host (a development build only). */
/* `make selftime` builds build/selftime/libautograph.so with -DAG_SELFTIME. Each launch and each
 * stream ordering point is timed with ag_ticks (the TSC; the generic timer on aarch64) from
 * entry to exit, minus the time spent in the driver calls it makes on the application's behalf
 * (the launch passed through); the means per call are printed at exit. Driver calls the engine
 * makes for itself (graph launches and updates, flushes) count as its own time. In the normal
 * build every macro here is empty. */
#ifndef AG_SELFTIME_H
#define AG_SELFTIME_H

#include <stdint.h>

enum ag_selftime_kind {
    AG_SELF_LAUNCH, AG_SELF_STREAM_ORDER,
    /* each launch again, by what became of it (AG_SELF_STATE; the last state set wins) */
    AG_SELF_L_OTHER,         /* engine off, in a capture, ungraphable, a retired stream */
    AG_SELF_L_WATCHED,       /* passed on a stream without state (watch.h) */
    AG_SELF_L_RESTED,        /* passed while learning rests */
    AG_SELF_L_LEARNING,      /* passed eagerly and shown to the learner */
    AG_SELF_L_HELD,          /* held, nothing sent yet */
    AG_SELF_L_SENT,          /* held, and a piece or occurrence went out with it (replayed, or
                              * eagerly while the worker builds) */
    AG_SELF_KINDS
};

#ifdef AG_SELFTIME
#include <string.h>

#include "cache/compiler.h"
extern __thread uint64_t ag_self_drv; /* ticks (ag_ticks) spent in passed-through driver calls */
void ag_selftime_add(enum ag_selftime_kind k, uint64_t ticks, long faults0);
/* Adds a call of kind k, and a launch also to its state's kind. */
void ag_selftime_end(enum ag_selftime_kind k, uint64_t ticks, uint64_t drv, long faults0);
/* The thread's page faults so far, until the first call of kind k is counted (then 0). */
long ag_selftime_faults(enum ag_selftime_kind k);
extern __thread uint8_t ag_self_state;   /* enum ag_selftime_kind of the launch under way */
#define AG_SELF_BEGIN(k)                                                                       \
    const long ag_self_f0 = ag_selftime_faults(k);                                             \
    ag_self_state = AG_SELF_L_OTHER;                                                           \
    memset(ag_self_marks, 0, sizeof ag_self_marks);                                            \
    const uint64_t ag_self_t0 = ag_self_marks[AG_SM_BEGIN] = ag_ticks(), ag_self_d0 = ag_self_drv
#define AG_SELF_END(k)                                                                         \
    ag_selftime_end(k, ag_ticks() - ag_self_t0 - (ag_self_drv - ag_self_d0),                    \
                    ag_self_drv - ag_self_d0, ag_self_f0)
#define AG_SELF_STATE(s) (ag_self_state = (s))
/* Phase marks inside one launch or ordering point: the slowest launch of each state (and the
 * slowest ordering point) is kept with the time from
 * each mark set to the next (printed at exit), to find what makes a launch slow; and every
 * launch's phases are summed per state, for the mean time of each phase. */
enum ag_self_mark {
    AG_SM_BEGIN, AG_SM_STATS, AG_SM_INIT, AG_SM_ENGINE, AG_SM_LOOKUP, AG_SM_LOCKED, AG_SM_LEARNS,
    AG_SM_ARMED, AG_SM_ALLOCATED, AG_SM_PREPARE, AG_SM_L_FOUND, AG_SM_L_CTX, AG_SM_L_QUEUED,
    AG_SM_LAYOUT, AG_SM_SHAPE, AG_SM_REPLAY, AG_SM_UPDATED, AG_SM_GLAUNCHED, AG_SM_FIND, AG_SM_PASS,
    AG_SM_LEARN,
    /* an ordering point's: the legacy rule asked, the segment ended (flushed and closed), the
     * closed segment seen by the templates */
    AG_SM_O_CROSS, AG_SM_O_FLUSHED, AG_SM_O_CLOSED, AG_SM_COUNT
};
extern __thread uint64_t ag_self_marks[AG_SM_COUNT];
#define AG_SELF_MARK(m) (ag_self_marks[m] = ag_ticks())
#define AG_DRV_BEGIN() const uint64_t ag_drv_t0 = ag_ticks()
#define AG_DRV_END() (ag_self_drv += ag_ticks() - ag_drv_t0)
/* The engine's own driver calls on the replay path, timed one by one (their time is in the
 * launch's own time too): which part of a piece's send is the driver's. */
enum ag_self_call { AG_SC_SET_PARAMS, AG_SC_EXEC_UPDATE, AG_SC_GRAPH_LAUNCH, AG_SC_COUNT };
void ag_selftime_call(enum ag_self_call c, uint64_t ticks);
#define AG_SELF_CALL(c, expr)                                                                  \
    __extension__({                                                                            \
        const uint64_t ag_sc_t0 = ag_ticks();                                                  \
        __typeof__(expr) ag_sc_r = (expr);                                                     \
        ag_selftime_call(c, ag_ticks() - ag_sc_t0);                                            \
        ag_sc_r;                                                                               \
    })
#else
#define AG_SELF_BEGIN(k) (void)0
#define AG_SELF_END(k) (void)0
#define AG_SELF_STATE(s) (void)0
#define AG_SELF_MARK(m) (void)0
#define AG_DRV_BEGIN() (void)0
#define AG_DRV_END() (void)0
#define AG_SELF_CALL(c, expr) (expr)
#endif

#endif
