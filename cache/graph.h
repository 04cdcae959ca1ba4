/* Template graphs: build (here or on the worker) and replay. */
/* Build: explicit kernel nodes in a chain, instantiated once and uploaded; replay on the
 * application's stream, after the update (update.h); the list of built graphs and its limits
 * are gcache.h's. All under the owning stream's lock. */
#ifndef AG_GRAPH_H
#define AG_GRAPH_H

#include "cache/fault.h"
#include "cache/gcache.h"
#include "cache/stream.h"

/* Replays the held launches of st (exactly piece p of T, held[0] its first node) as that
 * piece's graph: builds it the first time, updates only what changed, launches it. Returns
 * 0, or -1 when any graph call failed (nothing was launched; the caller issues the held
 * launches eagerly; T's graphs are dropped), AG_REPLAY_FULL when the cache limits left no
 * room for the graph (the same). *built tells whether this replay instantiated the piece's
 * graph. */
int ag_tmpl_replay(ag_stream *st, ag_tmpl *T, uint32_t p, int *built);
#define AG_REPLAY_FULL (-2)

/* Building on the worker (worker.h): a request made on the launching thread, run on the
 * worker without any lock, finished there under the stream's lock. */
typedef struct ag_build_req ag_build_req;
/* A request to build piece p of T from the held launches from held[first] on, which are copied
 * (st->mu held; the piece is marked pending until the request finishes). NULL when out of
 * memory. */
ag_build_req *ag_build_snapshot(ag_stream *st, ag_tmpl *T, uint32_t p, uint32_t first);
/* A request the worker did not take (st->mu held): the piece is no longer pending; frees q. */
void ag_build_cancel_locked(ag_build_req *q);
/* The context the request's graph belongs to (the worker makes it current). */
CUcontext ag_build_ctx(const ag_build_req *q);
/* Makes the graph and exec (no lock; driver calls only); uploads on `upload` if not NULL. */
void ag_build_run(ag_build_req *q, CUstream upload);
/* Under the stream's lock: publishes what run made, if the piece still wants it (the stream
 * alive, T's graphs not dropped since); else destroys it. run 0: the request was dropped
 * before it ran. Frees q. */
void ag_build_finish(ag_build_req *q, int run);

/* Every build under way when this is called is thrown away when it finishes (a function's
 * attributes changed: funcattr.c). */
void ag_graph_builds_void(void);

/* The host's time for one graph launch, measured on this process's replays (EWMA); 0 before
 * the first. */
uint64_t ag_graph_launch_ns(void);

/* Whether this process has built (instantiated) a graph yet: its first instantiation is
 * suspected to carry a one-time driver cost (tmpl.c, payback_need). */
int ag_graph_built_once(void);

#endif
