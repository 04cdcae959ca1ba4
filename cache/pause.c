/* The program's pause of the library: nothing held between autograph_pause and autograph_resume. */
/* Why a program pauses: to keep a region out of graphs (a debugging or profiling run of one
 * part), or to time the same loop with and without graphs inside one process (bench/inproc.py:
 * processes on a shared host run at different speeds, and a pair of processes compares hosts
 * as much as libraries). The launch path bars holds while the count is up (ag_holds_barred,
 * process.h), as it does during an application's capture, but the driver may still be asked
 * anything: the worker builds and ordering points act as before. */
#include "cache/engine.h"
#include "cache/internal.h"
#include "policy/log.h"
#include "policy/stats.h"

/* No template's next occurrence measures from one before the pause: the interval would be
 * the paused block's (a trial took 100 ms for an occurrence of 0.1 ms, harness `pause` with a
 * gap), and bench/inproc.py pauses whole blocks of a program between its own. Nothing is
 * learned or told while paused, so the first occurrence after the resume starts afresh. */
static void unsample_each(ag_stream *st, void *unused)
{
    (void)unused;
    if (st->kind == AG_SK_DEAD)
        return;
    ag_lock(&st->mu);
    for (ag_tmpl *T = st->tmpls; T; T = T->next_all) {
        ag_benefit_unsampled(T->bp);
        T->mark_seq++; /* (GPU marks pair only consecutive occurrences: gpumark.c) */
    }
    ag_unlock(&st->mu);
}

/* First the count, then everything held is issued: a launch that looked before the count went
 * up holds under its stream's lock, and the flush, which takes every stream's lock after it,
 * issues what it held (the order of an application capture's beginning, order.c). */
int ag_pause(void)
{
    int first = atomic_fetch_add(&ag_hot.paused, 1) == 0;
    if (first)
        ag_log(AG_LOG_DEBUG, "paused by the program: nothing is held until it resumes");
    atomic_fetch_add(&ag_hot.barred, 1);
    if (ag_engine_started()) {
        ag_flush_all(AG_ST_FL_ORDER);
        if (first)
            ag_streams_each(unsample_each, NULL);
    }
    return 0;
}

int ag_resume(void)
{
    int n = atomic_load(&ag_hot.paused);
    while (n > 0)
        if (atomic_compare_exchange_weak(&ag_hot.paused, &n, n - 1)) {
            atomic_fetch_sub(&ag_hot.barred, 1);
            if (n == 1)
                ag_log(AG_LOG_DEBUG, "resumed by the program");
            return 0;
        }
    return -1;
}
