/* Function attributes (cuFuncSetAttribute, cuFuncSetCacheConfig, cuFuncSetSharedMemConfig,
 * cuKernelSetAttribute, cuKernelSetCacheConfig): they change how later launches of a function
 * run, so launches held before a change must run before it, and graphs built before it must
 * not be replayed after it. Many libraries set the same value before every launch: that must
 * cost one lookup, not a flush. So the last value set is remembered per (handle, attribute,
 * device), and only a call that sets a different (or not yet known) value is an ordering
 * point:
 *
 *     if (ag_funcattr_same(h, a, dev, v)) -> call the real function, nothing else;
 *     else ag_order_all(); r = real call; if (r == CUDA_SUCCESS) ag_funcattr_changed(h, a, dev, v);
 *
 * ag_order_all() before the call runs every held launch under the old value;
 * ag_funcattr_changed() drops every template and graph, then remembers the value. */
#ifndef AG_FUNCATTR_H
#define AG_FUNCATTR_H

/* Pseudo attributes for the calls that set something other than a CUfunction_attribute. */
#define AG_FA_CACHE_CONFIG (-1)
#define AG_FA_SHMEM_CONFIG (-2)
/* The device of the cuFunc* calls (a CUfunction belongs to one context). */
#define AG_FA_NO_DEVICE (-1)

/* Whether value v was the last value successfully set for (h, attr, dev) through this
 * process's calls. Unknown counts as different. Lock-light: one short critical section. */
int ag_funcattr_same(const void *h, int attr, int dev, int v);

/* After a successful call that set a different value: drops every template, graph and
 * parameter layout (ag_order_invalidate), then remembers v. */
void ag_funcattr_changed(const void *h, int attr, int dev, int v);

/* Forgets everything: after unloads and context teardown, whose handles may come back for
 * other functions with the driver's default values. */
void ag_funcattr_reset(void);

#endif
