/* Kernel node parameters from held launches (see fill.h). */
#include "cache/fill.h"

#include <stdlib.h>

#include "cache/params.h"

static void **scratch_ptrs(ag_src *b, uint32_t n)
{
    if (n > b->ptrs_cap) {
        if (!b->st)
            return NULL;
        void **p = realloc(b->st->ptrs, n * sizeof *p);
        if (!p)
            return NULL;
        b->st->ptrs = b->ptrs = p;
        b->st->ptrs_cap = b->ptrs_cap = n;
    }
    return b->ptrs;
}

/* Kernel node parameters of node n for launch r: its function (of n's class), arguments and
 * dimensions. */
int ag_fill(ag_src *b, const ag_node *n, const ag_rec *r, CUDA_KERNEL_NODE_PARAMS *p)
{
    memset(p, 0, sizeof *p);
    if (n->lay->is_kernel) {
        p->kern = (CUkernel)r->lay->handle;
        p->ctx = n->shape.ctx;
    } else {
        p->func = (CUfunction)r->lay->handle;
    }
    p->gridDimX = r->dims.grid[0];
    p->gridDimY = r->dims.grid[1];
    p->gridDimZ = r->dims.grid[2];
    p->blockDimX = r->dims.block[0];
    p->blockDimY = r->dims.block[1];
    p->blockDimZ = r->dims.block[2];
    p->sharedMemBytes = r->dims.smem;
    if (n->lay->nparams) {
        void **ptrs = scratch_ptrs(b, n->lay->nparams);
        if (!ptrs)
            return -1;
        ag_params_ptrs(n->lay, (uint8_t *)b->arena + r->blob, ptrs);
        p->kernelParams = ptrs;
    }
    return 0;
}
