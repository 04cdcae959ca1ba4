/* What the fake driver's files share. See fakecuda.h for the model. */
#ifndef FC_INTERNAL_H
#define FC_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "fakecuda.h"

#define FC_EXPORT __attribute__((visibility("default")))

/* Every handle points to a struct that starts with one of these. */
enum fc_magic {
    FC_M_CTX = 0x46430001,
    FC_M_STREAM,
    FC_M_EVENT,
    FC_M_FUNC,
    FC_M_KERN,
    FC_M_MOD,
    FC_M_GRAPH,
    FC_M_NODE,
    FC_M_EXEC,
};

/* ---- handles ------------------------------------------------------------------------- */
void fc_reg_add(const void *p);
void fc_reg_del(const void *p);
int fc_reg_has(const void *p);
static inline int fc_valid(const void *p, uint32_t magic)
{
    return p && fc_reg_has(p) && *(const uint32_t *)p == magic;
}

/* ---- counters ------------------------------------------------------------------------ */
#define FC_COUNTERS(X)                                                                         \
    X(kernels_executed) X(eager_launches) X(captured_launches) X(graph_launches)              \
    X(graph_kernels_executed) X(graphs_created) X(graph_nodes_added) X(node_set_params)        \
    X(node_set_attributes) X(instantiations) X(exec_node_updates) X(exec_updates)              \
    X(graph_uploads) X(programmatic_edges)                                                     \
    X(streams_created) X(events_recorded) X(legacy_launches) X(attribute_sets)                 \
    X(stream_attr_gets) X(ctx_current_gets)                                                    \
    X(memcpys) X(host_funcs) X(syncs)                                                          \
    X(memset_nodes_added) X(memcpy_nodes_added) X(copy_node_set_params) X(exec_copy_node_updates) \
    X(graph_copies_executed)                                                                   \
    X(injected_failures) X(api_errors)                                                         \
    X(launcher_param_queries) X(launcher_instantiations)
enum fc_counter {
#define FC_CNT_ENUM(n) FC_C_##n,
    FC_COUNTERS(FC_CNT_ENUM)
#undef FC_CNT_ENUM
    FC_C_COUNT
};
extern atomic_ullong fc_cnt[FC_C_COUNT];
/* Set on a thread once it has launched a kernel eagerly: the launcher_* counters count the
 * calls such a thread makes (the library's worker makes them on a thread of its own). */
extern __thread int fc_t_launcher;
#define FC_COUNT(n) atomic_fetch_add_explicit(&fc_cnt[FC_C_##n], 1, memory_order_relaxed)

/* ---- entry checks -------------------------------------------------------------------- */
extern atomic_int fc_initialized, fc_forked, fc_nfail, fc_trace;
extern atomic_uintptr_t fc_hook; /* fakecuda_call_hook, or 0 */
int fc_fail_hit(const char *name);
void fc_trace_call(const char *name);
CUresult fc_err(CUresult r);   /* counts an error return */
/* A call in a fork child of a process that had initialised the fake. */
CUresult fc_forked_call(const char *name);

/* Every entry point starts with one of these. */
#define FC_ENTER_NOINIT()                                                                      \
    do {                                                                                       \
        uintptr_t fc_hook_ = atomic_load_explicit(&fc_hook, memory_order_acquire);            \
        if (fc_hook_)                                                                          \
            ((fakecuda_call_hook)fc_hook_)(__func__);                                          \
        if (atomic_load_explicit(&fc_trace, memory_order_relaxed))                            \
            fc_trace_call(__func__);                                                           \
        if (atomic_load_explicit(&fc_forked, memory_order_relaxed))                           \
            return fc_forked_call(__func__);                                                  \
        if (atomic_load_explicit(&fc_nfail, memory_order_relaxed) && fc_fail_hit(__func__))   \
            return fc_err(CUDA_ERROR_UNKNOWN);                                                \
    } while (0)
#define FC_ENTER()                                                                             \
    do {                                                                                       \
        FC_ENTER_NOINIT();                                                                     \
        if (!atomic_load_explicit(&fc_initialized, memory_order_acquire))                     \
            return fc_err(CUDA_ERROR_NOT_INITIALIZED);                                        \
    } while (0)

/* ---- kernels ------------------------------------------------------------------------- */
typedef struct fc_def {
    fakecuda_kernel_fn fn;
    int nparams;
    size_t off[FAKECUDA_MAX_PARAMS], sz[FAKECUDA_MAX_PARAMS];
    size_t size;                     /* bytes of the packed block */
    char name[512];                  /* real mangled names run to hundreds of characters */
} fc_def;

/* Function attributes in effect for a launch: CUfunction_attribute values, then the cache and
 * shared-memory configurations (FAKECUDA_ATTR_CACHE_CONFIG, _SHMEM_CONFIG). A launch or a
 * graph node takes a copy (the driver snapshots them), so a later change does not reach it. */
#define FC_NATTR (FAKECUDA_ATTR_PROGRAMMATIC + 1)
typedef struct fc_attrs {
    int v[FC_NATTR];
} fc_attrs;

/* The deprecated launch state of a function (cuFuncSetBlockShape, cuParamSet*, ...). */
typedef struct fc_legacy {
    int block[3];
    unsigned shared;
    unsigned psize;
    uint8_t params[4096];
} fc_legacy;

typedef struct fc_module fc_module;
typedef struct fc_func {
    uint32_t magic;                  /* FC_M_FUNC (a CUfunction) or FC_M_KERN (a CUkernel) */
    int alive;
    fc_def def;
    struct fc_ctx *ctx;              /* a CUfunction's context (current when registered) */
    fc_module *mod;
    struct fc_func *alias;           /* the CUkernel of a CUfunction, once asked for */
    struct fc_func *orig;            /* the CUfunction of such a CUkernel */
    /* under fc_attr_mu: */
    int attr[FC_NATTR];
    uint32_t attr_set;               /* bit i: attr[i] was set on this handle */
    fc_legacy *legacy;               /* allocated by the first deprecated-API call */
    struct fc_func *next;            /* in its module / in the free list */
} fc_func;

/* A live CUfunction or CUkernel (either kind when want is 0). */
fc_func *fc_func_get(const void *h, uint32_t want);

/* ---- function attributes (fc_attr.c) --------------------------------------------------- */
extern pthread_mutex_t fc_attr_mu;
/* The attributes a launch of f (a CUfunction or a CUkernel) would run with now: what
 * cuFuncSetAttribute set on the CUfunction, else what cuKernelSetAttribute set on its CUkernel,
 * else the default. */
void fc_attrs_now(const fc_func *f, fc_attrs *out);
/* Whether a launch with that much dynamic shared memory is allowed under a. */
int fc_attrs_allow_smem(const fc_attrs *a, unsigned smem);
/* The legacy launch state of f (created on first use; NULL: out of memory). Under fc_attr_mu. */
fc_legacy *fc_legacy_of(fc_func *f);

/* Packs kernelParams or the extra packed-buffer form into dst (def->size bytes). */
CUresult fc_pack_params(const fc_def *def, void **params, void **extra, uint8_t *dst);

/* ---- contexts and streams ------------------------------------------------------------ */
typedef struct fc_stream fc_stream;
typedef struct fc_ctx {
    uint32_t magic;
    int id;
    int primary;
    int destroyed;
    pthread_mutex_t mu;              /* the stream list */
    fc_stream *streams;
    fc_stream *legacy;
    fc_stream *rec;                  /* hidden stream of cuCtxRecordEvent (under mu) */
    struct fc_ctx *next;
} fc_ctx;

fc_ctx *fc_current_ctx(void);
/* The current context, or the error (not yet counted) a call needing one returns. */
CUresult fc_need_ctx(fc_ctx **out);
void fc_for_each_ctx(void (*fn)(fc_ctx *, void *), void *arg);

enum fc_skind { FC_S_REGULAR, FC_S_LEGACY, FC_S_PTDS, FC_S_HIDDEN };

struct fc_graph;
struct fc_node;

struct fc_stream {
    uint32_t magic;
    int id;
    fc_ctx *ctx;
    unsigned flags;
    int priority;
    int kind;
    int blocking;
    pthread_mutex_t mu;
    pthread_cond_t work_cv, done_cv;
    struct fc_item *head, *tail;
    atomic_ullong enq, done;         /* items enqueued / completed (FIFO: done is a prefix) */
    int started, dying, exited;
    pthread_t thr;
    uint64_t rng;
    /* stream capture (under mu) */
    atomic_int cap_status;           /* CUstreamCaptureStatus */
    int cap_mode;
    struct fc_graph *cap_graph;
    struct fc_node *cap_last;
    fc_stream *ctx_next;
    /* stream attributes (fc_sattr.c; under mu): the kinds kernels would see */
    CUaccessPolicyWindow apw;
    int sync_domain;
    CUlaunchMemSyncDomainMap domain_map;
    int sattr_init;                  /* the three above hold their defaults */
};

fc_stream *fc_stream_new_internal(fc_ctx *c, int kind, unsigned flags, int prio);
/* Waits for all work enqueued so far on every stream of c. */
void fc_ctx_sync(fc_ctx *c);
/* At exit: waits (at most that long) for all work of every context. */
void fc_drain_all(double seconds);
void fc_stream_config(unsigned delay_us, uint64_t seed, int reuse_handles);

/* CUDA_ERROR_INVALID_CONTEXT (not counted) when s is not of the calling thread's current
 * context: launches, event records and graph launches check it, as the driver does
 * (FAKECUDA_CHECK_CONTEXT=0: never). */
CUresult fc_check_current(const fc_stream *s);
void fc_check_current_config(int on);

/* The stream a call refers to; NULL with *err set when it is not valid. */
fc_stream *fc_stream_resolve(CUstream h, int ptsz, CUresult *err);

/* One kernel ready to run: what an item or a graph node holds. */
typedef struct fc_kcall {
    fakecuda_kernel_fn fn;
    unsigned grid[3], block[3];
    size_t size;
    uint8_t *blob;                   /* owned */
    fc_attrs attrs;                  /* snapshot taken when it was enqueued / made a node */
} fc_kcall;

/* Enqueues kernels on s, in order, as one atomic step (a graph launch). from_graph marks
 * them for the counters. Returns CUDA_SUCCESS or an error (nothing enqueued). */
CUresult fc_enqueue_kernels(fc_stream *s, const fc_kcall *k, int n, int from_graph);
/* A no-op item on s (graph upload). */
CUresult fc_enqueue_marker(fc_stream *s);

/* ---- graphs (fc_graph.c) ------------------------------------------------------------- */
typedef struct fc_knode {
    fc_def def;
    const void *origin;              /* the handle it was made from (identity only) */
    int is_kern;
    struct fc_ctx *fctx;             /* a CUfunction's own context: launches must match */
    fc_ctx *ctx;
    unsigned grid[3], block[3], smem;
    uint8_t *blob;                   /* def.size bytes, owned */
    int coop, priority;
    const fc_func *fn_obj;           /* for the attribute snapshot at instantiation */
    fc_attrs attrs;                  /* snapshot: node creation, then instantiation */
} fc_knode;

typedef struct fc_node {
    uint32_t magic;
    struct fc_graph *g;
    int index;
    fc_knode k;
    struct fc_node *next;
} fc_node;

typedef struct fc_graph {
    uint32_t magic;
    pthread_mutex_t mu;
    fc_node *first, *last;
    int n;
} fc_graph;

fc_graph *fc_graph_new(void);
void fc_graph_free(fc_graph *g);
/* Appends a kernel node after `after` (may be NULL) to g; used by capture. */
CUresult fc_graph_append_kernel(fc_graph *g, fc_node *after, const fc_func *f, const void *h,
                                fc_ctx *ctx, const unsigned grid[3], const unsigned block[3],
                                unsigned smem, void **params, void **extra, fc_node **out);

/* ---- memory (fc_stream.c) and copy nodes (fc_graph.c) ----------------------------------- */
/* The kind of the live allocation holding [p, p+n): 0 device, 1 pinned host, 2 managed; -1
 * none (pageable host memory). */
int fc_mem_kind(uintptr_t p, size_t n);
/* Sets n elements of elem (1, 2, 4) bytes at dst to v. */
void fc_memset_run(void *dst, uint32_t v, unsigned elem, size_t n);
/* Whether fn is the body of a memset or memcpy graph node (run as a kernel item in stream
 * order, counted as a copy). */
int fc_is_copy_fn(fakecuda_kernel_fn fn);

/* ---- procaddr (fc_procaddr.c) -------------------------------------------------------- */
void *fc_proc_lookup(const char *name, int cudaVersion, cuuint64_t flags, int *found_other);

#endif
