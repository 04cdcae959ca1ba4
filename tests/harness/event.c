/* Scenario d: an event recorded mid-sequence on stream A and waited for by stream B, whose
 * kernel copies what A's kernels before the record computed. A's kernels after the record
 * work on another buffer. If the launches before the record were still held (or issued after
 * it), B would copy a stale value. Odd iterations make 6 launches before the record, even ones
 * 4: the 4-launch sequence is a prefix of the 6-launch one, so at the record the 4 launches
 * are still held (the sequence might go on) and the record itself must flush them.
 *
 * Usage: event [iterations=50] */
#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 50);
    hx_init();
    CUfunction ACC = hx_kernel_acc("ev_acc"), ACC2 = hx_kernel_acc("ev_acc2"),
               COPY = hx_kernel_copy("ev_copy");
    CUstream a, b;
    CK(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING));
    CK(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING));
    CUevent ev;
    CK(cuEventCreate(&ev, CU_EVENT_DISABLE_TIMING));
    hx_log *la = hx_log_new((uint32_t)(iters * 10 + 8)), *lb = hx_log_new((uint32_t)(iters * 2 + 8));
    uint64_t *x = hx_dev_u64(1, 5), *w = hx_dev_u64(1, 6), *out = hx_dev_u64(1, 0);
    uint64_t mx = 5, mw = 6, mo;
    uint32_t have_a = 0;
    for (long it = 0; it < iters; it++) {
        hx_entry ea[10], eb[2];
        uint32_t v = (uint32_t)it, pre = it % 2 ? 6 : 4;
        for (uint32_t k = 0; k < pre; k++) {
            hx_acc(k % 2 ? ACC2 : ACC, a, la, x, 1 + k, v);
            ea[k] = (hx_entry){ 1 + k, v, mx = hx_mix(mx, 1 + k, v) };
        }
        CK(cuEventRecord(ev, a));
        for (uint32_t k = 0; k < 4; k++) {
            hx_acc(k % 2 ? ACC2 : ACC, a, la, w, 11 + k, v);
            ea[pre + k] = (hx_entry){ 11 + k, v, mw = hx_mix(mw, 11 + k, v) };
        }
        CK(cuStreamWaitEvent(b, ev, 0));
        hx_copy(COPY, b, out, x, lb, 20);
        eb[0] = (hx_entry){ 20, 0, mx };
        hx_acc(ACC, b, lb, out, 21, v);
        eb[1] = (hx_entry){ 21, v, mo = hx_mix(mx, 21, v) };
        CK(cuStreamSynchronize(b));
        hx_log_expect(lb, (uint32_t)(it * 2), eb, 2, "event: stream B", it);
        CK(cuStreamSynchronize(a));
        hx_log_expect(la, have_a, ea, pre + 4, "event: stream A", it);
        have_a += pre + 4;
        HX_ASSERT(*out == mo, "event: output %#llx, expected %#llx", (unsigned long long)*out,
                  (unsigned long long)mo);
    }
    CK(cuEventDestroy_v2(ev));
    CK(cuStreamDestroy_v2(a));
    CK(cuStreamDestroy_v2(b));
    hx_pass("event");
    return 0;
}
