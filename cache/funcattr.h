/* Function attributes (cuFuncSetAttribute, cuFuncSetCacheConfig, cuFuncSetSharedMemConfig,
 * cuKernelSetAttribute, cuKernelSetCacheConfig): they change how later launches of a function
 * run, so launches held before a change must run before it, and graphs built before it must
 * not be replayed after it. Many libraries set the same value before every launch: that must
 * cost one lookup, not a flush. So the last value set is remembered per (handle, attribute,
 * device), and only a call that sets a different (or not yet known) value is an ordering
 * point. A wrapper does:
 *
 *     int how = ag_funcattr_begin(h, attr, dev, v);
 *     CUresult r = <the real call>;
 *     ag_funcattr_end(h, attr, dev, v, how, r);
 *
 * For a new value, begin flushes the held launches of the function (they run under the old
 * value) and end, when the driver took it, drops the graphs that hold the function (and any
 * build under way), then remembers the value (what a change reaches: order.c, reach_of). The
 * real call runs under a lock, shared by same-value calls and exclusive for changes, so that
 * what is remembered is always what the driver has, even when threads race. */
#ifndef AG_FUNCATTR_H
#define AG_FUNCATTR_H

#include <cuda.h>

/* Pseudo attributes for the calls that set something other than a CUfunction_attribute. */
#define AG_FA_CACHE_CONFIG (-1)
#define AG_FA_SHMEM_CONFIG (-2)
/* The device of the cuFunc* calls (a CUfunction belongs to one context). */
#define AG_FA_NO_DEVICE (-1)

/* Returns how the call goes: AG_FA_SAME (nothing to do) or AG_FA_CHANGE (held launches
 * flushed). Takes the lock that ag_funcattr_end releases. */
enum { AG_FA_SAME, AG_FA_SAME_EXCL, AG_FA_CHANGE };
int ag_funcattr_begin(const void *h, int attr, int dev, int v);
void ag_funcattr_end(const void *h, int attr, int dev, int v, int how, CUresult r);

/* Forgets everything: after unloads and context teardown, whose handles may come back for
 * other functions with the driver's default values. */
void ag_funcattr_reset(void);

#endif
