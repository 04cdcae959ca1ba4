/* Finding libcuda and the real driver functions; see real.h. */
#include "real.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cache/driver.h"
#include "policy/log.h"
#include "policy/options.h"

ag_driver ag_drv;

static void *(*g_dlsym)(void *, const char *);
static pthread_once_t g_dlsym_once = PTHREAD_ONCE_INIT;

static void find_dlsym(void)
{
    /* glibc >= 2.34 has dlsym@@GLIBC_2.34; older ones, and the compat alias, GLIBC_2.2.5. */
    void *p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
    if (!p)
        p = dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
    g_dlsym = (void *(*)(void *, const char *))p;
}

void *ag_real_dlsym(void *handle, const char *name)
{
    if (AG_UNLIKELY(!g_dlsym))
        pthread_once(&g_dlsym_once, find_dlsym);
    return g_dlsym ? g_dlsym(handle, name) : NULL;
}

/* Sorted views of the hook table, built once. */
static const ag_hook **g_by_name, **g_by_real;
static size_t g_nreal;
static int g_init_rc = -1;
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;

/* A trace-only wrapper (an event query, say) is no ordering point: where no trace is recorded
 * the application keeps the driver's own function, and pays nothing for the wrapper. */
static void *wrapper_of(const ag_hook *k)
{
    return !k->trace_only || *ag_opt_str(AG_OPT_TRACE) ? k->wrapper : NULL;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp((*(const ag_hook *const *)a)->name, (*(const ag_hook *const *)b)->name);
}

static int cmp_real(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)*(*(const ag_hook *const *)a)->real;
    uintptr_t y = (uintptr_t)*(*(const ag_hook *const *)b)->real;
    return x < y ? -1 : x > y;
}

static void init(void)
{
    /* The application (or cudart) loaded libcuda before any call could reach us. */
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        h = dlopen("libcuda.so.1", RTLD_LAZY);
    if (!h) {
        ag_log(AG_LOG_DEBUG, "libcuda.so.1 not found: %s", dlerror());
        return;
    }
#define AG_DRV_RESOLVE(name, params) ag_drv.name = (CUresult(*) params)ag_real_dlsym(h, #name);
    AG_DRV_FUNCS(AG_DRV_RESOLVE)
#undef AG_DRV_RESOLVE

    g_by_name = malloc(ag_hook_count * sizeof *g_by_name);
    g_by_real = malloc(ag_hook_count * sizeof *g_by_real);
    if (!g_by_name || !g_by_real)
        return;
    for (size_t i = 0; i < ag_hook_count; i++) {
        ag_hook *k = &ag_hook_table[i];
        if (!*k->real)
            *k->real = ag_real_dlsym(h, k->name);
        g_by_name[i] = k;
        if (*k->real)
            g_by_real[g_nreal++] = k;
    }
    qsort(g_by_name, ag_hook_count, sizeof *g_by_name, cmp_name);
    qsort(g_by_real, g_nreal, sizeof *g_by_real, cmp_real);
    g_init_rc = 0;
}

int ag_real_init(void)
{
    pthread_once(&g_init_once, init);
    return g_init_rc;
}

void *ag_real_wrapper_for(const char *name, void *real)
{
    if (!real || ag_real_init() != 0)
        return NULL;
    if (name) {
        ag_hook key = { name, NULL, NULL }, *kp = &key;
        const ag_hook **hit = bsearch(&kp, g_by_name, ag_hook_count, sizeof *g_by_name, cmp_name);
        /* Only the real function of that name: a caller's handle may resolve the name to
         * something else (another library's shim), which we leave alone. */
        return hit && *(*hit)->real == real ? wrapper_of(*hit) : NULL;
    }
    size_t lo = 0, hi = g_nreal;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        uintptr_t r = (uintptr_t)*g_by_real[mid]->real;
        if (r == (uintptr_t)real)
            return wrapper_of(g_by_real[mid]);
        if (r < (uintptr_t)real)
            lo = mid + 1;
        else
            hi = mid;
    }
    return NULL;
}
