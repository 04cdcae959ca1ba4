/* The engine's entry points: what the interposition layer asks of it. */
/* Nothing here knows how the calls reached us (exported symbol, dlsym, cuGetProcAddress); the
 * engine decides whether a launch is held, replayed from a graph or passed straight through,
 * and flushes what it holds before every ordering point. */
#ifndef AG_ENGINE_H
#define AG_ENGINE_H

#include <cuda.h>
#include <stdint.h>

/* Which exported entry point a launch came through (also the stats' names). */
enum ag_entry {
    AG_ENTRY_LAUNCH,         /* cuLaunchKernel */
    AG_ENTRY_LAUNCH_PTSZ,    /* cuLaunchKernel_ptsz */
    AG_ENTRY_EX,             /* cuLaunchKernelEx */
    AG_ENTRY_EX_PTSZ,        /* cuLaunchKernelEx_ptsz */
    AG_ENTRY_COOP,           /* cuLaunchCooperativeKernel */
    AG_ENTRY_COOP_PTSZ,      /* cuLaunchCooperativeKernel_ptsz */
    AG_ENTRY_COUNT
};

/* One launch as the application made it; pointers are only valid during the call. */
typedef struct ag_launch {
    CUfunction f;                    /* a CUfunction or a CUkernel */
    unsigned grid[3], block[3], smem;
    CUstream stream;                 /* as passed: NULL, CU_STREAM_LEGACY/PER_THREAD or a handle */
    const CUlaunchAttribute *attrs;  /* cuLaunchKernelEx only */
    unsigned nattrs;
    void **params, **extra;
    uint8_t entry;                   /* enum ag_entry */
    const CUlaunchConfig *config;    /* cuLaunchKernelEx: the caller's own (may be NULL) */
} ag_launch;

static inline int ag_entry_ptsz(int entry) { return entry & 1; }

/* The program initialises CUDA (cuInit): the engine's set-up that needs no launch happens
 * now, outside whatever the program times later (options, the profile). */
void ag_engine_prepare(void);

/* A kernel launch. Returns what the application must see for this call. */
CUresult ag_launch_kernel(const ag_launch *l);
/* At cuInit, after ag_engine_prepare, and at calls that wait until the first launch (order.c):
 * the first launch's path run once without effect, so that a program's first (perhaps timed)
 * launch finds it in the CPU's caches. */
void ag_launch_rehearse(void);
/* Whether this process has made a launch that reached the engine's watch or learner. */
extern int ag_launched;

/* Ordering points, called before the real function runs (after it for *_done). Those that
 * return a CUresult hand back an error a held launch left on the stream when it went out
 * late (the application was told CUDA_SUCCESS for it): the wrapper passes it with the real
 * call's result to ag_order_result, which decides what the application sees. */
CUresult ag_order_stream(CUstream s, int ptsz); /* any work on or wait for stream s */
void ag_order_waits(void);                      /* the host is about to wait for the GPU (a
                                                 * stream sync; ag_order_sync_copy and
                                                 * ag_order_all_call imply it) */
/* Whether a stream call of this name waits for the GPU, so that its wrapper calls
 * ag_order_waits first (the SYNC and ALL classes imply it). interpose/hooks.c asks with each
 * wrapper's constant name (the comparisons fold at compile time), the replay model with a
 * traced call's. */
static inline int ag_call_waits(const char *name)
{
    return !__builtin_strcmp(name, "cuStreamSynchronize") ||
           !__builtin_strcmp(name, "cuStreamSynchronize_ptsz");
}
CUresult ag_order_sync_copy(int ptsz);          /* synchronous copy/memset: default stream */
void ag_order_all(void);                        /* frees, context sync: everything held */
CUresult ag_order_all_call(void);               /* the same for an application's call: also
                                                 * the error of a stream it launched on */
CUresult ag_order_invalidate(void);             /* unloads, context teardown: drop all caches */
/* Function h's attributes change (funcattr.c): before the change (drop 0), what streams hold
 * goes out where a held launch is of h (order.c says what h reaches); after it (drop 1), the
 * graphs with a node of h, and every graph build under way, are dropped. */
void ag_order_func(const void *h, int drop);
CUresult ag_order_stream_destroy(CUstream s);
/* r, the real call's result, or `pending` (an error from ag_order_*) when r is CUDA_SUCCESS;
 * when both are errors, r, and `pending` stays on stream s for its next call. */
CUresult ag_order_result(CUstream s, int ptsz, CUresult r, CUresult pending);
void ag_order_capture_end(CUstream s, int ptsz);
void ag_order_capture_begin(CUstream s, int ptsz);
void ag_order_capture_begin_done(CUstream s, int ptsz, CUresult r);
void ag_order_capture_end_done(CUstream s, int ptsz);

/* The program pauses the library (autograph_pause, USAGE.md): everything held goes out now,
 * and launches and copies pass straight through until as many ag_resume; pauses nest and are
 * process-wide. ag_resume returns -1, changing nothing, when no pause is in force. */
int ag_pause(void);
int ag_resume(void);
/* Before and after cuStreamSetAttribute / cuStreamCopyAttributes on s (cache/graph.c says
 * which attributes matter). */
CUresult ag_order_stream_attr(CUstream s, int ptsz);
void ag_order_stream_attr_done(CUstream s, int ptsz, CUresult r);

#endif
