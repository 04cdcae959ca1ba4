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
    /* kernel-node attributes too (CU_KERNEL_NODE_ATTRIBUTE_*), though cuda.h calls them
     * "valid for launches" */
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
    /* not a node attribute: a programmatic edge from the node before (graph.c) */
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        return 1;
    /* records the application's event when the kernel's blocks trigger: a node cannot
     * record an event through an attribute, and an event record node after it would fire at
     * completion, not at the trigger */
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT:
    /* records the application's event once every block has begun: the same, for the launch
     * order port */
    case CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT:
    default: /* unknown to us: never guessed at */
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
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION:
        out->value.preferredClusterDim.x = in->value.preferredClusterDim.x;
        out->value.preferredClusterDim.y = in->value.preferredClusterDim.y;
        out->value.preferredClusterDim.z = in->value.preferredClusterDim.z;
        break;
    case CU_LAUNCH_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
        out->value.sharedMemCarveout = in->value.sharedMemCarveout;
        break;
    case CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION:
        out->value.programmaticStreamSerializationAllowed =
            in->value.programmaticStreamSerializationAllowed;
        break;
    default:
        break;
    }
}

/* Dimensions the driver refuses whatever the kernel: such a launch passes through and gets
 * its error from the driver, never held (a held launch has returned CUDA_SUCCESS). */
static int dims_invalid(const ag_launch *l)
{
    return !l->grid[0] || !l->grid[1] || !l->grid[2] || l->grid[0] > 0x7fffffffu ||
           l->grid[1] > 65535 || l->grid[2] > 65535 || !l->block[0] || !l->block[1] ||
           !l->block[2] || l->block[0] > 1024 || l->block[1] > 1024 || l->block[2] > 64 ||
           (uint64_t)l->block[0] * l->block[1] * l->block[2] > 1024;
}

int ag_shape_make(const ag_launch *l, const ag_layout *lay, CUcontext ctx, ag_shape *s,
                  CUlaunchAttribute attrs[AG_MAX_ATTRS])
{
    memset(s, 0, sizeof *s);
    if (dims_invalid(l))
        return -1;
    /* its class (params.h): which member of it runs is a value, as arguments are */
    s->fn = lay && lay->cls ? lay->cls : l->f;
    s->ctx = ctx;
    s->psize = 0; /* the function decides it, and its layout is probed only once it repeats */
    if (l->entry == AG_ENTRY_COOP || l->entry == AG_ENTRY_COOP_PTSZ) {
        /* a cooperative grid must fit on the device at once: kept exact, never updated */
        s->kind = AG_KIND_COOP;
        ag_dims_of(l, &s->dims);
        return 0;
    }
    if (!l->nattrs)
        return 0;
    if (!l->attrs)
        return -1;
    unsigned n = 0;
    int exact = 0;
    for (unsigned i = 0; i < l->nattrs; i++) {
        CUlaunchAttributeID id = l->attrs[i].id;
        if (!ag_attr_graphable(id))
            return -1;
        if (id == CU_LAUNCH_ATTRIBUTE_IGNORE)
            continue;
        if (n == AG_MAX_ATTRS)
            return -1;
        normalise(&l->attrs[i], &attrs[n++]);
        if (id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION &&
            l->attrs[i].value.programmaticStreamSerializationAllowed)
            s->pdl = 1;
        /* the grid must be a multiple of the cluster: kept exact, never updated */
        if (id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE ||
            id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION ||
            id == CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION)
            exact = 1;
    }
    if (exact)
        ag_dims_of(l, &s->dims);
    if (n) {
        s->kind = AG_KIND_ATTRS;
        s->nattrs = (uint16_t)n;
        s->attr_hash = ag_hash(attrs, n * sizeof *attrs);
    }
    return 0;
}
