/* A bump arena for the command line's readers: blocks that never move, freed together. */
/* The JSON reader keeps its values in one, the simulator's trace reader the records it copies
 * out of the file (the calls point into them). */
#ifndef AG_CLI_ARENA_H
#define AG_CLI_ARENA_H

#include <stddef.h>
#include <stdlib.h>

typedef struct ag_arena_block {
    struct ag_arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
} ag_arena_block;

typedef struct ag_arena {
    ag_arena_block *head; /* NULL: empty (a zeroed arena is a valid one) */
} ag_arena;

/* n bytes, 16-aligned, from a block of at least `block` bytes (larger for a larger n); NULL
 * when out of memory. */
static inline void *ag_arena_alloc(ag_arena *a, size_t n, size_t block)
{
    n = (n + 15) & ~(size_t)15;
    ag_arena_block *b = a->head;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > block ? n : block;
        ag_arena_block *nb = malloc(sizeof *nb + cap);
        if (!nb)
            return NULL;
        nb->next = b;
        nb->used = 0;
        nb->cap = cap;
        a->head = b = nb;
    }
    void *r = b->mem + b->used;
    b->used += n;
    return r;
}

static inline void ag_arena_free(ag_arena *a)
{
    for (ag_arena_block *b = a->head, *n; b; b = n) {
        n = b->next;
        free(b);
    }
    a->head = NULL;
}

#endif
