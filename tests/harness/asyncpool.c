/* Scenario: a loop on the stream-ordered allocator (CuPy's MemoryAsyncPool, PyTorch's
 * cudaMallocAsync backend). Per iteration on a created stream: a launch, two temporaries
 * allocated with cuMemAllocAsync between launches, a value copied through them, both freed
 * with cuMemFreeAsync, one more launch, a synchronisation. The log must hold every launch in
 * order with the value that went through the temporaries: a held copy that ran after its
 * temporary's free would read the fake driver's poison.
 *
 * Usage: asyncpool [iterations=60] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 60);
    hx_init();
    CUfunction A = hx_kernel_rec("pool_a"), B = hx_kernel_rec("pool_b"),
               C = hx_kernel_copy("pool_c");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_settle settle;
    hx_log *log = hx_log_new((uint32_t)(hx_settle_init(&settle, iters) * 5 + 8));
    uint64_t *src = hx_dev_u64(1, 0), *out = hx_dev_u64(1, 0);
    for (long it = 0; hx_settle_more(&settle, it, iters); it++) {
        uint64_t v = 0x5eed0000u + (uint64_t)it;
        *src = v; /* (nothing is queued: the last iteration ended with a synchronisation) */
        CUdeviceptr t1, t2;
        hx_rec(A, s, log, 1, 10);
        CK(cuMemAllocAsync(&t1, sizeof(uint64_t), s));
        hx_copy(C, s, (uint64_t *)(uintptr_t)t1, src, log, 2);
        CK(cuMemAllocAsync(&t2, sizeof(uint64_t), s));
        hx_copy(C, s, (uint64_t *)(uintptr_t)t2, (const uint64_t *)(uintptr_t)t1, log, 3);
        hx_copy(C, s, out, (const uint64_t *)(uintptr_t)t2, log, 4);
        CK(cuMemFreeAsync(t1, s));
        CK(cuMemFreeAsync(t2, s));
        hx_rec(B, s, log, 5, 50);
        CK(cuStreamSynchronize(s));
        hx_entry exp[5] = { { 1, 10, 0 }, { 2, 0, v }, { 3, 0, v }, { 4, 0, v }, { 5, 50, 0 } };
        hx_log_expect(log, (uint32_t)(it * 5), exp, 5, "asyncpool", it);
        HX_ASSERT(*out == v, "asyncpool: the value did not come through its temporaries");
        hx_settle_done(&settle, 5);
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("asyncpool");
    return 0;
}
