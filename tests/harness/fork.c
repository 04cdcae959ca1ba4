/* Scenario k (fork): fork() in the middle of a sequence, while libautograph holds launches.
 * The child calls no CUDA and exits 0 (through exit(), so every exit handler runs in it);
 * the parent finishes the sequence and the loop with exact results.
 *
 * Usage: fork [iterations=20] */
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

int main(int argc, char **argv)
{
    long iters = hx_arg(argc, argv, 1, 20);
    hx_init();
    CUfunction K[4] = { hx_kernel_rec("fk_a"), hx_kernel_rec("fk_b"), hx_kernel_rec("fk_c"),
                        hx_kernel_rec("fk_d") };
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new((uint32_t)(iters * 8 + 8));
    int forks = 0;
    for (long it = 0; it < iters; it++) {
        hx_entry exp[8];
        for (uint32_t pos = 0; pos < 8; pos++) {
            hx_rec(K[pos % 4], s, log, pos, (uint32_t)it);
            exp[pos] = (hx_entry){ pos, (uint32_t)it, 0 };
            if (pos == 3 && it % 7 == 6) {
                fflush(stdout);
                pid_t pid = fork();
                HX_ASSERT(pid >= 0, "fork");
                if (pid == 0)
                    exit(0); /* no CUDA in the child */
                int st = 0;
                double t0 = hx_now();
                while (waitpid(pid, &st, WNOHANG) == 0) {
                    if (hx_now() - t0 > 10) {
                        kill(pid, SIGKILL);
                        hx_fail("fork, iteration %ld: the child did not exit within 10 s", it);
                    }
                    usleep(1000);
                }
                HX_ASSERT(WIFEXITED(st) && WEXITSTATUS(st) == 0,
                          "fork, iteration %ld: the child ended with status %#x", it, st);
                forks++;
            }
        }
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, (uint32_t)(it * 8), exp, 8, "fork", it);
    }
    printf("fork: %d children\n", forks);
    hx_pass("fork");
    return 0;
}
