/* Our dlsym: cuBLAS, cuBLASLt and every cudart look driver functions up by dlsym, and a
 * preloaded dlsym is the one place static-cudart programs can be reached too.
 *
 * Only names of the form cu[A-Z]... are looked at; everything else goes straight to glibc's
 * dlsym as a tail call, so glibc still sees the original caller (RTLD_NEXT stays relative to
 * the object that asked). The caller's handle is always honoured: we swap a result only when
 * it is the real driver function we wrap. */
#include <dlfcn.h>

#include "real.h"

static __thread int t_inside __attribute__((tls_model("initial-exec")));

static inline int is_driver_name(const char *n)
{
    return n && n[0] == 'c' && n[1] == 'u' && n[2] >= 'A' && n[2] <= 'Z';
}

static __attribute__((noinline)) void *lookup_driver(void *handle, const char *name)
{
    t_inside = 1;      /* our own initialisation may load libraries that call dlsym */
    void *p = ag_real_dlsym(handle, name);
    void *w = ag_real_wrapper_for(name, p);
    t_inside = 0;
    return w ? w : p;
}

AG_EXPORT void *dlsym(void *handle, const char *name)
{
    /* <dlfcn.h> declares name nonnull; keep the NULL check anyway (glibc's own answer to a
     * NULL name is the caller's problem, not a crash in here). */
    const char *n = name;
    __asm__("" : "+r"(n));
    if (AG_UNLIKELY(is_driver_name(n) && !t_inside && handle != RTLD_NEXT))
        return lookup_driver(handle, name);
    return ag_real_dlsym(handle, name);
}
