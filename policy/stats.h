/* Counters of what libautograph did, kept per thread (no atomics, no locks on the hot path)
 * and summed at exit; printed with AUTOGRAPH_STATS=1 and written as JSON to a .json path. */
#ifndef AG_STATS_H
#define AG_STATS_H

#include <stdint.h>

/* name, one line of doc. The first six follow enum ag_entry. launches.learning_rested and
 * launches.eager are not counted as such: they are sums of fates (AG_FATES, below), made by
 * ag_stats_sum, so that a launch that passes is counted once. */
#define AG_STATS(X)                                                                            \
    X(LAUNCH, "launches.cuLaunchKernel", "launches seen through cuLaunchKernel")             \
    X(LAUNCH_PTSZ, "launches.cuLaunchKernel_ptsz", "... through cuLaunchKernel_ptsz")         \
    X(EX, "launches.cuLaunchKernelEx", "... through cuLaunchKernelEx")                        \
    X(EX_PTSZ, "launches.cuLaunchKernelEx_ptsz", "... through cuLaunchKernelEx_ptsz")         \
    X(COOP, "launches.cuLaunchCooperativeKernel", "... through cuLaunchCooperativeKernel")    \
    X(COOP_PTSZ, "launches.cuLaunchCooperativeKernel_ptsz",                                    \
      "... through cuLaunchCooperativeKernel_ptsz")                                            \
    X(RESTED, "launches.learning_rested", "launches passed untouched while learning rested "   \
                                          "(counted in launches.eager too)")                   \
    X(PASSED, "launches.eager", "launches passed straight to the driver")                    \
    X(HELD, "launches.held", "launches held back as part of a known sequence")               \
    X(REPLAYED, "launches.replayed", "held launches that ran inside a graph")                \
    X(FLUSHED, "launches.flushed_eager", "held launches that went out eagerly after all")     \
    X(OPAQUE, "launches.ungraphable", "launches that cannot go into a graph (attributes, "   \
                                          "filters, unknown layout)")                          \
    X(CAPTURED, "launches.in_app_capture", "launches while the application captures a graph") \
    X(PAUSED, "launches.paused", "launches while the program paused the library "             \
                                 "(autograph_pause)")                                          \
    X(SEQ_SEEN, "sequences.seen", "distinct launch sequences counted")                       \
    X(SEQ_TEMPLATES, "sequences.templates", "sequences seen often enough to be graphed")     \
    X(SEQ_TEMPLATE_LAUNCHES, "sequences.template_launches", "launches in the templates made "  \
                                                            "(the replay model charges their " \
                                                            "making per launch)")              \
    X(RESTS, "learning.rests", "rests begun on streams where nothing repeated")              \
    X(GRAPH_BUILT, "graphs.built", "graphs built and instantiated")                          \
    X(GRAPH_LAUNCHES, "graphs.replays", "graph launches (replays)")                          \
    X(GRAPH_EVICTED, "graphs.evicted", "graphs destroyed to stay within the cache limits")   \
    X(GRAPH_CACHE_FULL, "graphs.cache_full", "replays refused because the cache was full")   \
    X(UPD_NONE, "updates.none", "replays with unchanged arguments: no update at all")        \
    X(UPD_NODE, "updates.per_node", "replays updated node by node")                          \
    X(UPD_NODE_NODES, "updates.per_node_nodes", "nodes updated node by node")                \
    X(UPD_WHOLE, "updates.whole_graph", "replays updated with one cuGraphExecUpdate")        \
    X(UPD_VARIANT, "updates.variant", "replays of a piece's second exec, which held the "  \
                                        "arguments already (ping-pong buffers): no update")   \
    X(GRAPH_VARIANTS, "graphs.variants", "second execs made for pieces whose arguments "       \
                                         "alternate")                                         \
    X(FAIL_BUILD, "failures.build", "graph builds that failed (sequence ran eagerly)")       \
    X(FAIL_UPDATE, "failures.update", "exec updates that failed (sequence ran eagerly)")     \
    X(FAIL_LAUNCH, "failures.launch", "graph launches that failed (sequence ran eagerly)")   \
    X(FAIL_EAGER, "failures.eager_launch", "held launches the driver refused on flush")      \
    X(FL_ORDER, "flushes.ordering_point", "holds flushed by an ordering point on the stream") \
    X(FL_CROSS, "flushes.other_stream", "holds flushed for the legacy default stream rule")  \
    X(FL_ALL, "flushes.global", "holds flushed by a free, unload or context-wide sync")      \
    X(FL_DIVERGE, "flushes.divergence", "holds flushed by a launch that left the sequence")  \
    X(FL_TIMEOUT, "flushes.timeout", "holds flushed after AUTOGRAPH_MAX_HOLD_US")            \
    X(FL_EXIT, "flushes.exit_or_fork", "holds flushed at exit or fork")                      \
    X(FL_REDIRECT, "flushes.side_stream", "per-thread-stream holds another thread flushed "    \
                                          "through a side stream")                             \
    X(POLICY_ON, "policy.graph_wins", "trials in which replay beat eager")                   \
    X(POLICY_OFF, "policy.eager_wins", "trials in which eager was as fast: graphing off")    \
    X(POLICY_VARIANT, "policy.variants_trusted", "sequences put on without a trial of "      \
                                                 "their own: a variant (the same first "      \
                                                 "launch, about as long) won its trial")       \
    X(POLICY_VARIANT_JOIN, "policy.variants_joined", "sequences made to follow an older "      \
      "variant's policy (one trial for a decode step's variants)")                            \
    X(PROFILE_LOADED, "profile.loaded", "sequences loaded from AUTOGRAPH_PROFILE")           \
    X(PROFILE_USED, "profile.used", "loaded sequences used")                                 \
    X(INVALIDATIONS, "cache.invalidations", "caches dropped for unloads or context teardown") \
    X(UNG_ATTR, "ungraphable.attribute", "of launches.ungraphable: an attribute or launch "   \
                                         "config a graph node cannot hold")                    \
    X(UNG_PSIZE, "ungraphable.param_size", "... parameters larger than a node takes")        \
    X(UNG_DENIED, "ungraphable.denied_name", "... name refused by AUTOGRAPH_ALLOW / DENY")   \
    X(UNG_LAYOUT, "ungraphable.unknown_layout", "... the driver could not describe the "     \
                                                "parameters")                                  \
    X(FL_COPY, "flushes.copy", "of flushes.ordering_point: by a copy or memset")              \
    X(POLICY_HOST_BOUND, "policy.host_bound", "probes that found the host the bottleneck: "  \
                                              "a trial follows")                               \
    X(POLICY_GPU_BOUND, "policy.gpu_bound", "probes that found the GPU behind the host: "    \
                                            "eager, no graph built, probed again later")       \
    X(POLICY_WHOLE, "policy.whole_graph", "sequences planned as one piece because the GPU "  \
                                          "was busy with earlier work when holds began")       \
    X(POLICY_ABORT_OFF, "policy.abort_backoffs", "sequences turned off for breaking off "    \
                                                 "too often (the back-off doubles each time)") \
    X(POLICY_ATTR_OFF, "policy.attr_backoffs", "sequences turned off because attribute "      \
                                               "changes kept dropping their graphs before "    \
                                               "they paid back (the back-off doubles)")         \
    X(WATCHED, "launches.watched", "of launches.eager: passed on a stream without state, "    \
                                   "their function not seen on it before (nothing learned)")   \
    X(STREAMS, "streams.states", "stream states made (a stream gets one once a function "    \
                                 "launched on it repeats, or for the legacy-stream rule)")    \
    X(SPARES, "streams.spares", "of a stream state's two first blocks (the state, its held "  \
                                "launches' room), those made ready at cuInit: the first "     \
                                "state's")                                                    \
    X(SPARES_TABLES, "learning.spares", "blocks made ready at cuInit that the first learning "  \
                                        "launches' tables took (the registry's, the layouts', " \
                                        "the sightings' and their first entries)")              \
    X(ORDER_PASSED, "orders.passed", "stream ordering points with nothing to do: the stream " \
                                     "rests, or has no state")                                \
    X(WORKER_BUILDS, "worker.builds", "of graphs.built: built on the worker thread while "     \
                                      "their sequence ran eagerly")                            \
    X(WORKER_COPY_REFUSED, "worker.copy_refused", "sequences built where held from then on: "  \
                                                  "the driver refused the worker a copy node") \
    X(WORKER_DROPPED, "worker.dropped", "builds the worker threw away or never began: graphs " \
                                        "dropped meanwhile, stream retired, unload, exit")     \
    X(WORKER_WAKE_ORDER, "worker.wakes_ordering", "worker woken for layout probes where the "   \
                                                  "host waits (a sync, a synchronous copy)")   \
    X(WORKER_WAKE_LAUNCH, "worker.wakes_launch", "worker woken for layout probes in a launch: " \
                                                 "no wait for the GPU in 32 sightings")        \
    X(LAYOUT_AT_FIRST, "layouts.at_first_launch", "functions probed at their first "       \
                                                   "launch: named as a class already probed")  \
    X(WATCHDOG_TICKS, "watchdog.ticks", "times the hold watchdog woke to look for holds "   \
                                        "that outlived AUTOGRAPH_MAX_HOLD_US")               \
    X(LAYOUT_LOCKED, "layouts.table_lookups", "layout lookups in the shared table: a "      \
                                              "function's first sightings on a thread, not "   \
                                              "every launch while its probe is awaited")       \
    X(COPY_HELD, "copies.held", "of launches.held: async memsets and copies (not launches)")   \
    X(COPY_REPLAYED, "copies.replayed", "of launches.replayed: memsets and copies")            \
    X(COPY_FLUSHED, "copies.flushed_eager", "of launches.flushed_eager: memsets and copies")   \
    X(COPY_AFTER_GRAPH, "copies.after_graph", "of copies.flushed_eager: read-backs ending a "  \
                                              "sequence, issued right after its graph")       \
    X(ATTR_DROPS, "cache.attr_drops", "graphs dropped: a function in them had an attribute "   \
                                      "changed")                                               \
    AG_FATES(X)

/* Where every kernel launch went (docs/STATS.md, "fates"): each launch of the six entry points
 * is counted once, under one fate, where its fate is decided -- a held launch when it leaves,
 * replayed or flushed eagerly -- so that the fates sum to the launches.cuLaunchKernel*
 * counters once nothing is held. Async memsets and copies are not launches (copies.*).
 * launches.eager and launches.learning_rested are sums of fates (ag_stats_sum): the launch
 * path counts each launch once. */
#define AG_FATES(X)                                                                            \
    X(FATE_REPLAYED, "fate.replayed", "launches that ran inside a graph (held, then replayed)") \
    X(FATE_EAGER_LEARNING, "fate.eager_learning", "passed while the stream learns: no "       \
                                                  "template goes on with it (launches.watched "\
                                                  "included)")                                 \
    X(FATE_EAGER_POLICY, "fate.eager_policy", "passed in an occurrence of a template eager by " \
                                              "policy (until its payback, probe, a trial's "   \
                                              "eager turn, eager won, GPU-bound, back-off)")   \
    X(FATE_REST_NO_REPEAT, "fate.rested_no_repeat", "passed while learning rested: almost "   \
                                                    "nothing graphable repeated in the "       \
                                                    "learner's last window of launches")       \
    X(FATE_REST_BACKOFF, "fate.rested_backoff", "passed while learning rested: the stream's " \
                                                "only sequence is eager by policy (its "       \
                                                "back-off)")                                   \
    X(FATE_BUILDING, "fate.building", "held, then issued eagerly while the worker builds "    \
                                      "their piece's graph")                                   \
    X(FATE_DIVERGED, "fate.diverged", "held, then flushed eagerly: a launch or copy left the "\
                                      "sequence")                                              \
    X(FATE_UNGRAPHABLE, "fate.ungraphable", "passed: no graph can take it (launches."         \
                                            "ungraphable, by cause in ungraphable.*)")         \
    X(FATE_TIMEOUT, "fate.hold_timeout", "held, then flushed eagerly by the hold watchdog")   \
    X(FATE_ORDER, "fate.ordering_point", "held, then flushed eagerly by an ordering point "    \
                                         "(sync, event, copy, free, other stream, exit) "      \
                                         "before its template completed")                      \
    X(FATE_GRAPH_FAIL, "fate.graph_failure", "held, then flushed eagerly: a graph build, "    \
                                             "update or launch failed")                        \
    X(FATE_CACHE_FULL, "fate.cache_full", "held, then flushed eagerly: the cache limits "     \
                                          "refused the graph")                                 \
    X(FATE_CAPTURE, "fate.app_capture", "passed while the application captured a graph")      \
    X(FATE_PAUSED, "fate.paused", "passed while the program paused the library "              \
                                  "(autograph_pause)")                                         \
    X(FATE_OFF, "fate.engine_off", "passed with the engine off (AUTOGRAPH_DISABLE, a trace "  \
                                   "recorded, exiting, a fork child)")                         \
    X(FATE_NO_STATE, "fate.no_state", "passed without a stream state: none could be made "    \
                                      "(out of memory, a stream the driver does not know) "    \
                                      "or it was retired meanwhile")                           \
    X(FATE_NOT_HELD, "fate.not_held", "passed: a template wanted it, but it could not be "    \
                                      "held (out of memory, the stream's context not "         \
                                      "current, a per-thread stream's mark failed)")

enum ag_stat {
#define AG_STAT_ENUM(id, name, doc) AG_ST_##id,
    AG_STATS(AG_STAT_ENUM)
#undef AG_STAT_ENUM
    AG_ST_COUNT
};

/* The fates are the last counters, in AG_FATES order. */
#define AG_ST_FATE_FIRST AG_ST_FATE_REPLAYED
#define AG_ST_FATE_END AG_ST_COUNT
_Static_assert(AG_ST_FATE_NOT_HELD + 1 == AG_ST_COUNT, "the fates come last");
_Static_assert(AG_ST_FATE_REST_BACKOFF == AG_ST_FATE_REST_NO_REPEAT + 1,
               "the rest fates follow enum ag_rest_why (cache/learn.h)");

typedef struct ag_stat_block {
    uint64_t c[AG_ST_COUNT];
    struct ag_stat_block *next;
} ag_stat_block;

extern __thread ag_stat_block *ag_tstats __attribute__((tls_model("initial-exec")));
ag_stat_block *ag_stats_thread_block(void);

/* Only the owning thread writes its block; readers at exit see whole words. */
static inline void ag_stat_add(enum ag_stat id, uint64_t n)
{
    ag_stat_block *b = ag_tstats;
    if (__builtin_expect(!b, 0) && !(b = ag_stats_thread_block()))
        return;
    __atomic_store_n(&b->c[id], __atomic_load_n(&b->c[id], __ATOMIC_RELAXED) + n,
                     __ATOMIC_RELAXED);
}
#define ag_stat_inc(id) ag_stat_add(id, 1)

/* Sum over all threads, past and present (launches.learning_rested and launches.eager made
 * from the fates). */
void ag_stats_sum(uint64_t out[AG_ST_COUNT]);
/* Whether a fate is that of a launch passed to the driver as the application made it, not
 * held and not passed while learning rested (launches.eager is their sum, with the rests). */
int ag_fate_passes(int fate);
extern const char *const ag_stat_names[AG_ST_COUNT];
extern const char *const ag_stat_docs[AG_ST_COUNT];

/* Why a sequence's occurrences did not run as a graph, counted per sequence (schema 2).
 * id, JSON name, unit of the process-wide count (see ag_stats_report). */
#define AG_WHYS(X)                                                                             \
    X(DIVERGENCE, "divergence", "holds")                                                       \
    X(ATTRIBUTE, "ungraphable_attribute", "launches")                                          \
    X(PARAM_SIZE, "ungraphable_param_size", "launches")                                        \
    X(DENIED, "ungraphable_denied_name", "launches")                                           \
    X(LAYOUT, "ungraphable_unknown_layout", "launches")                                        \
    X(COPY, "copy", "holds")                                                                   \
    X(HOLD_TIMEOUT, "hold_timeout", "holds")                                                   \
    X(GRAPH_API, "graph_api_failure", "calls")                                                 \
    X(EAGER_FASTER, "eager_faster", "trials")                                                 \
    X(ATTR_CHURN, "attribute_churn", "back-offs")

enum ag_why {
#define AG_WHY_ENUM(id, name, unit) AG_WHY_##id,
    AG_WHYS(AG_WHY_ENUM)
#undef AG_WHY_ENUM
    AG_WHY_COUNT
};
extern const char *const ag_why_names[AG_WHY_COUNT];

/* A sequence's state in schema 2 ("status" in the JSON). */
enum ag_seq_status {
    AG_SEQ_UNSET,           /* not filled: derived from the schema-1 `state` */
    AG_SEQ_GRAPHED,         /* "graphed": replayed as a graph */
    AG_SEQ_EAGER_POLICY,    /* "eager_policy": eager because eager measured as fast */
    AG_SEQ_OFF_FAILURES,    /* "off_failures": off after graph failures or divergences */
    AG_SEQ_NEVER_GRAPHABLE, /* "never_graphable": holds a launch a graph cannot take */
    AG_SEQ_TRIAL,           /* "trial": still being measured */
    AG_SEQ_STATUS_COUNT
};
extern const char *const ag_seq_status_names[AG_SEQ_STATUS_COUNT];

#define AG_SEQ_KERNELS 16

/* One sequence in the report (the engine picks the top ones). Zero the struct, then fill
 * what is known: every schema-2 field left 0 / NULL is written as unknown or derived. */
typedef struct ag_seq_report {
    /* schema 1 */
    uint64_t key;
    uint32_t len;
    uint64_t replays, eager_runs;
    const char *state;            /* "graph", "eager", "trial" */
    uint64_t med_graph_ns, med_eager_ns; /* median time from one occurrence to the next */
    char names[200];              /* the first kernel names, comma-separated */
    /* schema 2 */
    uint8_t status;               /* enum ag_seq_status; AG_SEQ_UNSET: from `state` */
    uint32_t nkernels;            /* kernel[] entries; 0: `names` split at commas */
    const char *kernel[AG_SEQ_KERNELS]; /* names in sequence order, a run of one kernel once;
                                         * must stay valid until ag_stats_report returns */
    uint64_t why[AG_WHY_COUNT];   /* reason counts (enum ag_why) */
    uint64_t host_graph_ns, host_eager_ns; /* host time to issue one occurrence (0: unknown) */
    uint64_t gpu_graph_ns, gpu_eager_ns;   /* GPU time of one occurrence (0: unknown) */
    uint64_t saved_ns;            /* estimated time saved (cache/report.c, tmpl_saved_ns) */
} ag_seq_report;

/* Prints the report on stderr (or AUTOGRAPH_LOG_FILE) and, when AUTOGRAPH_STATS is a .json
 * path (%p: pid, %h: host), writes it there (schema libautograph-stats/2, docs/STATS.md).
 * nseq: sequences known in all; saved_us: the estimated total saving. */
void ag_stats_report(const ag_seq_report *top, int ntop, uint64_t nseq, double saved_us);

/* Writes the JSON report to path; 0 or -1. ag_stats_report's second half, for tests. */
int ag_stats_write_json(const char *path, const ag_seq_report *top, int ntop, uint64_t nseq,
                        double saved_us);

#endif
