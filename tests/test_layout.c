/* Parameter layouts and deep copies, against a fake driver table. */
#include <stdlib.h>
#include <string.h>

#include "cache/driver.h"
#include "cache/params.h"
#include "cache/shape.h"
#include "policy/options.h"
#include "check.h"

ag_driver ag_drv;

/* Two fake handles: F is a CUfunction with (int*, struct{double;char}, char, double) --
 * offsets 0/8/24/32, sizes 8/16/1/8 as the real driver reports; K is a CUkernel with one int. */
#define F ((CUfunction)0x1000)
#define K ((CUkernel)0x2000)
static int queries;

static CUresult func_info(CUfunction f, size_t i, size_t *off, size_t *sz)
{
    static const size_t o[] = { 0, 8, 24, 32 }, s[] = { 8, 16, 1, 8 };
    queries++;
    if (f != F)
        return CUDA_ERROR_INVALID_HANDLE;
    if (i >= 4)
        return CUDA_ERROR_INVALID_VALUE;
    *off = o[i];
    *sz = s[i];
    return CUDA_SUCCESS;
}

static CUresult kern_info(CUkernel k, size_t i, size_t *off, size_t *sz)
{
    if (k != K)
        return CUDA_ERROR_INVALID_HANDLE;
    if (i >= 1)
        return CUDA_ERROR_INVALID_VALUE;
    *off = 0;
    *sz = 4;
    return CUDA_SUCCESS;
}

static CUresult func_name(const char **n, CUfunction f) { *n = "saxpy_kernel"; return f == F ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
static CUresult kern_name(const char **n, CUkernel k) { *n = "gemm_small"; return k == K ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }

int main(void)
{
    ag_drv.cuFuncGetParamInfo = func_info;
    ag_drv.cuKernelGetParamInfo = kern_info;
    ag_drv.cuFuncGetName = func_name;
    ag_drv.cuKernelGetName = kern_name;
    setenv("AUTOGRAPH_DENY", "gemm*", 1);
    ag_options_reload();

    const ag_layout *a = ag_layout_get(F);
    CHECK(a != NULL);
    CHECK_EQ(a->nparams, 4);
    CHECK_EQ(a->size, 40);
    CHECK_EQ(a->off[1], 8);
    CHECK_EQ(a->sz[1], 16);
    CHECK_EQ(a->is_kernel, 0);
    CHECK(!strcmp(a->name, "saxpy_kernel"));
    CHECK_EQ(a->graphable, 1);
    int q = queries;
    CHECK(ag_layout_get(F) == a); /* cached: no more driver queries */
    CHECK_EQ(queries, q);

    const ag_layout *k = ag_layout_get((void *)K);
    CHECK(k != NULL);
    CHECK_EQ(k->is_kernel, 1);
    CHECK_EQ(k->size, 4);
    CHECK_EQ(k->graphable, 0); /* AUTOGRAPH_DENY=gemm* */
    CHECK(ag_layout_get((void *)0x3000) == NULL);

    /* deep copy: values land at their offsets, padding is zeroed */
    int *ptr = (int *)0x1234;
    struct { double d; char c; } s = { 2.5, 'x' };
    memset((char *)&s + 9, 0x77, sizeof s - 9); /* the caller's padding: garbage */
    char c = 'q';
    double x = 4.0;
    void *params[] = { &ptr, &s, &c, &x };
    uint8_t blob[40], blob2[40];
    memset(blob, 0xAA, sizeof blob);
    CHECK_EQ(ag_params_copy(a, params, NULL, blob), 0);
    CHECK(!memcmp(blob, &ptr, 8));
    CHECK(!memcmp(blob + 8, &s, 9));
    CHECK_EQ(blob[24], 'q');
    CHECK(!memcmp(blob + 32, &x, 8));
    CHECK_EQ(blob[25], 0); /* padding between c and x */
    /* the same arguments give the same bytes (equal value fingerprints) */
    memset(blob2, 0x55, sizeof blob2);
    ag_params_copy(a, params, NULL, blob2);
    /* all 40 bytes: the padding after c (25..31) is what the two prefills (0xAA, 0x55) differ
     * in, and what a missing zeroing would leave different */
    CHECK(!memcmp(blob, blob2, sizeof blob));
    CHECK(ag_hash(blob, sizeof blob) == ag_hash(blob2, sizeof blob2));
    for (int i = 25; i < 32; i++)
        CHECK_EQ(blob[i], 0);

    /* the extra form */
    size_t size = 40;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, blob, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
                      CU_LAUNCH_PARAM_END };
    uint8_t out[40];
    CHECK_EQ(ag_params_copy(a, NULL, extra, out), 0);
    CHECK(!memcmp(out, blob, 40));
    size = 32; /* a size the layout does not have: not ours to copy */
    CHECK_EQ(ag_params_copy(a, NULL, extra, out), -1);
    void *weird[] = { (void *)0x77, NULL, CU_LAUNCH_PARAM_END };
    CHECK_EQ(ag_params_copy(a, NULL, weird, out), -1);
    CHECK_EQ(ag_params_copy(a, params, extra, out), -1); /* both forms: the driver's error */
    CHECK_EQ(ag_params_copy(a, NULL, NULL, out), -1);   /* params missing */

    /* invalidation forgets the handle (it may be reused by another module) */
    ag_layout_invalidate();
    q = queries;
    CHECK(ag_layout_get(F) != NULL);
    CHECK(queries > q);

    /* shapes: attributes are normalised, so stack garbage in the union does not matter */
    ag_launch l;
    memset(&l, 0, sizeof l);
    l.f = F;
    l.grid[0] = l.grid[1] = l.grid[2] = l.block[0] = l.block[1] = l.block[2] = 1;
    CUlaunchAttribute at1[2], at2[2];
    memset(at1, 0x11, sizeof at1);
    memset(at2, 0x22, sizeof at2);
    at1[0].id = at2[0].id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    at1[0].value.priority = at2[0].value.priority = 3;
    l.entry = AG_ENTRY_EX;
    l.attrs = at1;
    l.nattrs = 1;
    ag_shape s1, s2;
    CUlaunchAttribute n1[AG_MAX_ATTRS], n2[AG_MAX_ATTRS];
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s1, n1), 0);
    l.attrs = at2;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), 0);
    CHECK(ag_shape_eq(&s1, &s2));
    CHECK(ag_shape_hash(&s1) == ag_shape_hash(&s2));
    at2[0].value.priority = 4;
    ag_shape_make(&l, a, NULL, &s2, n2);
    CHECK(!ag_shape_eq(&s1, &s2));
    /* programmatic serialisation: graphable (an edge), its value part of the shape */
    at2[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    at2[0].value.programmaticStreamSerializationAllowed = 1;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), 0);
    CHECK_EQ(s2.pdl, 1);
    at2[0].value.programmaticStreamSerializationAllowed = 0;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s1, n1), 0);
    CHECK_EQ(s1.pdl, 0);
    CHECK(!ag_shape_eq(&s1, &s2));
    at2[0].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT; /* launch-only */
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), -1);
    at2[0].id = CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT; /* launch-only */
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), -1);
    at2[0].id = CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT; /* a node attribute */
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), 0);

    /* launch dimensions are values (not in the shape), except for clusters */
    l.nattrs = 0;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s1, n1), 0);
    l.grid[0] = 7;
    l.block[0] = 64;
    l.smem = 1024;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), 0);
    CHECK(ag_shape_eq(&s1, &s2));
    l.grid[1] = 70000; /* refused by any driver: passes through */
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), -1);
    l.grid[1] = 1;
    l.nattrs = 1;
    at2[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    at2[0].value.clusterDim.x = at2[0].value.clusterDim.y = at2[0].value.clusterDim.z = 1;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s1, n1), 0);
    l.grid[0] = 8;
    CHECK_EQ(ag_shape_make(&l, a, NULL, &s2, n2), 0);
    CHECK(!ag_shape_eq(&s1, &s2));
    return check_done("test_layout");
}
