/* The simulator's cost table: what each driver call costs the host, what the GPU adds around
 * work, and the engine's own time per event (bench/costs/NAME.json, schema libautograph-costs/1;
 * docs/MODEL.md). All values in nanoseconds. */
#ifndef AG_SIMCOST_H
#define AG_SIMCOST_H

#include <stddef.h>

#define SIM_HOST_COSTS(X)                                                                      \
    X(launch) X(launch_ex) X(graph_launch_base) X(graph_launch_per_node)                       \
    X(graph_launch_per_updated_node)                                                           \
    X(exec_set_params_per_node) X(exec_update_base) X(exec_update_per_node) X(graph_add_node)  \
    X(instantiate_base) X(instantiate_per_node) X(upload_base) X(upload_per_node)              \
    X(graph_destroy) X(event_create) X(event_record) X(event_query) X(event_elapsed)           \
    X(stream_wait_event) X(stream_sync_empty) X(stream_query) X(ctx_get_current)               \
    X(stream_get_flags) X(stream_get_ctx) X(pointer_get_attribute) X(func_get_param_info)      \
    X(memcpy_htod_async_pinned) X(memcpy_dtoh_async_pinned) X(memcpy_dtoh_async_pageable)      \
    X(memset_async) X(memcpy_dtod_async)

#define SIM_GPU_COSTS(X)                                                                       \
    X(tiny_kernel) X(eager_kernel_gap) X(graph_kernel_gap) X(launch_latency)                   \
    X(graph_launch_latency) X(memset_small) X(memcpy_small_htod) X(memcpy_small_dtoh)          \
    X(graph_memset_gap) X(graph_memcpy_gap) X(tiny_kernel_span) X(tiny_kernel_idle)

/* Optional host keys: a table without them charges the plain keys' costs in their place. */
#define SIM_HOST_COSTS_OPT(X)                                                                  \
    X(exec_set_params_fn_per_node)      /* exec_set_params_per_node where the kernel node's \
                                         * function changes (a function class's member) */   \
    X(graph_launch_per_fn_updated_node) /* graph_launch_per_updated_node for such a node */ \
    X(exec_set_params_per_byte)         /* a kernel node's set, per byte of its parameter     \
                                         * block beyond the 16 of the plain key's kernel */  \
    X(graph_launch_per_updated_byte)    /* the same at the exec's next launch */              \
    X(graph_launch_per_node_byte)       /* every launch, per kernel node and byte beyond 16 */

/* Optional GPU keys: a table without them charges nothing for them. */
#define SIM_GPU_COSTS_OPT(X)                                                                   \
    X(graph_boundary_gap) /* what a graph launch queued right behind another graph on the same \
                           * stream adds on the GPU, beyond graph_kernel_gap (bench/costs.cu: \
                           * 64 launches of an 8-node chain against one 512-node chain) */ \
    X(graph_pdl_overlap)  /* how much earlier a kernel node reached by a programmatic edge   \
                           * starts than one reached by a full edge (bench/costs.cu: chains of \
                           * a kernel that waits, then triggers, each way) */

/* The engine's own host time (the simulator's section of the schema). */
#define SIM_ENGINE_COSTS(X)                                                                    \
    X(launch_rested)    /* a launch passed while learning rests */                             \
    X(launch_learning)  /* a launch shown to the learner (passed eagerly) */                   \
    X(launch_held)      /* a launch held (deep copy, match) */                                 \
    X(launch_other)     /* a launch passed for another reason (ungraphable, capture) */        \
    X(order_point)      /* an ordering point with something to do (a learning or holding  \
                         * stream) */                                                          \
    X(order_point_rested) /* one with nothing to do (orders.passed: resting, no state) */     \
    X(copy_offer)       /* an async copy or memset offered to the engine */                    \
    X(replay_base)      /* the engine's side of one piece's replay (compare, bookkeeping) */   \
    X(replay_per_node)                                                                         \
    X(build_per_node)   /* the engine's side of building one node (beyond the driver's) */   \
    X(first_launch)     /* a process's first launch: its whole own time, cold (code and data \
                         * not yet in the caches), instead of its kind's constant above */

/* Optional engine keys: a table without them charges nothing for them (only measured numbers
 * go into the tables). */
#define SIM_ENGINE_COSTS_OPT(X)                                                                \
    X(first_launch_func) /* the first launch of each further kernel function: its whole own \
                          * time, instead of its kind's constant */ \
    X(launch_watched)    /* a launch on a stream without state, its function not seen there \
                          * before (cache/watch.h); absent, launch_learning is charged */ \
    X(first_learning_launch) /* a stream's first learning launch (its state made and prepared, \
                              * the function's layout first asked): its whole own time, cold, \
                              * instead of launch_learning */ \
    X(tmpl_per_node)     /* making a template (where its last sighting closed), per launch \
                          * in it */ \
    X(cold_gap)          /* the program's own host time (ns) since the engine's last call   \
                          * from which a call finds the engine's lines out of the caches    \
                          * (cuBLAS's host work between two launches, say) */ \
    X(cold_call)         /* what such a call costs over its kind's constant (the constants \
                          * above are measured in loops that keep them in the caches) */

typedef struct sim_costs {
#define SIM_COST_FIELD(k) double k;
    struct { SIM_HOST_COSTS(SIM_COST_FIELD) SIM_HOST_COSTS_OPT(SIM_COST_FIELD) } host;
    struct { SIM_GPU_COSTS(SIM_COST_FIELD) SIM_GPU_COSTS_OPT(SIM_COST_FIELD) } gpu;
    struct { SIM_ENGINE_COSTS(SIM_COST_FIELD) SIM_ENGINE_COSTS_OPT(SIM_COST_FIELD) } engine;
#undef SIM_COST_FIELD
    char path[512];
    char device[128];
} sim_costs;

/* Loads a cost file: every key of host_ns, gpu_ns and engine_ns must be there (a missing one is
 * an error, not a silent zero), but for the optional ones (absent: 0). 0, or -1 with a message
 * in err. */
int sim_costs_load(const char *path, sim_costs *c, char *err, size_t errlen);

#endif
