/* The AUTOGRAPH_TRACE file format, version 1: what the recorder writes and the simulator reads. */
/* Plain structs, no CUDA types: cli/ reads traces without the driver headers' meaning. All
 * fields little-endian (x86-64 and aarch64 hosts both are). docs/TRACE.md describes the format
 * for readers in other languages; this header is the reference.
 *
 * A file is one ag_tr_file header, then records. Every record starts with ag_tr_hdr; `size`
 * is the whole record's length in bytes (header included), always a multiple of 8, so a reader
 * that does not know a type skips it. A recording that ended normally closes with an
 * AG_TR_END record; a file without one was cut short (the reader says so). */
#ifndef AG_TRACEFMT_H
#define AG_TRACEFMT_H

#include <stdint.h>

#define AG_TR_MAGIC "AGTRACE\0"
#define AG_TR_VERSION 1u

/* ag_tr_file.flags */
#define AG_TRF_GPU 1u  /* AUTOGRAPH_TRACE_GPU=N: AG_TR_GPU records give GPU durations */
#define AG_TRF_GPU_EXACT 2u /* the GPU durations are the work's own time, with no timing events
                             * or host issue time in them: written by a generator with a model
                             * of its own (tests/progs/mktrace.c), never by the recorder */
#define AG_TRF_GPU_SAMPLED 4u /* AUTOGRAPH_TRACE_GPU=N, N > 1: only one LAUNCH in N of each
                               * function and launch dimensions (grid, block, shared memory) has
                               * a GPU record, the first of each included; copies and graph
                               * launches have one each, as with N = 1. (A flag, not a format
                               * change: version 1 readers ignore it) */

typedef struct ag_tr_file {
    char magic[8];     /* AG_TR_MAGIC */
    uint32_t version;  /* AG_TR_VERSION */
    uint32_t hdr_size; /* sizeof(ag_tr_file): later versions may append fields */
    uint64_t t0_ns;    /* CLOCK_MONOTONIC at the start of recording */
    uint32_t pid;
    uint32_t flags;    /* AG_TRF_* */
    char host[32];     /* gethostname, NUL-padded */
    char cmd[64];      /* /proc/self/cmdline's first words, NUL-padded */
} ag_tr_file;

enum ag_tr_type {
    AG_TR_NAME = 1,   /* a string id: an ordering point's function name (ag_tr_name) */
    AG_TR_FUNC = 2,   /* a kernel function, once, before its first launch (ag_tr_func) */
    AG_TR_STREAM = 3, /* a stream, once, before its first use (ag_tr_stream) */
    AG_TR_LAUNCH = 4, /* a kernel launch (ag_tr_launch) */
    AG_TR_OP = 5,     /* any other call the library wraps: ordering points (ag_tr_op) */
    AG_TR_COPY = 6,   /* an async memset or 1D copy (ag_tr_copy) */
    AG_TR_GPU = 7,    /* the GPU duration of an earlier LAUNCH, COPY or OP (ag_tr_gpu) */
    AG_TR_END = 8,    /* the recording ended normally (ag_tr_end) */
};

/* Every record's first 32 bytes. t_ns and dur_ns are the application's view: the recorder's
 * own time (event records, writes) is subtracted from later timestamps, so the gap between one
 * call's t_ns + dur_ns and the next call's t_ns is the application's own host work. */
typedef struct ag_tr_hdr {
    uint16_t type;   /* enum ag_tr_type */
    uint16_t size;   /* whole record, bytes, a multiple of 8 */
    uint32_t tid;    /* thread: 1 for the first thread that called, 2 for the next, ... */
    uint32_t seq;    /* call number, from 0, over LAUNCH, OP and COPY records (others: 0) */
    uint32_t dur_ns; /* time inside the driver for this call (saturates at 2^32-1) */
    uint64_t t_ns;   /* when the call began, ns since ag_tr_file.t0_ns */
    uint64_t stream; /* the stream as passed (NULL, 0x1 legacy, 0x2 per-thread, a handle) */
} ag_tr_hdr;

typedef struct ag_tr_name {
    ag_tr_hdr h;
    uint32_t id;     /* referred to by ag_tr_op.name */
    uint32_t len;    /* string length, without the NUL */
    /* char name[len + 1], NUL-padded to a multiple of 8 */
} ag_tr_name;

/* ag_tr_func.flags */
#define AG_TRFN_KERNEL 1u   /* the handle was a CUkernel (cudart's), not a CUfunction */
#define AG_TRFN_LAYOUT 2u   /* the parameter layout is known (nparams entries follow) */

typedef struct ag_tr_func {
    ag_tr_hdr h;
    uint64_t handle;      /* the CUfunction / CUkernel as the application passed it */
    uint32_t id;          /* referred to by ag_tr_launch.func; 1, 2, ... */
    uint32_t flags;       /* AG_TRFN_* */
    uint32_t param_bytes; /* the parameter block's size (last offset + last size) */
    uint32_t nparams;
    uint32_t name_len;    /* the kernel's (mangled) name, without the NUL */
    uint32_t pad;
    /* uint32_t param[nparams]: offset << 16 | size; then char name[name_len + 1]; the
     * whole NUL-padded to a multiple of 8 */
} ag_tr_func;

/* ag_tr_stream.flags */
#define AG_TRST_NONBLOCKING 1u /* CU_STREAM_NON_BLOCKING */
#define AG_TRST_DEFAULT 2u     /* a default stream: NULL, CU_STREAM_LEGACY or _PER_THREAD */
#define AG_TRST_PTSZ 4u        /* NULL seen through a _ptsz entry point (per-thread default) */

typedef struct ag_tr_stream {
    ag_tr_hdr h;       /* h.stream: the stream */
    uint32_t flags;    /* AG_TRST_* */
    int32_t priority;
    uint64_t ctx;      /* its context */
} ag_tr_stream;

/* ag_tr_launch.attrs: which launch attributes a cuLaunchKernelEx carried (bit = 1 << id,
 * CUlaunchAttributeID, ids below 32) */
typedef struct ag_tr_launch {
    ag_tr_hdr h;
    uint32_t func;        /* ag_tr_func.id */
    uint8_t entry;        /* enum ag_entry (cache/engine.h): which launch entry point */
    uint8_t nattrs;
    uint8_t pdl;          /* PROGRAMMATIC_STREAM_SERIALIZATION set and on */
    uint8_t pad;
    uint32_t grid[3], block[3];
    uint32_t smem;
    uint32_t attrs;       /* attribute ids present, 1 << id */
    uint32_t cluster[3];  /* CLUSTER_DIMENSION, when set */
    int32_t result;       /* the CUresult the application got */
    uint32_t param_bytes; /* bytes hashed */
    uint32_t pad2;
    uint64_t param_hash;  /* XXH3-64 of the packed parameter block (0 when its layout is
                           * unknown) */
} ag_tr_launch;

/* ag_tr_op.cls: what kind of ordering point (tools/gen_hooks.py's classes, plus the
 * hand-written hooks) */
enum ag_tr_cls {
    AG_TRC_STREAM = 1,     /* an operation on or a wait for one stream (h.stream) */
    AG_TRC_COPY,           /* an async copy or memset not given its own COPY record */
    AG_TRC_STREAM_ATTR,
    AG_TRC_SYNC,           /* a synchronous copy/memset: the default stream */
    AG_TRC_ALL,            /* context-wide: frees, context sync, ... */
    AG_TRC_INVALIDATE,     /* unloads, context teardown */
    AG_TRC_DESTROY,        /* stream destroy */
    AG_TRC_FREE_ASYNC,
    AG_TRC_CAPTURE_BEGIN,
    AG_TRC_CAPTURE_END,
    AG_TRC_FUNCATTR,       /* a function attribute set */
    AG_TRC_INIT,           /* cuInit */
    AG_TRC_OTHER,
};

typedef struct ag_tr_op {
    ag_tr_hdr h;
    uint32_t name;   /* ag_tr_name.id of the function's name ("cuStreamSynchronize") */
    uint8_t cls;     /* enum ag_tr_cls */
    uint8_t ptsz;    /* came through a _ptsz variant */
    uint16_t pad;
    int32_t result;  /* the CUresult the application got */
    uint32_t pad2;
    uint64_t arg;    /* the event for event calls (record, query, sync, wait); the byte count
                      * for copies and memsets; FUNCATTR: the function's ag_tr_func.id (0 in
                      * traces older than 2026-11-25: the value is not known); else 0 */
    uint64_t arg2;   /* cuEventElapsedTime: the end event; FUNCATTR: ag_tr_funcattr_arg; else
                      * 0 */
} ag_tr_op;

/* A FUNCATTR record's arg2: the attribute (a CUfunction_attribute, or AG_FA_CACHE_CONFIG /
 * AG_FA_SHMEM_CONFIG, cache/funcattr.h) and the device (AG_FA_NO_DEVICE for the cuFunc*
 * calls), 16 bits each, then the value set, 32 bits. */
static inline uint64_t ag_tr_funcattr_arg(int attr, int dev, int value)
{
    return (uint64_t)(uint16_t)(int16_t)attr << 48 | (uint64_t)(uint16_t)(int16_t)dev << 32 |
           (uint32_t)value;
}
static inline void ag_tr_funcattr_of(uint64_t arg2, int *attr, int *dev, int *value)
{
    *attr = (int16_t)(uint16_t)(arg2 >> 48);
    *dev = (int16_t)(uint16_t)(arg2 >> 32);
    *value = (int32_t)(uint32_t)arg2;
}

/* ag_tr_copy.mem kinds: enum ag_mem (cache/copy.h): none, device, pinned, pageable, managed */
typedef struct ag_tr_copy {
    ag_tr_hdr h;
    uint8_t op;      /* enum ag_copy_entry (cache/copy.h) */
    uint8_t dst_mem; /* enum ag_mem */
    uint8_t src_mem; /* enum ag_mem (memsets: none) */
    uint8_t ptsz;
    int32_t result;
    uint64_t bytes;  /* bytes written (memsets: elements x element size) */
    uint64_t dst, src;
    uint32_t value;  /* memsets */
    uint32_t pad;
} ag_tr_copy;

typedef struct ag_tr_gpu {
    ag_tr_hdr h;     /* h.seq: 0; h.t_ns: when the duration was read */
    uint32_t of_seq; /* the call whose GPU time this is */
    uint32_t gpu_ns; /* its duration on the GPU, from events around it */
} ag_tr_gpu;

/* ag_tr_gpu_ext.flags: had the start event fired when the recorder asked (cuEventQuery, just
 * after the end event was recorded, i.e. after the call returned)? */
#define AG_TRG_QUEUED 1u /* not yet: the stream was busy with earlier work (of any kind) until
                          * after the call returned; the call was queued behind it and gpu_ns
                          * holds none of the call's host issue time */
#define AG_TRG_IDLE 2u   /* it had: the start event fired before the call returned, so gpu_ns
                          * also holds up to the call's own host time (h.dur_ns of its record):
                          * the time from the start event to the work's arrival on the GPU */

/* Recorders since the GPU flags write this longer AG_TR_GPU record (h.size 48). The first 40
 * bytes are ag_tr_gpu: readers that know only ag_tr_gpu read those and skip the rest (records
 * are skipped by h.size); a reader reads `flags` only when h.size >= sizeof(ag_tr_gpu_ext),
 * and must still accept the 40-byte records of older files (no flags: state unknown). */
typedef struct ag_tr_gpu_ext {
    ag_tr_gpu g;
    uint32_t flags;  /* AG_TRG_* (neither: unknown, e.g. the query failed) */
    uint32_t pad;
} ag_tr_gpu_ext;

typedef struct ag_tr_end {
    ag_tr_hdr h;
    uint64_t calls;   /* LAUNCH + OP + COPY records written */
    uint64_t dropped; /* calls not recorded (GPU timing slots exhausted, write errors) */
} ag_tr_end;

#endif
