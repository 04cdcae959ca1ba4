/* AUTOGRAPH_PROFILE: learned sequences saved at exit and loaded at start. */
/* So the next run can hold and replay a sequence from its first occurrence. A profile only
 * says which launch shapes to start holding early. Handles differ between runs, so kernels are
 * named by identity (ag_layout.ident: name, parameter layout, module size); the graph is
 * always built from the launches actually held. A stale or foreign profile can therefore cost
 * a hold that breaks off, never a result. */
#ifndef AG_PROFILE_H
#define AG_PROFILE_H

#include <stdint.h>

#include "cache/process.h"
#include "cache/shape.h"

/* A shape with the kernel named by identity instead of handle, and no context. */
typedef struct ag_pshape {
    uint64_t ident;
    uint32_t grid[3], block[3];
    uint32_t smem, psize, kind, nattrs;
    uint64_t attr_hash;
} ag_pshape;

typedef struct ag_pseq ag_pseq;

void ag_pshape_of(const ag_shape *s, const ag_layout *lay, ag_pshape *out);

/* Whether any loaded sequence is left to try. */
static inline int ag_profile_active(void)
{
    return atomic_load_explicit(&ag_hot.profile_live, memory_order_relaxed) > 0;
}
/* A loaded sequence that starts with p (and has not failed too often), or NULL. */
ag_pseq *ag_profile_first(const ag_pshape *p);
uint32_t ag_profile_len(const ag_pseq *q);
int ag_profile_node_is(const ag_pseq *q, uint32_t k, const ag_pshape *p);
/* A provisional hold on it broke off / completed. */
void ag_profile_failed(ag_pseq *q);
void ag_profile_used(ag_pseq *q);

#endif
