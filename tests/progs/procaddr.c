/* Variant mapping, end to end (run under the preloaded library, against the fake libcuda):
 * every way of asking for a driver function must give the wrapper of exactly that variant,
 * and other handles and names must be left alone. Exits 0 when all hold, 77 when the library
 * is not preloaded. */
#define __CUDA_API_VERSION_INTERNAL
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;
#define EXPECT(cond, ...)                                                                      \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            failures++;                                                                        \
            printf("FAIL: " __VA_ARGS__);                                                      \
            printf("\n");                                                                      \
        }                                                                                      \
    } while (0)

/* Our wrapper of a name: what the preloaded library exports under it. */
static void *ours(const char *name)
{
    static void *self;
    if (!self) {
        Dl_info di;
        void *p = dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2");
        if (!p || !dladdr(p, &di) || !strstr(di.dli_fname, "libautograph"))
            return NULL;
        self = dlopen(di.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    }
    return self ? dlsym(self, name) : NULL;
}

static void *gpa(const char *name, int version, cuuint64_t flags)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st;
    CUresult r = cuGetProcAddress_v2(name, &p, version, flags, &st);
    return r == CUDA_SUCCESS ? p : NULL;
}

int main(void)
{
    if (!ours("cuLaunchKernel")) {
        printf("libautograph is not preloaded\n");
        return 77;
    }
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    EXPECT(cuda, "dlopen libcuda.so.1");

    /* cuGetProcAddress: the flags choose the variant; the answer is our wrapper of it */
    const char *pairs[][2] = {
        { "cuLaunchKernel", "cuLaunchKernel_ptsz" },
        { "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz" },
        { "cuStreamSynchronize", "cuStreamSynchronize_ptsz" },
        { "cuEventRecord", "cuEventRecord_ptsz" },
        { "cuMemcpyHtoDAsync", "cuMemcpyHtoDAsync_v2_ptsz" },
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        void *legacy = gpa(pairs[i][0], 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM);
        void *ptds = gpa(pairs[i][0], 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
        const char *legacy_name = strcmp(pairs[i][0], "cuMemcpyHtoDAsync") ? pairs[i][0] : "cuMemcpyHtoDAsync_v2";
        EXPECT(legacy && legacy == ours(legacy_name), "%s (legacy flags) -> %p, want our %s %p",
               pairs[i][0], legacy, legacy_name, ours(legacy_name));
        EXPECT(ptds && ptds == ours(pairs[i][1]), "%s (per-thread flags) -> %p, want our %s %p",
               pairs[i][0], ptds, pairs[i][1], ours(pairs[i][1]));
    }
    /* cuGetProcAddress for itself: the 5-argument one from 12000, the 4-argument one below */
    EXPECT(gpa("cuGetProcAddress", 12000, 0) == ours("cuGetProcAddress_v2"), "cuGetProcAddress@12000");
    EXPECT(gpa("cuGetProcAddress", 11030, 0) == ours("cuGetProcAddress"), "cuGetProcAddress@11030");
    /* a function we do not wrap comes back as the driver's own */
    void *get = gpa("cuDeviceGet", 2000, 0);
    Dl_info di;
    EXPECT(get && dladdr(get, &di) && !strstr(di.dli_fname, "libautograph"), "cuDeviceGet is not ours");
    /* event queries, waits and timings are ours only while a trace is recorded (class
     * OBSERVE of tools/gen_hooks.py): otherwise dlsym gives the driver's own. (Not checked
     * through cuGetProcAddress here: the fake's table holds the addresses of its exported
     * functions, which the preloaded library's exports interpose, so its answer is ours
     * either way; a real driver answers with its own.) */
    const char *tr = getenv("AUTOGRAPH_TRACE");
    int tracing = tr && *tr;
    const char *observed[] = { "cuEventQuery", "cuEventSynchronize", "cuEventElapsedTime_v2" };
    for (size_t i = 0; i < sizeof observed / sizeof observed[0]; i++) {
        void *q = dlsym(cuda, observed[i]);
        EXPECT(q && (q == ours(observed[i])) == tracing, "%s (dlsym) -> %p, tracing %d",
               observed[i], q, tracing);
    }
    /* cuInit is ours: the engine sets itself up there */
    EXPECT(gpa("cuInit", 2000, 0) == ours("cuInit"), "cuInit@2000");

    /* dlsym on the driver's handle: wrappers for what we wrap, the driver's for the rest */
    EXPECT(dlsym(cuda, "cuLaunchKernel") == ours("cuLaunchKernel"), "dlsym(libcuda, cuLaunchKernel)");
    EXPECT(dlsym(cuda, "cuMemFree_v2") == ours("cuMemFree_v2"), "dlsym(libcuda, cuMemFree_v2)");
    EXPECT(dlsym(cuda, "cuGetProcAddress_v2") == ours("cuGetProcAddress_v2"), "dlsym(libcuda, cuGetProcAddress_v2)");
    void *di_get = dlsym(cuda, "cuDeviceGet");
    EXPECT(di_get && dladdr(di_get, &di) && !strstr(di.dli_fname, "libautograph"), "dlsym(libcuda, cuDeviceGet)");
    /* another library's handle: the caller's handle is honoured (no driver function there) */
    void *m = dlopen("libm.so.6", RTLD_NOW);
    EXPECT(m && dlsym(m, "cuLaunchKernel") == NULL, "dlsym(libm, cuLaunchKernel) must stay NULL");
    EXPECT(m && dlsym(m, "cos") != NULL, "dlsym(libm, cos)");
    /* a name that only looks like a driver function */
    EXPECT(dlsym(cuda, "cuNoSuchFunction") == NULL, "dlsym(libcuda, cuNoSuchFunction)");
    printf("%s: %d failures\n", failures ? "FAIL" : "PASS", failures);
    return failures ? 1 : 0;
}
