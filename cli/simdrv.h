/* The simulated driver: ag_drv's functions over a simulated host clock and GPU timeline. */
/* The engine (cache/, policy/, built with -DAG_SIM) calls the driver only through ag_drv; here
 * every such call advances the host clock by its cost (the trace's own duration for an eager
 * launch or copy, the cost table's for everything else) and puts work on a per-stream GPU
 * timeline. Which traced call a kernel or copy the driver receives is: each stream keeps a
 * FIFO of the trace records handed to the engine and not yet executed, and the engine keeps
 * per-stream order, so the front is always the one (docs/MODEL.md). Handles the driver makes
 * (graphs, nodes, execs, events, streams) are small fake numbers, never dereferenced by the
 * engine: runs are deterministic. */
#ifndef AG_SIMDRV_H
#define AG_SIMDRV_H

#include <stdint.h>

#include <cuda.h>

#include "simcost.h"
#include "simtrace.h"

/* Where host time went (ns), for the result and --explain. */
#define SIM_CATS(X)                                                                            \
    X(APP, "app")                /* the application's own work between calls */               \
    X(LAUNCH, "launch")          /* eager kernel launches (the trace's own durations) */        \
    X(COPY, "copy")              /* async copies and memsets issued */                          \
    X(GRAPH_LAUNCH, "graph_launch")                                                            \
    X(UPDATE, "update")          /* exec updates, node by node or whole */                      \
    X(BUILD, "build")            /* graph create, nodes, instantiate, upload, destroy */        \
    X(EVENTS, "events")          /* the engine's events: create, record, query, elapsed */      \
    X(QUERY, "query")            /* the engine's questions: contexts, streams, layouts, kinds */ \
    X(SYNC, "sync_call")         /* synchronising calls, their own cost */                      \
    X(STALL, "stall")            /* the host waiting for the GPU in them */                     \
    X(OPS, "other_ops")          /* every other traced call */                                  \
    X(ENGINE, "engine")          /* the engine's own CPU time */

enum sim_cat {
#define SIM_CAT_ENUM(id, name) SIM_C_##id,
    SIM_CATS(SIM_CAT_ENUM)
#undef SIM_CAT_ENUM
    SIM_C_COUNT
};
extern const char *const sim_cat_names[SIM_C_COUNT];

/* Stream keys: the default streams have fixed keys, created streams their handle. */
#define SIM_KEY_LEGACY 1u
#define SIM_KEY_PTDS 2u
uint64_t sim_stream_key(uint64_t stream, int ptsz);

typedef struct sim_result_gpu {
    uint64_t busy_ns;    /* time the GPU ran something (union over streams, see MODEL.md) */
    uint64_t gap_ns;     /* launch gaps between back-to-back work */
    uint64_t end_ns;     /* when the last work ends */
    uint64_t kernels, graph_nodes, copies;
    uint64_t graph_launches, nodes_built, instantiations, updates_node, updates_whole;
    uint64_t updates_fn; /* kernel nodes of an exec given another function (either way) */
    uint64_t anomalies;  /* work the driver received with no traced record to time it */
    uint64_t watchdog_flushes;
} sim_result_gpu;

/* The simulator's state (one run per process). */
extern uint64_t sim_H;                  /* the host clock, ns */
extern uint64_t sim_host[SIM_C_COUNT];  /* host time per category, ns */
extern sim_result_gpu sim_gpu;
extern int sim_off_critical;            /* 1: costs do not count for the app (watchdog) */
/* The simulated host's speed against the recording host's: every host cost (the application's
 * own time between calls, the driver's, the engine's) times this; 1 replays the trace's host.
 * GPU times are not scaled. */
extern double sim_host_scale;
/* ns of the recording host's time on the simulated host. */
uint64_t sim_host_scaled(uint64_t ns);

/* trace_flags: the trace's ag_tr_file.flags (AG_TRF_GPU_EXACT: its GPU durations are the
 * work's own times; AG_TRF_GPU_SAMPLED: only a sample of the launches has one) */
void simdrv_init(const sim_costs *c, uint32_t trace_flags);
/* The trace's calls and its exec array (sim_trace.exec): each call's own GPU time, derived by
 * the first run that puts its work on the GPU and kept there (docs/MODEL.md). */
void sim_exec_attach(const sim_call *calls, uint32_t *exec);
/* The own GPU time of a traced call other than a launch or async copy (an application's graph
 * launch, a synchronous copy: blocking, its host time holds its work) issued at `issue` on the
 * stream, its host call taking host_ns; without a traced duration, memcpy_small_dtoh's. */
uint64_t sim_exec_call(const sim_call *c, uint64_t stream, int ptsz, uint64_t issue,
                       uint64_t host_ns, int blocking);
/* The GPU's busy time (the union sim_gpu.busy_ns counts) inside [t0, t1). */
uint64_t sim_busy_between(uint64_t t0, uint64_t t1);
/* Fills ag_drv with the simulated functions. */
void simdrv_install(void);

/* Host time: advances the clock by ns, charged to cat. */
void sim_host_add(enum sim_cat cat, uint64_t ns);
/* The host waits until t (a sync): the wait is charged as a stall. */
void sim_host_wait(uint64_t t);

/* The trace's declarations, applied in file order. */
void sim_decl_stream(const ag_tr_stream *s);
void sim_decl_func(const ag_tr_func *f);
const ag_tr_func *sim_func_by_id(uint32_t id);
void sim_set_ctx_for(uint64_t stream, int ptsz); /* the calling thread's current context */
void sim_set_mem(uint64_t ptr, int kind);       /* enum ag_mem */

/* A traced LAUNCH or COPY record is handed to the engine on this stream. */
void sim_push(uint64_t stream, int ptsz, const sim_call *c);

/* The GPU side of traced calls that are not kernels or engine-offered copies. */
uint64_t sim_stream_ready(uint64_t stream, int ptsz);  /* when its work so far ends */
uint64_t sim_all_ready(void);
void sim_stream_wait_until(uint64_t stream, int ptsz, uint64_t t);  /* cuStreamWaitEvent */
/* Runs dur ns of work on the stream, issued now (an application graph launch, a synchronous
 * copy, a host function); returns when it ends. */
uint64_t sim_stream_run(uint64_t stream, int ptsz, uint64_t dur);
/* Application captures: work on a capturing stream does not run. */
void sim_capture(uint64_t stream, int ptsz, int on);

/* The async copy entry points (ag_copy.real for the engine's offers; called directly when the
 * engine does not take one). Index: enum ag_copy_entry. */
void *sim_copy_fn(int entry, int ptsz);
/* The same call made directly (the wrapper's own call when the engine did not take it). */
CUresult sim_copy_call(int entry, uint64_t dst, uint64_t src, uint64_t stream, int ptsz);

/* The engine's own time measured for real (--measure-engine, CLOCK_MONOTONIC: a vDSO read):
 * time spent inside the simulated driver's timed calls and their count, to subtract. */
uint64_t sim_real_ns(void);
extern uint64_t sim_drv_real_ns, sim_drv_real_calls;
extern int sim_measure;

/* The simulated worker (simworker.c): what it does up to the application's time `until` (it
 * builds on its own clock and publishes each graph when its build ends). */
void sim_worker_run(uint64_t until);

#endif
