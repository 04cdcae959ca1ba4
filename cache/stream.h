/* Per-stream state (what a stream holds, has learned, its templates) and finding it. */
/* One state per stream the application launches on: a created stream (keyed by its handle),
 * the legacy default stream of a context, or a thread's per-thread default stream in a
 * context. Each has its own lock (locking and lock order: DESIGN.md, "Threads and locks"). */
#ifndef AG_STREAM_H
#define AG_STREAM_H

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <uthash.h>

#include "policy/benefit.h"
#include "policy/pieces.h"
#include "cache/process.h"
#include "cache/gpumark.h"
#include "cache/lock.h"
#include "cache/learn.h"
#include "cache/shape.h"

enum ag_skind { AG_SK_REGULAR, AG_SK_LEGACY, AG_SK_PTDS, AG_SK_DEAD = 0xff };

/* One context's bookkeeping for the legacy-default-stream rule. */
typedef struct ag_ctxinfo {
    CUcontext ctx;
    struct ag_stream *legacy;        /* its legacy stream state, once seen */
    /* "open": a stream holds launches or has a learning segment under way. Work on the
     * legacy stream and on a blocking stream are ordering points for each other, so each
     * side's open segments end before the other side goes on. */
    atomic_int legacy_open;          /* the legacy stream is open */
    atomic_int blocking_open;        /* blocking streams (not legacy) that are open */
} ag_ctxinfo;

/* One node of a template: the shape every occurrence shares, and the argument values the
 * instantiated graph currently holds. */
typedef struct ag_node {
    ag_shape shape;
    uint64_t shape_hash;
    const ag_layout *lay;
    CUlaunchAttribute *attrs;        /* shape.nattrs, in its template's block (AG_KIND_ATTRS):
                                      * a built node's, copied when built (graph.c) */
    CUgraphNode node;                /* in its piece's graph; NULL until that is built */
    uint8_t *exec_vals, *graph_vals; /* lay->size bytes each, in its template's block: the
                                      * exec's and the template's */
    uint64_t exec_vhash;
    ag_dims exec_dims, graph_dims;   /* launch dimensions, the same way */
    void *exec_fn, *graph_fn;        /* the function, a member of shape.fn's class (params.h),
                                      * the same way */
    uint64_t prev_vhash;             /* exec_vhash before the exec's last change of this node */
    uint8_t *alt_vals;               /* the values of the piece's second exec (NULL until one is
                                      * made, then malloc'd; swapped with exec_vals when the two
                                      * execs swap, so either may be the block's) */
    uint64_t alt_vhash;
    ag_dims alt_dims;
    void *alt_fn;
    uint8_t told;                    /* its new values were described in the debug log (update.c) */
} ag_node;

/* One piece of a template's graph (pipelined replay: policy/pieces.h): launched as soon as
 * its launches are held. */
typedef struct ag_piece {
    CUgraph graph;
    CUgraphExec exec;                /* NULL until built (or after eviction/failure) */
    uint64_t upd_ns[2];              /* measured update + launch time, per path (EWMA) */
    uint32_t upd_n[2];               /* samples of each: 0 node by node, 1 whole graph */
    uint8_t pending;                 /* a build is with the worker (worker.h) */
    uint8_t fresh;                   /* built by the worker, not launched yet: its first launch
                                      * (after an upload on another stream) is no sample */
    uint32_t nkern;                  /* its kernel nodes (not memsets, not copies): set when
                                      * built, counted per replay (fate.replayed) */
    CUgraphExec alt;                 /* a second exec of the graph, holding the values before the
                                      * last change (buffers that alternate: ping-pong): replayed,
                                      * with no update, when the held values are its own */
    uint8_t flips;                   /* updates in a row that took every changed node back to
                                      * its value before the previous update */
    uint8_t alt_misses;              /* changes in a row that matched neither exec */
} ag_piece;

/* A sequence of launch shapes seen often enough, and its graph. */
typedef struct ag_tmpl {
    uint64_t key;                    /* fingerprint of the sequence */
    uint64_t first_hash;
    uint32_t len;
    uint8_t has_ext;                 /* another template extends this one: wait before replay */
    uint8_t related;                 /* it extends another or another extends it: one piece */
    uint8_t from_profile;
    uint8_t build_here;              /* built where it is held, not by the worker: the driver
                                      * refused a copy node of the worker's (graph.c) */
    uint8_t planned;                 /* pieces planned from measured costs (else one piece) */
    uint8_t plan_queued;             /* the plan saw ben.queued so (GPU busy: one piece) */
    uint8_t plan_guessed;            /* the plan guessed the graph launch's cost (tmpl.c) */
    uint8_t tail;                    /* trailing read-backs (device-to-host copies) that go out
                                      * eagerly after the last piece's graph (fill.h,
                                      * ag_piece_gend): a copy node costs the GPU ~6 us more
                                      * than an eager copy, and before a sync the GPU's time is
                                      * what the program waits for */
    uint64_t plan_held_ns;           /* the host time per held launch the plan used */
    ag_node *nodes;
    uint8_t *block;                  /* one allocation for every node's attributes and values:
                                      * a template made at an ordering point costs two
                                      * allocations, not two per launch (tmpl.c) */
    size_t block_size;
    uint32_t npieces;
    uint32_t ends[AG_MAX_PIECES];    /* piece p is nodes [p ? ends[p-1] : 0, ends[p]) */
    ag_piece pieces[AG_MAX_PIECES];
    uint32_t nbuilt;                 /* pieces with an exec (the template is on the LRU list) */
    uint32_t gen;                    /* bumped whenever its graphs are dropped: a build the
                                      * worker finishes for an older generation is thrown away */
    size_t mem_est;
    ag_benefit ben;
    ag_benefit *bp;                  /* the policy it follows: its own ben, or its variant
                                      * group's (the first variant's: tmpl.c, join_variants) */
    uint32_t mark_seq;               /* occurrences, for GPU marks (gpumark.h) */
    uint32_t broken[4];              /* occurrences broken off: divergence, time-out, copy,
                                      * graph call failures (enum ag_tmpl_break) */
    uint64_t replays, eager_runs;
    uint32_t credit;                 /* launches its occurrences sent, up to two occurrences'
                                      * worth: what pays for false starts (ag_hold_abort) */
    uint64_t attr_drop_replays;      /* replays when a function attribute last dropped its
                                      * graphs, and drops in a row that came before its graphs
                                      * paid back (order.c, attr_churn) */
    uint8_t attr_churn;
    uint32_t attr_offs;              /* back-offs it took for it (the report's reason) */
    void *nvtx_name;                 /* NVTX registered string, once built */
    struct ag_pseq *prof;            /* provisional: a profile sequence being held for the first
                                      * time (nodes unknown until it completes) */
    struct ag_tmpl *next_first;      /* templates with the same first shape */
    struct ag_stream *st;            /* its stream (set when built; for eviction) */
    struct ag_tmpl *lru_prev, *lru_next; /* built templates of every stream, most recently
                                          * replayed first (graph.c); under its stream's lock
                                          * and the list's */
    struct ag_tmpl *next_all;
} ag_tmpl;

/* Whether T's next occurrence should be a graph: its group's policy says so and its own gate
 * is open (policy/benefit.h, ag_benefit_gate_shut; for a template that follows no other, its
 * own policy is its group's, never shut where that one wants graphs). */
static inline int ag_tmpl_wants_graph(const ag_tmpl *T)
{
    return ag_benefit_want_graph(T->bp) && !ag_benefit_gate_shut(&T->ben);
}

/* The first of T's variant group (T itself when it has none): whose ag_benefit T follows. */
static inline ag_tmpl *ag_tmpl_lead(ag_tmpl *T)
{
    return (ag_tmpl *)(void *)((char *)T->bp - offsetof(ag_tmpl, ben));
}

typedef struct ag_bucket {
    uint64_t first_hash;
    ag_tmpl *head;
    UT_hash_handle hh;
} ag_bucket;

typedef struct ag_skey {
    CUstream stream;                 /* handle; CU_STREAM_LEGACY / _PER_THREAD for defaults */
    CUcontext ctx;                   /* defaults only */
    uint64_t thread;                 /* per-thread default only */
} ag_skey;

typedef struct ag_stream {
    /* The first cache line: everything a launch reads when it passes through (resting, or no
     * sequence starts with it) and an ordering point reads when nothing is held. */
    ag_lock_t mu;
    uint8_t kind, blocking;
    uint8_t open;                    /* counted in ci->legacy_open / blocking_open */
    uint8_t join_pending;            /* per-thread streams: see below */
    uint32_t nheld;                  /* what is held back: launches [pos, pos + nheld) of
                                      * template `cand` (an occurrence is under way while cand
                                      * is set; between pieces nothing is held) */
    uint8_t tokens_out;              /* threads may hold rest tokens for this stream (rest.h) */
    uint16_t err;                    /* a held launch that failed when it went out: returned at
                                      * the next call on this stream, as the driver returns an
                                      * error at a sync (a CUresult; 0: none) */
    ag_ctxinfo *ci;
    ag_rec *held;                    /* max_nodes; NULL until the first launch */
    ag_tmpl *cand;
    ag_learn learn;                  /* what is learned; its first fields end the line */
    /* the rest: first what a learning launch reads */
    uint64_t first_bits[4];          /* bit (first_hash & 255) of every template: most launches
                                      * start none, and this says so without a lookup */
    uint32_t ntmpl;
    uint8_t sattr;                   /* stream attributes a kernel node would not inherit are
                                      * set: its launches are not graphed (graph.h) */
    ag_skey key;
    CUstream handle;                 /* the application's stream (canonical handle) */
    CUstream issue;                  /* where held work goes out: handle, or `side` below */
    CUcontext ctx;
    uint64_t hold_t0;                /* when the held piece's first launch was held */
    uint32_t held_cap;               /* room in `held` (at most max_nodes) */
    uint64_t occ_t0;                 /* when the occurrence under way began */
    uint64_t last_thread;            /* ag_thread_id() of its last learning launch */
    uint32_t pos;                    /* launches of `cand` already replayed (whole pieces) */
    uint32_t piece;                  /* the piece being held */
    uint8_t occ_built;               /* the occurrence under way built a piece's graph */
    /* A divergence into a sibling (ag_switch_candidate): the launches so far begin template
     * `sibling` too, which then ran the occurrence (not cand's fault: ag_hold_abort). When
     * pieces of cand went out first, the learner sees only the rest: `sib_done` is told the
     * occurrence when that rest closes as sib_done's tail (ag_on_closed), from sib_t0. */
    ag_tmpl *sibling, *sib_done;
    uint64_t sib_t0;
    uint32_t sib_pos;
    ag_tmpl *eager_tmpl;             /* the template whose eager occurrence the learning launches
                                      * seem to be (fate.c; only read while the state lives) */
    uint32_t eager_pos;              /* its launches so far */
    ag_marks *marks;                 /* GPU marks of trials (gpumark.h); NULL until needed */
    uint8_t *arena;                  /* parameter blocks and attributes of held launches */
    size_t arena_cap, arena_used;
    void **ptrs;                     /* scratch kernelParams */
    uint32_t ptrs_cap;               /* at least the nparams of every held launch (reserved
                                      * when held: a flush allocates nothing) */
    /* per-thread default streams only: another thread cannot issue onto this thread's
     * per-thread stream, so a flush from elsewhere goes to `side`, ordered after `ev_start`
     * (recorded when the hold began) and joined back by the owner through `ev_side` */
    CUevent ev_start, ev_side;
    CUstream side;
    /* templates */
    ag_bucket *buckets;
    ag_tmpl *tmpls;                  /* all templates of this stream */
    /* the registry */
    UT_hash_handle hh;
    struct ag_stream *next, *prev;
} __attribute__((aligned(64))) ag_stream;

_Static_assert(offsetof(ag_stream, learn) + offsetof(ag_learn, min_repeats) <= 64,
               "the fields a passing launch reads fit the first cache line");
_Static_assert(offsetof(ag_stream, learn) + offsetof(ag_learn, t0) <= 128,
               "the learner's per-launch fields fit the second");

/* ---- finding the state of a stream ---------------------------------------------------- */

/* Looked up on every launch: a thread-local entry and cache in front of the shared table,
 * invalidated by ag_hot.registry_gen; retired states are emptied, never freed (DESIGN.md,
 * "Threads and locks"). */

/* The lookup behind the ones below; `create` says when a state is made for a stream that has
 * none: */
enum ag_lookup {
    AG_LOOKUP_FIND,                  /* never */
    AG_LOOKUP_MAKE,                  /* always (the launch path, once the watch says so) */
    AG_LOOKUP_ORDER,                 /* only where the legacy-stream rule may concern the stream
                                      * (an ordering point or a copy: watch.h) */
};
ag_stream *ag_stream_lookup(CUstream s, int ptsz, enum ag_lookup create);

/* The created stream this thread looked up last: programs mostly launch on one stream in a
 * row, and this answers them in a few instructions, before any other cache. */
typedef struct ag_stream_last {
    CUstream stream;
    unsigned long gen;
    ag_stream *st;
} ag_stream_last;
extern __thread ag_stream_last ag_t_last __attribute__((tls_model("initial-exec")));

static inline ag_stream *ag_stream_last_hit(CUstream s)
{
    if ((uintptr_t)s > (uintptr_t)CU_STREAM_PER_THREAD && ag_t_last.stream == s &&
        ag_t_last.gen == atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire))
        return ag_t_last.st;
    return NULL;
}

/* The state for stream s as passed to an ordering point or a copy through a plain (ptsz 0) or
 * per-thread (ptsz 1) entry point. A stream without state (one the watch keeps stateless until
 * a function launched on it repeats, cache/watch.h) holds nothing and is not open, so it gets
 * one only where the legacy-stream rule may have something to flush for it; NULL otherwise,
 * and when the driver does not know the stream (the call then passes through and gets the
 * driver's error), or when out of memory. */
static inline ag_stream *ag_stream_of(CUstream s, int ptsz)
{
    ag_stream *st = ag_stream_last_hit(s);
    return st ? st : ag_stream_lookup(s, ptsz, AG_LOOKUP_ORDER);
}

/* The same, but never creating a state (so never asking the driver about the stream): while
 * the application captures, such questions could invalidate its capture. */
static inline ag_stream *ag_stream_find(CUstream s, int ptsz)
{
    ag_stream *st = ag_stream_last_hit(s);
    return st ? st : ag_stream_lookup(s, ptsz, AG_LOOKUP_FIND);
}

/* Calls fn on every live state, under the registry lock (fn may lock the stream). */
void ag_streams_each(void (*fn)(ag_stream *, void *), void *arg);

/* Retires one state, or all of them (flushing is the caller's job); fn is applied to each,
 * under its lock, before it is marked dead. */
void ag_stream_retire(ag_stream *st, void (*empty)(ag_stream *));
void ag_streams_retire_all(void (*empty)(ag_stream *));
/* Retires the per-thread stream states of one thread, each flushed first (under its lock) by
 * `flush`; returns how many. */
int ag_streams_retire_thread(uint64_t thread, void (*flush)(ag_stream *),
                             void (*empty)(ag_stream *));
/* The destructor of a thread that made per-thread stream states (flush.c). */
void ag_ptds_thread_exit(void *unused);

/* Allocates what a state needs for learning and holding (on its first launch). */
int ag_stream_prepare(ag_stream *st);
/* Makes the first state's memory ready now (spare.h): called once, as the engine starts. */
void ag_stream_spares(void);
/* Room for n pointers in st->ptrs (st->mu held); -1 when out of memory. */
int ag_stream_ptrs_reserve(ag_stream *st, uint32_t n);

extern atomic_int ag_nholding;       /* states holding launches, process-wide */
extern pthread_mutex_t ag_registry_mu;

/* Stream attributes that apply to kernels launched eagerly on the stream but that a graph's
 * kernel nodes would not inherit: a non-default access policy window or memory
 * synchronisation domain. Launches on such a stream are not graphed (st->sattr). Read when the
 * stream's state is prepared (its first launch) and after every cuStreamSetAttribute /
 * cuStreamCopyAttributes on it (ag_order_stream_attr_done). Under the stream's lock. */
void ag_stream_attrs_read(ag_stream *st);
/* A stream's attributes are about to be set (before the driver's call): from now on every new
 * state reads its own (until then none can have any). */
void ag_stream_attrs_touched(void);

#endif
