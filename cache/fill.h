/* Kernel node parameters from held launches: where a build or an update reads them, and a
 * piece's extent. */
#ifndef AG_FILL_H
#define AG_FILL_H

#include <cuda.h>
#include <string.h>

#include "cache/stream.h"

/* Where a build or an update reads its launches from: the stream's held list and arena (on
 * the launching thread, the stream's lock held), or a build request's copy of them (the
 * worker). ptrs: scratch for the argument pointers, ptrs_cap of them (grown here only for a
 * stream: a request brings enough). */
typedef struct ag_src {
    ag_stream *st;                   /* NULL for a request */
    const ag_rec *recs;
    const uint8_t *arena;
    void **ptrs;
    uint32_t ptrs_cap;
} ag_src;

static inline ag_src ag_src_of_stream(ag_stream *st)
{
    ag_src b = { st, st->held, st->arena, st->ptrs, st->ptrs_cap };
    return b;
}

/* Kernel node parameters of node n for launch r: its function (of n's class), arguments and
 * dimensions (the argument pointers point into b's scratch). 0, or -1 out of memory. */
int ag_fill(ag_src *b, const ag_node *n, const ag_rec *r, CUDA_KERNEL_NODE_PARAMS *p);

/* Held launch i's parameter block. */
static inline uint8_t *ag_held_blob(ag_stream *st, uint32_t i)
{
    return st->arena + st->held[i].blob;
}

static inline int ag_dims_eq(const ag_dims *a, const ag_dims *b)
{
    return !memcmp(a, b, sizeof *a);
}

/* Piece p of T is nodes [ag_piece_start(T, p), T->ends[p]). */
static inline uint32_t ag_piece_start(const ag_tmpl *T, uint32_t p)
{
    return p ? T->ends[p - 1] : 0;
}

/* Piece p's graph holds its nodes up to here: the last piece's stops short of T's trailing
 * read-backs (T->tail), which go out eagerly right after it (graph.c, ag_tmpl_replay), though
 * never past its first node. */
static inline uint32_t ag_piece_gend(const ag_tmpl *T, uint32_t p)
{
    uint32_t s = ag_piece_start(T, p), e = T->ends[p];
    if (p + 1 < T->npieces || !T->tail)
        return e;
    return e - s > T->tail ? e - T->tail : s + 1;
}

#endif
