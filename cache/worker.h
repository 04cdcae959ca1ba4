/* The worker thread: graphs built off the launching thread (worker.c). */
#ifndef AG_WORKER_H
#define AG_WORKER_H

#include "cache/graph.h"

/* Starts the thread (at cuInit: a thread's creation costs tens of microseconds, which no
 * launch should pay); it sleeps until the first request. `arm` is called on the waking thread
 * before every wake-up (once would do: it registers the exit handler that stops the worker,
 * which must be there before the worker makes any driver call that an exit could cut short). */
void ag_worker_start(void (*arm)(void));
/* Whether pieces are built on the worker (AUTOGRAPH_WORKER, and the thread could start);
 * else the launching thread builds them at their first replay. */
int ag_worker_on(void);
/* Hands q to the worker (never waits for it); -1 when it cannot take it (the caller finishes
 * q with ag_build_finish(q, 0)). */
int ag_worker_submit(ag_build_req *q);
/* Drops every request not begun and waits for the one under way: before a module unload or a
 * context's teardown (whose functions a build could be using; forget_streams: the worker's
 * upload streams are destroyed too, made again when needed) and before fork. No stream lock
 * may be held. */
void ag_worker_quiesce(int forget_streams);
/* At exit: drops what is queued, lets the build under way finish, joins the thread. */
void ag_worker_stop(void);
/* In a fork child: no worker (the child's engine passes everything through). */
void ag_worker_forked(void);

#endif
