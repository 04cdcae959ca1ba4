/* fakecuda: function attributes (cuFuncSetAttribute and friends) and the deprecated launch
 * state (cuFuncSetBlockShape, cuParamSet*). Values are kept per handle; a launch or a graph
 * node takes a snapshot of those in effect (fc_attrs_now), which its kernel can read back
 * with fakecuda_launch_attr. See fakecuda.h. */
#include <stdlib.h>
#include <string.h>

#include "fc_internal.h"

pthread_mutex_t fc_attr_mu = PTHREAD_MUTEX_INITIALIZER;
__thread const fc_attrs *fc_cur_attrs; /* the running kernel's snapshot (worker threads) */

FC_EXPORT int fakecuda_launch_attr(int attr)
{
    if (!fc_cur_attrs || attr < 0 || attr >= FC_NATTR)
        return -1;
    return fc_cur_attrs->v[attr];
}

static void defaults(fc_attrs *a)
{
    memset(a, 0, sizeof *a);
    a->v[CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK] = 1024;
    a->v[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES] = 48 * 1024;
    a->v[CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT] = -1;
    a->v[CU_FUNC_ATTRIBUTE_PTX_VERSION] = 90;
    a->v[CU_FUNC_ATTRIBUTE_BINARY_VERSION] = 90;
}

static void overlay(fc_attrs *a, const fc_func *f)
{
    for (int i = 0; f && i < FC_NATTR; i++)
        if (f->attr_set & (1u << i))
            a->v[i] = f->attr[i];
}

void fc_attrs_now(const fc_func *f, fc_attrs *out)
{
    defaults(out);
    const fc_func *fn = f->magic == FC_M_FUNC ? f : f->orig;
    const fc_func *kn = f->magic == FC_M_KERN ? f : f->alias;
    pthread_mutex_lock(&fc_attr_mu);
    overlay(out, kn); /* cuKernelSetAttribute ... */
    overlay(out, fn); /* ... overridden by cuFuncSetAttribute, whatever the order */
    pthread_mutex_unlock(&fc_attr_mu);
}

int fc_attrs_allow_smem(const fc_attrs *a, unsigned smem)
{
    return smem <= (unsigned)a->v[CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES];
}

/* Whether (attr, value) may be set, as the driver checks it. */
static CUresult check_attr(int attr, int v)
{
    switch (attr) {
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
        return v >= 0 && v <= 227 * 1024 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        return v >= -1 && v <= 100 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
    case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
        return v >= 0 && v <= 16 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
        return v == 0 || v == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        return v >= 0 && v <= 2 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case FAKECUDA_ATTR_CACHE_CONFIG:
        return v >= CU_FUNC_CACHE_PREFER_NONE && v <= CU_FUNC_CACHE_PREFER_EQUAL
                   ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    case FAKECUDA_ATTR_SHMEM_CONFIG:
        return v >= CU_SHARED_MEM_CONFIG_DEFAULT_BANK_SIZE &&
                       v <= CU_SHARED_MEM_CONFIG_EIGHT_BYTE_BANK_SIZE
                   ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
    default:
        return CUDA_ERROR_INVALID_VALUE; /* read-only */
    }
}

static CUresult set_attr(const void *h, uint32_t want, int attr, int v)
{
    fc_func *f = fc_func_get(h, want);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    CUresult r = check_attr(attr, v);
    if (r)
        return fc_err(r);
    pthread_mutex_lock(&fc_attr_mu);
    f->attr[attr] = v;
    f->attr_set |= 1u << attr;
    pthread_mutex_unlock(&fc_attr_mu);
    FC_COUNT(attribute_sets);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib,
                                              int value)
{
    FC_ENTER();
    if ((int)attrib < 0 || (int)attrib >= (int)CU_FUNC_ATTRIBUTE_MAX)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    return set_attr(hfunc, FC_M_FUNC, (int)attrib, value);
}

FC_EXPORT CUresult CUDAAPI cuFuncSetCacheConfig(CUfunction hfunc, CUfunc_cache config)
{
    FC_ENTER();
    return set_attr(hfunc, FC_M_FUNC, FAKECUDA_ATTR_CACHE_CONFIG, (int)config);
}

FC_EXPORT CUresult CUDAAPI cuFuncSetSharedMemConfig(CUfunction hfunc, CUsharedconfig config)
{
    FC_ENTER();
    return set_attr(hfunc, FC_M_FUNC, FAKECUDA_ATTR_SHMEM_CONFIG, (int)config);
}

FC_EXPORT CUresult CUDAAPI cuKernelSetAttribute(CUfunction_attribute attrib, int val,
                                                CUkernel kernel, CUdevice dev)
{
    FC_ENTER();
    if ((int)attrib < 0 || (int)attrib >= (int)CU_FUNC_ATTRIBUTE_MAX)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    if (dev != 0) /* one device */
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    return set_attr(kernel, FC_M_KERN, (int)attrib, val);
}

FC_EXPORT CUresult CUDAAPI cuKernelSetCacheConfig(CUkernel kernel, CUfunc_cache config,
                                                  CUdevice dev)
{
    FC_ENTER();
    if (dev != 0)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    return set_attr(kernel, FC_M_KERN, FAKECUDA_ATTR_CACHE_CONFIG, (int)config);
}

static CUresult get_attr(int *pi, int attr, const void *h, uint32_t want)
{
    if (!pi || attr < 0 || attr >= (int)CU_FUNC_ATTRIBUTE_MAX)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    fc_func *f = fc_func_get(h, want);
    if (!f)
        return fc_err(CUDA_ERROR_INVALID_HANDLE);
    fc_attrs a;
    fc_attrs_now(f, &a);
    *pi = a.v[attr];
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuFuncGetAttribute(int *pi, CUfunction_attribute attrib,
                                              CUfunction hfunc)
{
    FC_ENTER();
    return get_attr(pi, (int)attrib, hfunc, FC_M_FUNC);
}

FC_EXPORT CUresult CUDAAPI cuKernelGetAttribute(int *pi, CUfunction_attribute attrib,
                                                CUkernel kernel, CUdevice dev)
{
    FC_ENTER();
    if (dev != 0)
        return fc_err(CUDA_ERROR_INVALID_DEVICE);
    return get_attr(pi, (int)attrib, kernel, FC_M_KERN);
}

/* ---- the deprecated launch state --------------------------------------------------------- */

fc_legacy *fc_legacy_of(fc_func *f)
{
    if (!f->legacy && (f->legacy = calloc(1, sizeof *f->legacy))) {
        f->legacy->block[0] = f->legacy->block[1] = f->legacy->block[2] = 1;
    }
    return f->legacy;
}

/* Runs fn on the legacy state of the CUfunction h, under the lock. */
#define WITH_LEGACY(h, body)                                                                   \
    do {                                                                                       \
        fc_func *f_ = fc_func_get(h, FC_M_FUNC);                                               \
        if (!f_)                                                                               \
            return fc_err(CUDA_ERROR_INVALID_HANDLE);                                          \
        CUresult r_ = CUDA_SUCCESS;                                                            \
        pthread_mutex_lock(&fc_attr_mu);                                                       \
        fc_legacy *L = fc_legacy_of(f_);                                                       \
        if (!L)                                                                                \
            r_ = CUDA_ERROR_OUT_OF_MEMORY;                                                     \
        else {                                                                                 \
            body                                                                               \
        }                                                                                      \
        pthread_mutex_unlock(&fc_attr_mu);                                                     \
        return r_ ? fc_err(r_) : CUDA_SUCCESS;                                                 \
    } while (0)

FC_EXPORT CUresult CUDAAPI cuFuncSetBlockShape(CUfunction hfunc, int x, int y, int z)
{
    FC_ENTER();
    if (x <= 0 || y <= 0 || z <= 0 || (long)x * y * z > 1024)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    WITH_LEGACY(hfunc, L->block[0] = x; L->block[1] = y; L->block[2] = z;);
}

FC_EXPORT CUresult CUDAAPI cuFuncSetSharedSize(CUfunction hfunc, unsigned int bytes)
{
    FC_ENTER();
    WITH_LEGACY(hfunc, L->shared = bytes;);
}

FC_EXPORT CUresult CUDAAPI cuParamSetSize(CUfunction hfunc, unsigned int numbytes)
{
    FC_ENTER();
    if (numbytes > sizeof ((fc_legacy *)0)->params)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    WITH_LEGACY(hfunc, L->psize = numbytes;);
}

static CUresult param_set(CUfunction hfunc, int offset, const void *p, unsigned n)
{
    if (offset < 0 || !p || (size_t)offset + n > sizeof ((fc_legacy *)0)->params)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    WITH_LEGACY(hfunc, memcpy(L->params + offset, p, n););
}

FC_EXPORT CUresult CUDAAPI cuParamSeti(CUfunction hfunc, int offset, unsigned int value)
{
    FC_ENTER();
    return param_set(hfunc, offset, &value, sizeof value);
}

FC_EXPORT CUresult CUDAAPI cuParamSetf(CUfunction hfunc, int offset, float value)
{
    FC_ENTER();
    return param_set(hfunc, offset, &value, sizeof value);
}

FC_EXPORT CUresult CUDAAPI cuParamSetv(CUfunction hfunc, int offset, void *ptr,
                                       unsigned int numbytes)
{
    FC_ENTER();
    return param_set(hfunc, offset, ptr, numbytes);
}
