/* The registry of wrapped driver functions and the real ones behind them.
 *
 * Every wrapper libautograph hands out is listed here with the slot that holds the real
 * driver function of the exact same variant. Lookups by name serve dlsym; lookups by real
 * pointer serve cuGetProcAddress, whose answer for (name, version, flags) is the address of
 * one exported variant (cuLaunchKernel_ptsz, cuMemcpyHtoD_v2, ...): mapping that address to
 * our wrapper of the same variant needs no guessing about versions or flags. */
#ifndef AG_REAL_H
#define AG_REAL_H

#include <cuda.h>
#include <stddef.h>

#include "cache/compiler.h"

#define AG_EXPORT __attribute__((visibility("default")))

typedef struct ag_hook {
    const char *name;
    void *wrapper;
    void **real;     /* where the real function's address is kept */
    int trace_only;  /* only the trace recorder wants it (class OBSERVE of tools/gen_hooks.py):
                      * handed out by dlsym and cuGetProcAddress only when AUTOGRAPH_TRACE is
                      * set (direct calls reach its exported wrapper anyway) */
} ag_hook;

/* Resolves libcuda and every real function once; safe to call from any thread, any number
 * of times. Returns 0 when libcuda is there, -1 otherwise (wrappers then fail cleanly). */
int ag_real_init(void);

/* The driver's own cuGetProcAddress (both forms; procaddr.c wraps them), for the hook table
 * (hooks.c). */
extern CUresult (*ag_real_cuGetProcAddress)(const char *, void **, int, cuuint64_t);
extern CUresult (*ag_real_cuGetProcAddress_v2)(const char *, void **, int, cuuint64_t,
                                               CUdriverProcAddressQueryResult *);

/* The wrapper to hand out in place of `real` when it is the real `name` (or, with name NULL,
 * whatever variant it is); NULL when we do not wrap it. */
void *ag_real_wrapper_for(const char *name, void *real);

/* glibc's own dlsym, found with dlvsym so that our exported dlsym is never called by us. */
void *ag_real_dlsym(void *handle, const char *name);

/* The table itself (interpose/hooks.c). */
extern ag_hook ag_hook_table[];
extern const size_t ag_hook_count;

/* Maps every page of our own image in (warm.c), so that first launches take no page faults
 * of ours: called at cuInit. */
void ag_image_warm(void);

#endif
