/* The simulator's view of an AUTOGRAPH_TRACE file (cache/tracefmt.h): the whole trace in memory,
 * its calls indexed in file order with their GPU durations. */
/* The records come from the one trace reader, cli/traceread.c (also `autograph trace`'s): it
 * checks every record before anything reads it, gives one message for a truncated, foreign,
 * other-version or corrupt file, never a crash, reads .gz files through `gzip -dc` and skips a
 * record type it does not know (the format's promise). */
#ifndef AG_SIMTRACE_H
#define AG_SIMTRACE_H

#include <stddef.h>
#include <stdint.h>

#include "cache/tracefmt.h"
#include "arena.h"
#include "traceread.h"

/* One LAUNCH, OP or COPY record, in file order, with its GPU duration when the trace has one. */
typedef struct sim_call {
    const ag_tr_hdr *h;   /* the record (16-aligned, in sim_trace.records) */
    uint32_t gpu_ns;      /* from the AG_TR_GPU record of its seq */
    uint8_t has_gpu;
    uint8_t gpu_flags;    /* AG_TRG_* of that record (0: not recorded, an older file) */
} sim_call;

/* A FUNC, STREAM or NAME record, kept in file order with the calls: `at` is the index of the
 * first call after it (the simulator applies them when it gets there). */
typedef struct sim_decl {
    const ag_tr_hdr *h;
    size_t at;
} sim_decl;

typedef struct sim_trace {
    ag_arena records;     /* the records, copied (simtrace.c) */
    size_t len;           /* their bytes */
    const ag_tr_file *file;
    sim_call *calls;
    size_t ncalls;
    sim_decl *decls;
    size_t ndecls;
    const char **names;   /* by ag_tr_name.id (NULL: none); nnames entries */
    uint32_t nnames;
    int ended;            /* an AG_TR_END record was seen */
    uint64_t dropped;     /* from the END record */
    uint64_t ngpu;        /* GPU records matched to a call */
    uint64_t span_ns;     /* first call's start to the last call's end */
    uint64_t roi_ns;      /* the program's region as recorded: the first cuProfilerStart's start
                           * to the last cuProfilerStop's end (0: no region) */
    /* per call: the GPU time the model gives its work (docs/MODEL.md, "Traced GPU
     * durations"), derived by the eager run and kept for the autograph run; UINT32_MAX where
     * none was derived. Allocated by sim_trace_read. */
    uint32_t *exec;
} sim_trace;

/* Reads path; 0, or -1 with a one-line message in err. */
int sim_trace_read(const char *path, sim_trace *t, char *err, size_t errlen);
void sim_trace_free(sim_trace *t);

/* The name of an OP record (NULL when the trace did not name it). */
const char *sim_trace_op_name(const sim_trace *t, const ag_tr_op *op);

/* A FUNC record's parameter layout and name: ag_trr_func_params, ag_trr_func_name. */

#endif
