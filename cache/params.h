/* Kernel parameter layouts (one per function handle, cached) and copies of parameters. */
/* A held launch must deep-copy its arguments inside the hook: the caller's void** is only
 * valid during the call. The layout (offset and size of every parameter) comes from
 * cuFuncGetParamInfo, or cuKernelGetParamInfo when the handle is a CUkernel (cudart passes
 * those), and never changes while the module stays loaded. */
#ifndef AG_PARAMS_H
#define AG_PARAMS_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ag_layout {
    void *handle;            /* CUfunction or CUkernel */
    uint8_t is_kernel;       /* handle is a CUkernel: graph nodes need kern + ctx */
    uint8_t graphable;       /* AUTOGRAPH_ALLOW / DENY let it into graphs */
    uint32_t nparams;
    uint32_t size;           /* bytes of the packed parameter block */
    uint8_t dense;           /* no padding between parameters: nothing to zero */
    uint8_t ran;             /* launched successfully in this process (set by the launch path,
                              * read by profile holds: cache/launch.c) */
    uint32_t *off, *sz;      /* nparams each */
    uint64_t ident;          /* the same kernel in another run: name, parameter layout and
                              * the size of its module (AUTOGRAPH_PROFILE) */
    void *cls;               /* its class: the first function probed with the same full name,
                              * parameter layout and handle kind (itself when first, or when the
                              * driver gave no name). Launch shapes use it: members of a class
                              * share graph nodes, whose function an exec update changes (as
                              * cuDNN's runtime-compiled kernels, one module per sequence
                              * length, ask). NULL until probed. */
    uint64_t cls_key;        /* its fingerprint; 0: no name, a class of its own */
    uint64_t name_key;       /* the fingerprint of its whole name (named_like_a_class's) */
    char name[120];          /* kernel name, possibly cut, for stats and filters */
} ag_layout;

/* The layout of f, or NULL when the driver cannot describe it (an invalid handle: the launch
 * then passes straight through and gets the driver's own error). */
const ag_layout *ag_layout_get(void *f);

/* The same, but a function seen for the first time is only remembered: *first is set and
 * NULL returned. Its layout is probed the next time (a kernel launched once, as in a pipeline
 * that runs once, never pays for the driver's answers), on the worker in ctx (the launch's
 * stream's; NULL: the calling thread's current context, asked of the driver). */
const ag_layout *ag_layout_get_seen(void *f, CUcontext ctx, int *first);

/* The layout of f if the driver was asked already; else NULL, and it is asked (on the worker
 * when there is one, else now, as ag_layout_get). For making templates. */
const ag_layout *ag_layout_known(void *f);
/* Whether f's layout is still awaited from the worker (seen, not yet probed): then
 * ag_layout_known would answer NULL. Asks nothing, counts nothing. */
int ag_layout_awaited(void *f);
/* At cuInit (spare.h): the blocks a first function's remembering takes. */
void ag_layout_spares(void);

/* The worker: probes are queued for it (wake NULL: every probe is made where it is needed),
 * and wake() is called when they are due: where the host waits for the GPU
 * (ag_layout_wake_due, order.c), or when a function whose probe is still queued has been seen
 * AG_LAYOUT_WAKE_AFTER more times. ag_layout_take_due: whether probes were due (no longer),
 * for a worker awake anyway. ag_layout_probe_pending makes one queued probe, 0 when none was
 * queued. */
#define AG_LAYOUT_WAKE_AFTER 32
void ag_layout_async(void (*wake)(void));
void ag_layout_wake_due(void);
int ag_layout_take_due(void);
int ag_layout_probe_pending(void);
/* Forgets the probes not yet made (before an unload or a context's teardown). */
void ag_layout_drop_pending(void);

/* Forget every layout (module or library unload: handles may be reused). */
void ag_layout_invalidate(void);

/* Parses a launch's `extra` array. Returns 0 and the buffer when it is the packed-buffer form
 * with a size equal to `want`; -1 for anything we do not understand. */
int ag_extra_buffer(void **extra, uint32_t want, const void **buf);

/* Copies one launch's arguments into dst (lay->size bytes, padding zeroed). Returns 0, or
 * -1 when the arguments are not in a form we can copy. */
int ag_params_copy(const ag_layout *lay, void **params, void **extra, uint8_t *dst);

/* Fills ptrs[i] = blob + off[i], the kernelParams form of a packed block. */
static inline void ag_params_ptrs(const ag_layout *lay, uint8_t *blob, void **ptrs)
{
    for (uint32_t i = 0; i < lay->nparams; i++)
        ptrs[i] = blob + lay->off[i];
}

#endif
