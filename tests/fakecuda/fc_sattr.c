/* fakecuda: stream attributes (cuStreamSetAttribute, cuStreamGetAttribute,
 * cuStreamCopyAttributes). Kept per stream and answered back; they change nothing a fake kernel
 * does (the access policy window and memory synchronisation domains are hints to the memory
 * system). New streams start with no window, the default domain and the map {0, 1}. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <string.h>

#include "fc_internal.h"

/* Streams are made zeroed elsewhere: the defaults are set on first use here. */
static void defaults_once(fc_stream *s)
{
    if (s->sattr_init)
        return;
    memset(&s->apw, 0, sizeof s->apw);
    s->sync_domain = CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT;
    s->domain_map.default_ = 0;
    s->domain_map.remote = 1;
    s->sattr_init = 1;
}

static CUresult set_attr(CUstream hs, CUstreamAttrID id, const CUstreamAttrValue *v, int ptsz)
{
    CUresult r;
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    if (!v)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    pthread_mutex_lock(&s->mu);
    defaults_once(s);
    r = CUDA_SUCCESS;
    switch ((int)id) {
    case CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        s->apw = v->accessPolicyWindow;
        break;
    case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN:
        s->sync_domain = (int)v->memSyncDomain;
        break;
    case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        s->domain_map = v->memSyncDomainMap;
        break;
    case CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY:
    case CU_STREAM_ATTRIBUTE_PRIORITY:
        break;
    default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&s->mu);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

static CUresult get_attr(CUstream hs, CUstreamAttrID id, CUstreamAttrValue *v, int ptsz)
{
    CUresult r;
    FC_COUNT(stream_attr_gets);
    fc_stream *s = fc_stream_resolve(hs, ptsz, &r);
    if (!s)
        return fc_err(r);
    if (!v)
        return fc_err(CUDA_ERROR_INVALID_VALUE);
    memset(v, 0, sizeof *v);
    pthread_mutex_lock(&s->mu);
    defaults_once(s);
    r = CUDA_SUCCESS;
    switch ((int)id) {
    case CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        v->accessPolicyWindow = s->apw;
        break;
    case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN:
        v->memSyncDomain = (CUlaunchMemSyncDomain)s->sync_domain;
        break;
    case CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        v->memSyncDomainMap = s->domain_map;
        break;
    case CU_STREAM_ATTRIBUTE_PRIORITY:
        v->priority = s->priority;
        break;
    case CU_STREAM_ATTRIBUTE_SYNCHRONIZATION_POLICY:
        break;
    default:
        r = CUDA_ERROR_INVALID_VALUE;
    }
    pthread_mutex_unlock(&s->mu);
    return r ? fc_err(r) : CUDA_SUCCESS;
}

static CUresult copy_attrs(CUstream hd, CUstream hs, int ptsz)
{
    CUresult r;
    fc_stream *d = fc_stream_resolve(hd, ptsz, &r), *s = d ? fc_stream_resolve(hs, ptsz, &r) : NULL;
    if (!d || !s)
        return fc_err(r);
    if (d == s)
        return CUDA_SUCCESS;
    pthread_mutex_lock(&s->mu);
    defaults_once(s);
    CUaccessPolicyWindow apw = s->apw;
    int dom = s->sync_domain;
    CUlaunchMemSyncDomainMap map = s->domain_map;
    pthread_mutex_unlock(&s->mu);
    pthread_mutex_lock(&d->mu);
    d->sattr_init = 1;
    d->apw = apw;
    d->sync_domain = dom;
    d->domain_map = map;
    pthread_mutex_unlock(&d->mu);
    return CUDA_SUCCESS;
}

FC_EXPORT CUresult CUDAAPI cuStreamSetAttribute(CUstream hStream, CUstreamAttrID attr,
                                                const CUstreamAttrValue *value)
{
    FC_ENTER();
    return set_attr(hStream, attr, value, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamSetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                                     const CUstreamAttrValue *value)
{
    FC_ENTER();
    return set_attr(hStream, attr, value, 1);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetAttribute(CUstream hStream, CUstreamAttrID attr,
                                                CUstreamAttrValue *value)
{
    FC_ENTER();
    return get_attr(hStream, attr, value, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamGetAttribute_ptsz(CUstream hStream, CUstreamAttrID attr,
                                                     CUstreamAttrValue *value)
{
    FC_ENTER();
    return get_attr(hStream, attr, value, 1);
}

FC_EXPORT CUresult CUDAAPI cuStreamCopyAttributes(CUstream dst, CUstream src)
{
    FC_ENTER();
    return copy_attrs(dst, src, 0);
}

FC_EXPORT CUresult CUDAAPI cuStreamCopyAttributes_ptsz(CUstream dst, CUstream src)
{
    FC_ENTER();
    return copy_attrs(dst, src, 1);
}
