/* Shapes and fingerprints (see shape.h). */
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "cache/shape.h"

uint64_t ag_hash(const void *p, size_t n)
{
    return XXH3_64bits(p, n);
}

int ag_attr_graphable(CUlaunchAttributeID id)
{
    switch ((int)id) {
    case CU_LAUNCH_ATTRIBUTE_IGNORE:
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        return 1;
    default:
        return 0;
    }
}

/* Copies only the bytes of the value that the attribute uses: the rest of the union is
 * whatever the caller's stack held, and must not make equal launches look different. */
static void normalise(const CUlaunchAttribute *in, CUlaunchAttribute *out)
{
    memset(out, 0, sizeof *out);
    out->id = in->id;
    switch ((int)in->id) {
    case CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW:
        out->value.accessPolicyWindow.base_ptr = in->value.accessPolicyWindow.base_ptr;
        out->value.accessPolicyWindow.num_bytes = in->value.accessPolicyWindow.num_bytes;
        out->value.accessPolicyWindow.hitRatio = in->value.accessPolicyWindow.hitRatio;
        out->value.accessPolicyWindow.hitProp = in->value.accessPolicyWindow.hitProp;
        out->value.accessPolicyWindow.missProp = in->value.accessPolicyWindow.missProp;
        break;
    case CU_LAUNCH_ATTRIBUTE_COOPERATIVE:
        out->value.cooperative = in->value.cooperative;
        break;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION:
        out->value.clusterDim.x = in->value.clusterDim.x;
        out->value.clusterDim.y = in->value.clusterDim.y;
        out->value.clusterDim.z = in->value.clusterDim.z;
        break;
    case CU_LAUNCH_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
        out->value.clusterSchedulingPolicyPreference = in->value.clusterSchedulingPolicyPreference;
        break;
    case CU_LAUNCH_ATTRIBUTE_PRIORITY:
        out->value.priority = in->value.priority;
        break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN_MAP:
        out->value.memSyncDomainMap.default_ = in->value.memSyncDomainMap.default_;
        out->value.memSyncDomainMap.remote = in->value.memSyncDomainMap.remote;
        break;
    case CU_LAUNCH_ATTRIBUTE_MEM_SYNC_DOMAIN:
        out->value.memSyncDomain = in->value.memSyncDomain;
        break;
    default:
        break;
    }
}

int ag_shape_make(const ag_launch *l, const ag_layout *lay, CUcontext ctx, ag_shape *s,
                  CUlaunchAttribute attrs[AG_MAX_ATTRS])
{
    memset(s, 0, sizeof *s);
    s->fn = l->f;
    s->ctx = ctx;
    for (int i = 0; i < 3; i++) {
        s->grid[i] = l->grid[i];
        s->block[i] = l->block[i];
    }
    s->smem = l->smem;
    s->psize = 0; /* the function decides it, and its layout is probed only once it repeats */
    if (l->entry == AG_ENTRY_COOP || l->entry == AG_ENTRY_COOP_PTSZ) {
        s->kind = AG_KIND_COOP;
        return 0;
    }
    if (!l->nattrs)
        return 0;
    if (!l->attrs)
        return -1;
    unsigned n = 0;
    for (unsigned i = 0; i < l->nattrs; i++) {
        if (!ag_attr_graphable(l->attrs[i].id))
            return -1;
        if (l->attrs[i].id == CU_LAUNCH_ATTRIBUTE_IGNORE)
            continue;
        if (n == AG_MAX_ATTRS)
            return -1;
        normalise(&l->attrs[i], &attrs[n++]);
    }
    if (n) {
        s->kind = AG_KIND_ATTRS;
        s->nattrs = n;
        s->attr_hash = ag_hash(attrs, n * sizeof *attrs);
    }
    return 0;
}
