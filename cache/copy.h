/* Async memsets and copies inside held sequences: records, shapes, graph nodes, issuing; the
 * offer (offer.c). */
/* An async memset or 1D copy is offered to the engine before it becomes an ordering point
 * (interpose/hooks.c, class COPY of tools/gen_hooks.py). The engine takes it when it can be a
 * graph node: the record joins the held launches (or, while learning, the learner's sequence)
 * with a shape of its own -- the operation, the memory kinds of its pointers and its size --
 * and values -- pointers and the memset value -- updated in the exec like kernel arguments.
 * What cannot be a node (managed memory, an HtoD copy from pageable memory, kinds the
 * AUTOGRAPH_COPY_NODES switch keeps out) stays an ordering point, as before. */
#ifndef AG_COPY_H
#define AG_COPY_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

/* The entry points a copy record can come from (issued again with the same one, plain form). */
enum ag_copy_entry {
    AG_CP_MEMSET8,           /* cuMemsetD8Async */
    AG_CP_MEMSET16,          /* cuMemsetD16Async */
    AG_CP_MEMSET32,          /* cuMemsetD32Async */
    AG_CP_MEMCPY,            /* cuMemcpyAsync (unified addressing) */
    AG_CP_HTOD,              /* cuMemcpyHtoDAsync_v2 */
    AG_CP_DTOH,              /* cuMemcpyDtoHAsync_v2 */
    AG_CP_DTOD,              /* cuMemcpyDtoDAsync_v2 */
    AG_CP_COUNT
};

/* What a pointer is, from cuPointerGetAttribute. */
enum ag_mem { AG_MEM_NONE, AG_MEM_DEVICE, AG_MEM_PINNED, AG_MEM_PAGEABLE, AG_MEM_MANAGED,
              AG_MEM_COUNT };

/* AUTOGRAPH_COPY_NODES (the order of the option's words). */
enum ag_copy_mode { AG_COPY_OFF, AG_COPY_PINNED, AG_COPY_ALL };

/* One async memset or copy as the application made it. */
typedef struct ag_copy {
    uint8_t entry;           /* enum ag_copy_entry */
    uint8_t ptsz;            /* came through the _ptsz variant */
    void *real;              /* the real function of that exact variant */
    CUstream stream;
    CUdeviceptr dst, src;    /* host pointers as integers; src unused by memsets */
    uint32_t value;          /* memsets */
    size_t n;                /* memsets: elements; copies: bytes */
} ag_copy;

/* Offers op to the engine. Returns 1 when the engine dealt with it -- held it (*res is
 * CUDA_SUCCESS), or issued it itself as part of a learned sequence (*res is the driver's
 * answer); 0 when the caller must treat it as an ordering point on its stream and call the
 * driver, as for any other stream operation. */
int ag_copy_offer(const ag_copy *op, CUresult *res);

/* What p is (enum ag_mem): the classification the offer uses, remembered per thread until
 * ag_copy_forget. For the trace recorder. */
int ag_copy_mem_kind(CUdeviceptr p);
/* Calls the driver for op exactly as the application made it (op->real, op->stream). */
CUresult ag_copy_call(const ag_copy *op);

/* Memory may change kind (a free, an unregistration, a context torn down): what was learned
 * about pointers is forgotten. Called before every such call. */
void ag_copy_forget(void);

/* ---- for the engine's other files ------------------------------------------------------- */

struct ag_stream;
struct ag_rec;
struct ag_node;

/* The shape kind of a copy record (enum ag_kind's values are below it). */
#define AG_KIND_COPY 16u

/* Calls the driver for held copy record r, on the stream's issue handle. */
CUresult ag_copy_issue(struct ag_stream *st, const struct ag_rec *r);
/* The layout (values: dst, src, value) of a copy shape's record. */
const struct ag_layout *ag_copy_layout(const void *fn);
/* Whether entry is a memset (else a copy). */
int ag_copy_is_memset(int entry);
/* The shape of op on a stream of context ctx, its destination and source of kinds dk, sk. */
struct ag_shape;
void ag_copy_shape(const ag_copy *op, CUcontext ctx, int dk, int sk, struct ag_shape *sh);
/* Whether shape sh is a copy from device to host memory (a read-back). */
int ag_copy_is_readback(const struct ag_shape *sh);
/* Adds node n (a copy) to graph g after prev (may be NULL), with the values in blob. */
CUresult ag_copy_add_node(CUgraph g, CUgraphNode prev, struct ag_node *n, const uint8_t *blob);
/* Sets node n's values to blob in exec x (x non-NULL) or in the template graph (x NULL). */
CUresult ag_copy_set_node(CUgraphExec x, struct ag_node *n, const uint8_t *blob);

#endif
