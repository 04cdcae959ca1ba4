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

#endif
