/* Stream attributes that graph kernel nodes do not inherit: a loop of 8 launches and a
 * synchronisation, in phases of 20 iterations, on streams whose access policy window or memory
 * synchronisation domain is set and reset (cuStreamSetAttribute, before the stream's first
 * launch too, and cuStreamCopyAttributes). While such an attribute is set on a stream, its
 * launches must not be graphed (they would run without it); when it is back to its default,
 * they are graphed again. Results are checked after every synchronisation.
 *
 * Phases: stream A plain, A with a window, A plain, A in the remote domain, A plain; stream B
 * with a window set before its first launch; stream C with B's attributes copied, then A's.
 * The bats test expects exactly 4 * 20 * 8 launches not graphed.
 *
 * Usage: pdl_stream_attr */
#include <string.h>

#include "harness.h"

enum { NK = 8, PHASE = 20 };

static CUfunction g_K[NK];
static hx_log *g_log;

static void phase(CUstream s, long tag)
{
    for (long it = 0; it < PHASE; it++) {
        hx_entry exp[NK];
        uint32_t from = g_log->n;
        for (uint32_t k = 0; k < NK; k++) {
            uint32_t val = (uint32_t)(tag * 1000 + it);
            hx_rec(g_K[k], s, g_log, k, val);
            exp[k] = (hx_entry){ k, val, 0 };
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(g_log, from, exp, NK, "pdl_stream_attr", tag * 1000 + it);
    }
}

static void set_window(CUstream s, size_t bytes)
{
    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    v.accessPolicyWindow.base_ptr = g_log;
    v.accessPolicyWindow.num_bytes = bytes;
    v.accessPolicyWindow.hitRatio = 0.5f;
    v.accessPolicyWindow.hitProp = CU_ACCESS_PROPERTY_PERSISTING;
    v.accessPolicyWindow.missProp = CU_ACCESS_PROPERTY_STREAMING;
    CK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, &v));
}

static void set_domain(CUstream s, CUlaunchMemSyncDomain d)
{
    CUstreamAttrValue v;
    memset(&v, 0, sizeof v);
    v.memSyncDomain = d;
    CK(cuStreamSetAttribute(s, CU_STREAM_ATTRIBUTE_MEM_SYNC_DOMAIN, &v));
}

int main(void)
{
    hx_init();
    for (int k = 0; k < NK; k++) {
        char name[16];
        snprintf(name, sizeof name, "sa_%d", k);
        g_K[k] = hx_kernel_rec(name);
    }
    g_log = hx_log_new(9 * NK * PHASE + 8);
    CUstream a, b, c;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    phase(a, 1);
    set_window(a, 4096);
    phase(a, 2); /* not graphed */
    set_window(a, 0);
    phase(a, 3);
    set_domain(a, CU_LAUNCH_MEM_SYNC_DOMAIN_REMOTE);
    phase(a, 4); /* not graphed */
    set_domain(a, CU_LAUNCH_MEM_SYNC_DOMAIN_DEFAULT);
    phase(a, 5);
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    set_window(b, 1 << 20); /* before its first launch */
    phase(b, 6); /* not graphed */
    CK(cuStreamCreate(&c, CU_STREAM_NON_BLOCKING));
    phase(c, 7);
    CK(cuStreamCopyAttributes(c, b));
    phase(c, 8); /* not graphed */
    CK(cuStreamCopyAttributes(c, a));
    phase(c, 9);
    CK(cuStreamDestroy_v2(a));
    CK(cuStreamDestroy_v2(b));
    CK(cuStreamDestroy_v2(c));
    hx_pass("pdl_stream_attr");
    return 0;
}
