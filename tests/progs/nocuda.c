/* Calls into libautograph's exported driver entry points on a machine without libcuda: every
 * call must fail with an error code, nothing may crash, and nothing may be printed. */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_NOW);
    printf("libcuda: %s\n", h ? "present" : "absent");
    CUresult (*launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **) = dlsym(RTLD_DEFAULT, "cuLaunchKernel");
    CUresult (*sync)(CUstream) = dlsym(RTLD_DEFAULT, "cuStreamSynchronize");
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *) =
        dlsym(RTLD_DEFAULT, "cuGetProcAddress_v2");
    printf("exported: %s %s %s\n", launch ? "yes" : "no", sync ? "yes" : "no", gpa ? "yes" : "no");
    if (launch)
        printf("cuLaunchKernel: %d\n", (int)launch(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
    if (sync)
        printf("cuStreamSynchronize: %d\n", (int)sync(NULL));
    void *p = NULL;
    if (gpa)
        printf("cuGetProcAddress_v2: %d\n", (int)gpa("cuLaunchKernel", &p, 13000, 0, NULL));
    return 0;
}
