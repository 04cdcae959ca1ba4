/* Shapes and fingerprints: a launch as libautograph keeps it. */
/* Its shape (everything but the argument values), the argument values (a packed parameter
 * block), and two xxHash3 fingerprints of them. Two launches of the same shape can share a
 * graph node: only their values differ, and values are what exec updates change. The shape is
 * a fixed-size, zero-padded struct, so it is hashed and compared as bytes. */
#ifndef AG_SHAPE_H
#define AG_SHAPE_H

#include <cuda.h>
#include <stdint.h>
#include <string.h>

#include "cache/engine.h"
#include "cache/params.h"

#define AG_MAX_ATTRS 4

enum ag_kind { AG_KIND_PLAIN, AG_KIND_ATTRS, AG_KIND_COOP };

/* Launch dimensions: values of a launch, like its arguments (a graph's kernel node takes new
 * ones in an exec update), except where the shape keeps them exact (ag_dims_exact). */
typedef struct ag_dims {
    uint32_t grid[3], block[3], smem;
} ag_dims;

typedef struct ag_shape {
    void *fn;                 /* CUfunction or CUkernel */
    CUcontext ctx;
    ag_dims dims;             /* zero unless exact: cooperative and cluster launches */
    uint32_t psize;
    uint32_t kind;            /* enum ag_kind */
    uint16_t nattrs;
    uint16_t pdl;             /* 1: programmatic stream serialisation on (an edge, not an
                               * attribute, in a graph) */
    uint64_t attr_hash;       /* fingerprint of the normalised attributes; 0 without */
} ag_shape;

typedef struct ag_rec {
    ag_shape shape;
    uint64_t shape_hash;
    const ag_layout *lay;
    uint32_t blob;            /* offset of the parameter block in the stream's arena */
    uint32_t attrs;           /* offset of nattrs CUlaunchAttribute in the arena */
    ag_dims dims;             /* this launch's own */
} ag_rec;

/* The launch dimensions of l. */
static inline void ag_dims_of(const ag_launch *l, ag_dims *d)
{
    for (int i = 0; i < 3; i++) {
        d->grid[i] = l->grid[i];
        d->block[i] = l->block[i];
    }
    d->smem = l->smem;
}

/* Whether a launch attribute can live in a graph (on a kernel node, or as the programmatic
 * edge into it). Launch-only ones (programmatic events, completion events) make a launch
 * ungraphable. */
int ag_attr_graphable(CUlaunchAttributeID id);

/* Builds the shape of launch l (attributes normalised into attrs_out). Returns 0 when the
 * launch may go into a graph, -1 when it must pass through (launch-only or unknown attribute,
 * too many, dimensions the driver refuses). The dimensions are left out of the shape (they
 * are the held launch's values, ag_rec.dims) unless the launch is cooperative or clustered. */
int ag_shape_make(const ag_launch *l, const ag_layout *lay, CUcontext ctx, ag_shape *out,
                  CUlaunchAttribute attrs_out[AG_MAX_ATTRS]);

/* xxHash3 of n bytes: the fingerprints of sequences, values and names. */
uint64_t ag_hash(const void *p, size_t n);

static inline uint64_t ag_mul_fold(uint64_t a, uint64_t b)
{
    __uint128_t p = (__uint128_t)a * b;
    return (uint64_t)p ^ (uint64_t)(p >> 64);
}

/* The fingerprint of a shape, computed on every launch: its eight words folded pairwise by
 * 64x64->128-bit multiplies after mixing in fixed random keys, then avalanched (the scheme
 * xxHash3 uses for short inputs, with keys of our own kept in the code: a key table would be
 * one more cache line for the launch path to miss). Equal fingerprints are always confirmed
 * with ag_shape_eq where it matters. */
static inline uint64_t ag_shape_hash(const ag_shape *s)
{
    const uint64_t *w = (const uint64_t *)s;
    uint64_t h = 0x91d93080f9b439fdull;
    h += ag_mul_fold(w[0] ^ 0x3ceaaf308142c8ebull, w[1] ^ 0x627655daa05f1119ull);
    h += ag_mul_fold(w[2] ^ 0x9dfb369bab13dfafull, w[3] ^ 0x0ff9bb510944fe0dull);
    h += ag_mul_fold(w[4] ^ 0x6301bbfca0c5154full, w[5] ^ 0x047a8387cdde8d51ull);
    h += ag_mul_fold(w[6] ^ 0x6fced11d2bd8a1e7ull, w[7] ^ 0xb7c1dce27f7695f5ull);
    h ^= h >> 37;
    h *= 0x3a124c647e02ff05ull;
    return h ^ (h >> 32);
}

/* Compared as eight words: the shape is 64 zero-padded bytes. */
static inline int ag_shape_eq(const ag_shape *a, const ag_shape *b)
{
    _Static_assert(sizeof(ag_shape) == 64, "ag_shape is compared as 8 words");
    const uint64_t *x = (const uint64_t *)a, *y = (const uint64_t *)b;
    uint64_t d = 0;
    for (int i = 0; i < 8; i++)
        d |= x[i] ^ y[i];
    return d == 0;
}

#endif
