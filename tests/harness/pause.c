/* The program pauses the library (autograph_pause / autograph_resume, found with dlsym as a
 * program would): a loop of one sequence of 8 launches and a cuStreamSynchronize, paused in the
 * middle of an occurrence (after its third launch, while the library holds them) and resumed
 * in the middle of a later one (after its fifth). After every synchronisation the log must hold
 * exactly the launches so far, in order: what was held before the pause went out before the
 * launches made during it. The pause itself issues what is held: right after it, with no
 * further call, the occurrence's first three launches run (the log is watched for them, with
 * a deadline). Without the library the calls are not found and the loop runs unpaused. Prints
 * the launches made while paused ("paused launches: N"). With a gap, the program also spends
 * that long (on the clock, launching nothing) right after it pauses: a paused block that lasts
 * (the library's trials must not take it for an interval between occurrences).
 *
 * Usage: pause [iterations=40] [pause at=10] [resume at=20] [gap in us=0] */
#include <dlfcn.h>
#include <sched.h>
#include <stdio.h>

#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 40), at_pause = hx_arg(argc, argv, 2, 10),
         at_resume = hx_arg(argc, argv, 3, 20), gap_us = hx_arg(argc, argv, 4, 0);
    hx_init();
    int (*pause_fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "autograph_pause");
    int (*resume_fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "autograph_resume");
    HX_ASSERT(!pause_fn == !resume_fn, "autograph_pause without autograph_resume");
    /* a resume with no pause in force changes nothing and says so */
    HX_ASSERT(!resume_fn || resume_fn() == -1, "autograph_resume without a pause returned 0");
    CUfunction A = hx_kernel_rec("pause_a"), B = hx_kernel_rec64("pause_b");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 8 + 8));
    long paused = 0;
    int in_pause = 0;
    for (long it = 0; it < iters; it++) {
        hx_entry exp[8];
        for (uint32_t k = 0; k < 8; k++) {
            if (pause_fn && it == at_pause && k == 3) {
                HX_ASSERT(pause_fn() == 0, "autograph_pause failed");
                in_pause = 1;
                double until = hx_now() + 5.0; /* (the harness's hold limit is 10 s) */
                while (__atomic_load_n(&log->n, __ATOMIC_ACQUIRE) < (uint32_t)(it * 8 + 3)) {
                    HX_ASSERT(hx_now() < until, "the launches held at the pause did not run: "
                              "%u of %ld logged", log->n, it * 8 + 3);
                    sched_yield(); /* (the fake's stream threads run them: under valgrind,
                                    * only while this one yields) */
                }
                for (double end = hx_now() + gap_us * 1e-6; hx_now() < end;)
                    sched_yield();
            }
            if (resume_fn && it == at_resume && k == 5) {
                HX_ASSERT(resume_fn() == 0, "autograph_resume failed");
                in_pause = 0;
            }
            uint32_t kid = k + 1, val = (uint32_t)(10 * (k + 1));
            if (k & 1) {
                hx_rec64(B, s, log, 0x1000 + k, (uint8_t)kid, (uint16_t)val);
                exp[k] = (hx_entry){ kid, val, 0x1000 + k };
            } else {
                hx_rec(A, s, log, kid, val);
                exp[k] = (hx_entry){ kid, val, 0 };
            }
            paused += in_pause;
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 8), exp, 8, "pause", it);
    }
    CK(cuStreamDestroy_v2(s));
    printf("paused launches: %ld\n", paused);
    hx_pass("pause");
    return 0;
}
