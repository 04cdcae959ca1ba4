/* The trace recorder: AUTOGRAPH_TRACE=FILE writes every call the library sees, in order, in
 * the format of cache/tracefmt.h (docs/TRACE.md). */
/* Nothing happens until cuInit (ag_engine_prepare calls ag_tr_prepare): then, when the option
 * is set, the file is opened and ag_tr_on set; the engine stays DISABLED for the whole run
 * (cache/life.c), so the trace is the program's own eager behaviour. The interposition layer
 * calls the recorder only behind `ag_tr_on` (one load of a false flag when not recording):
 *
 *     ag_tr_tok t;
 *     int tr = ag_tr_op_begin(&t, stream, ptsz, has_stream, "cuStreamSynchronize");
 *     r = real(...);
 *     if (AG_UNLIKELY(tr)) ag_tr_op_end(&t, &name_id, AG_TRC_STREAM, r, arg, arg2);
 *
 * Launches are recorded in cache/launch.c (on the engine's disabled path: no cost at all on
 * its hot path), async memsets and copies in ag_copy_offer (cache/copy.c).
 *
 * Times are the application's view: what the recorder spends itself (its queries, hashing,
 * writes, GPU events) is added to one process-wide sum that is subtracted from every later
 * timestamp -- of a thread, less what other threads recorded while it was inside a driver
 * call; and a thread's calls never overlap. */
#ifndef AG_TRACEREC_H
#define AG_TRACEREC_H

#include <cuda.h>
#include <stdint.h>

#include "cache/compiler.h"

struct ag_launch;
struct ag_copy;

/* Recording: set once the trace file is open, cleared at exit, in a fork child and after a
 * write error. */
extern int ag_tr_on;

static inline int ag_tr_active(void)
{
    return __atomic_load_n(&ag_tr_on, __ATOMIC_RELAXED);
}

/* One call under way. */
typedef struct ag_tr_tok {
    uint64_t t;        /* clock when the driver call began */
    uint64_t t_app;    /* the same, in the application's time (ns since the file's t0) */
    uint64_t over_at;  /* the recorder's time so far (tracerec.c's g_over), then */
    uint64_t stream;   /* as passed (0 for calls without one) */
    int32_t gpu;       /* GPU timing slot, or -1 */
    uint8_t ptsz;
} ag_tr_tok;

/* ---- called by the interposition layer and the engine ---------------------------------- */

/* At cuInit (ag_engine_prepare): opens the trace when AUTOGRAPH_TRACE is set. Returns whether
 * the option is set at all (then the engine stays disabled, even if the file could not be
 * opened: one warning says so). */
int ag_tr_prepare(void);

/* An ordering point (or any other wrapped call) begins: returns 0 when not recording (t is
 * then untouched). has_stream: the call names a stream (`stream`, as passed). */
int ag_tr_op_begin_slow(ag_tr_tok *t, CUstream stream, int ptsz, int has_stream,
                        const char *name);
static inline int ag_tr_op_begin(ag_tr_tok *t, CUstream stream, int ptsz, int has_stream,
                                 const char *name)
{
    if (AG_LIKELY(!ag_tr_active()))
        return 0;
    return ag_tr_op_begin_slow(t, stream, ptsz, has_stream, name);
}

/* ...and ends with result r. *name_id: the caller's static slot for the id of `name` (0 until
 * the recorder gives it one and writes its NAME record). cls: enum ag_tr_cls. */
void ag_tr_op_end(ag_tr_tok *t, uint32_t *name_id, const char *name, int cls, CUresult r,
                  uint64_t arg, uint64_t arg2);

/* cuInit, whose call began at clock t0 and ended at t1 (recorded after the fact: recording
 * begins inside it). */
void ag_tr_init_call(uint64_t t0, uint64_t t1, CUresult r);

/* A kernel launch, passed through by `call` (the engine's passthrough). */
CUresult ag_tr_rec_launch(const struct ag_launch *l,
                          CUresult (*call)(const struct ag_launch *));

/* An async memset or copy (class COPY): recorded and issued as the application made it. */
int ag_tr_rec_copy(const struct ag_copy *op, CUresult *res);

/* Process life: the parent before fork (flush), the child (recording stops), exit (the GPU
 * times still pending, the END record, close). */
void ag_tr_before_fork(void);
void ag_tr_in_child(void);
void ag_tr_finish(void);

#endif
