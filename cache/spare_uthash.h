/* A file's uthash tables take their first blocks from those kept at cuInit (spare.h). */
/* Included after uthash.h by the files whose tables a program's first learning launches fill
 * (the stream registry, the layouts, the sightings): each keeps one table's blocks at cuInit with
 * ag_spare_keep_uthash. Fresh heap there cost a page fault in G2's region on the H100 host. */
#ifndef AG_SPARE_UTHASH_H
#define AG_SPARE_UTHASH_H

#include <uthash.h>

#include "cache/spare.h"

#undef uthash_malloc
#define uthash_malloc(sz) ag_spare_alloc(sz)

/* Keeps the blocks of one table's first allocation: its header and its first buckets. */
static inline void ag_spare_keep_uthash(void)
{
    ag_spare_keep(sizeof(UT_hash_table), 0);
    ag_spare_keep(HASH_INITIAL_NUM_BUCKETS * sizeof(UT_hash_bucket), 0);
}

#endif
