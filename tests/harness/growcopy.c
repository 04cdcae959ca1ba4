/* Scenario: a loop whose device-to-device copy grows by 8 bytes every iteration (a decode
 * step's id list or mask that gains a token), between two launches, with a synchronisation
 * after each iteration. The copy's size is a value of the sequence, not part of its shape, so
 * the loop is one sequence; each replay must copy exactly this iteration's bytes: the words
 * after them stay untouched, and the log holds every launch in order.
 *
 * Usage: growcopy [iterations=60] (at most 62) */
#include "harness.h"

#define WORDS 64

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 60);
    hx_init();
    CUfunction A = hx_kernel_rec("grow_a"), B = hx_kernel_rec("grow_b");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_settle settle;
    long most = hx_settle_init(&settle, iters);
    hx_log *log = hx_log_new((uint32_t)(most * 2 + 8));
    uint64_t *src = hx_dev_u64(WORDS, 0), *dst = hx_dev_u64(WORDS, 0);
    for (long it = 0; hx_settle_more(&settle, it, iters); it++) {
        size_t words = 1 + (size_t)(it % (WORDS - 2)); /* (a settling loop starts over) */
        for (size_t j = 0; j < WORDS; j++) { /* (nothing is queued: the last iteration synced) */
            src[j] = ((uint64_t)it << 16) + j;
            dst[j] = 0;
        }
        hx_rec(A, s, log, 1, 10);
        CK(cuMemcpyDtoDAsync_v2((CUdeviceptr)(uintptr_t)dst, (CUdeviceptr)(uintptr_t)src,
                                words * sizeof(uint64_t), s));
        hx_rec(B, s, log, 2, 20);
        CK(cuStreamSynchronize(s));
        hx_entry exp[2] = { { 1, 10, 0 }, { 2, 20, 0 } };
        hx_log_expect(log, (uint32_t)(it * 2), exp, 2, "growcopy", it);
        for (size_t j = 0; j < words; j++)
            HX_ASSERT(dst[j] == src[j], "growcopy: a word of this iteration's copy is missing");
        HX_ASSERT(dst[words] == 0, "growcopy: the copy went past this iteration's size");
        hx_settle_done(&settle, 2);
    }
    CK(cuStreamDestroy_v2(s));
    hx_pass("growcopy");
    return 0;
}
