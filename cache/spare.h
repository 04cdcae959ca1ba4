/* Memory made ready before it is needed: blocks allocated and touched in cuInit (spare.c). */
#ifndef AG_SPARE_H
#define AG_SPARE_H

#include <stddef.h>

/* Keeps a zeroed block of `size` bytes (aligned to `align`, 0 for malloc's), once per call.
 * Only while the engine starts (one thread); blocks never taken are freed at exit by nobody:
 * they are a few kilobytes. */
void ag_spare_keep(size_t size, size_t align);

/* A kept block of exactly `size` bytes, zeroed, or NULL: the caller allocates it itself then.
 * Any thread; each block is taken once. free() and realloc() take it like their own. */
void *ag_spare_take(size_t size);

/* malloc and calloc, from a kept block of exactly `size` bytes while there is one: for the
 * small structs and uthash tables a program's first learning launches make (uthash_malloc is
 * this in the files whose tables they are). free() takes either. */
void *ag_spare_alloc(size_t size);
void *ag_spare_calloc(size_t size);

/* Touches `size` bytes of the heap and gives them back: small allocations made later on this
 * thread's heap (a first template, the learner's growth) find pages already mapped at its top,
 * not a page fault each -- unless the program's own set-up takes them first (cuBLAS's does: G2's
 * first segment close kept its page fault on the H100 host until its tables took kept blocks,
 * eighteenth session). A block under glibc's trim threshold (128 KiB) stays. */
void ag_spare_heap(size_t size);

#endif
