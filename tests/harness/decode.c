/* Scenario: a decode-like step, the shape of an LLM engine's token loop. Each step copies a
 * token to the device (cuMemcpyHtoDAsync: an ordering point), makes 290 launches of 14
 * kernels (an embedding, 24 layers of 12 kernels whose arguments carry the layer, an
 * "argmax" that accumulates the token), copies the result back and synchronises. The
 * step is longer than a default graph (AUTOGRAPH_MAX_NODES): it goes out in chunks or pieces.
 * After every step the log must hold exactly that step's launches, in order. host_us > 0:
 * that much host work (a busy wait, no CUDA call) after every launch, as a framework's Python
 * between its launches: a step then takes longer than AUTOGRAPH_MAX_HOLD_US.
 *
 * Usage: decode [steps=60] [host_us=0] */
#include <stdio.h>

#include "harness.h"

#define LAYERS 24
#define PER_LAYER 12
#define STEP (2 + LAYERS * PER_LAYER)

int main(int argc, char **argv)
{
    long steps = hx_arg(argc, argv, 1, 60);
    double host_s = (double)hx_arg(argc, argv, 2, 0) * 1e-6;
    hx_init();
    CUfunction embed = hx_kernel_rec("dec_embed"), argmax = hx_kernel_acc("dec_argmax");
    CUfunction k[PER_LAYER];
    for (int j = 0; j < PER_LAYER; j++) {
        char name[32];
        snprintf(name, sizeof name, "dec_k%02d", j);
        k[j] = hx_kernel_rec(name);
    }
    CUstream s;
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    hx_log *log = hx_log_new((uint32_t)(steps * STEP + 8));
    uint64_t *tok_dev = hx_dev_u64(1, 0), *acc = hx_dev_u64(1, 1), model = 1;
    uint64_t token = 7, back = 0;
    static hx_entry exp[STEP];
    for (long it = 0; it < steps; it++) {
        CK(cuMemcpyHtoDAsync_v2((CUdeviceptr)tok_dev, &token, sizeof token, s));
        uint32_t n = 0, t = (uint32_t)token;
        hx_rec(embed, s, log, 1, t);
        exp[n++] = (hx_entry){ 1, t, 0 };
        for (uint32_t l = 0; l < LAYERS; l++)
            for (uint32_t j = 0; j < PER_LAYER; j++) {
                hx_rec(k[j], s, log, 10 + j, l * 1000 + t);
                exp[n++] = (hx_entry){ 10 + j, l * 1000 + t, 0 };
                for (double end = hx_now() + host_s; host_s > 0 && hx_now() < end;)
                    ;
            }
        hx_acc(argmax, s, log, acc, 2, t);
        exp[n++] = (hx_entry){ 2, t, model = hx_mix(model, 2, t) };
        CK(cuMemcpyDtoHAsync_v2(&back, (CUdeviceptr)acc, sizeof back, s));
        CK(cuStreamSynchronize(s));
        HX_ASSERT(back == model, "step %ld: read back %llx, expected %llx", it,
                  (unsigned long long)back, (unsigned long long)model);
        hx_log_expect(log, (uint32_t)(it * STEP), exp, STEP, "decode", it);
        token = (back % 1000) + 1; /* the next token comes from the read-back */
    }
    hx_pass("decode");
    return 0;
}
