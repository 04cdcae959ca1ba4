/* Scenario k (exit): the program runs the 8-launch loop, then launches the first 5 launches
 * of the sequence (a prefix libautograph holds) and calls exit() without synchronising. The
 * kernels log into a MAP_SHARED mapping of FILE, so what ran is visible after the process is
 * gone: `exit_held check FILE` verifies that the held launches ran before the process ended.
 *
 * Usage: exit_held FILE [iterations=5]    (runs, then exits with launches pending)
 *        exit_held check FILE [iterations=5] */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"

static void expected(hx_entry *e, long iters, uint32_t *n)
{
    *n = 0;
    for (long it = 0; it <= iters; it++)
        for (uint32_t pos = 0; pos < (it == iters ? 5u : 8u); pos++)
            e[(*n)++] = (hx_entry){ pos, (uint32_t)(pos * 11), 0 };
}

int main(int argc, char **argv)
{
    HX_ASSERT(argc >= 2, "usage: exit_held FILE [iterations] | exit_held check FILE [iterations]");
    int checking = !strcmp(argv[1], "check");
    const char *path = argv[checking ? 2 : 1];
    long iters = hx_arg(argc, argv, checking ? 3 : 2, 5);
    uint32_t cap = (uint32_t)(iters * 8 + 16);
    size_t bytes = hx_log_bytes(cap);
    int fd = open(path, checking ? O_RDONLY : O_RDWR | O_CREAT | O_TRUNC, 0644);
    HX_ASSERT(fd >= 0, "cannot open %s", path);
    if (!checking)
        HX_ASSERT(ftruncate(fd, (off_t)bytes) == 0, "ftruncate");
    hx_log *log = mmap(NULL, bytes, checking ? PROT_READ : PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    HX_ASSERT(log != MAP_FAILED, "mmap");
    hx_entry *exp = malloc(cap * sizeof *exp);
    uint32_t n;
    expected(exp, iters, &n);
    if (checking) {
        HX_ASSERT(log->cap == cap, "exit_held: %s was not written by this program", path);
        hx_log_expect(log, 0, exp, n, "exit_held: after exit", iters);
        printf("PASS exit_held check (%u launches ran)\n", n);
        free(exp);
        return 0;
    }
    hx_log_init(log, cap);
    hx_init();
    CUfunction K[4] = { hx_kernel_rec("ex_a"), hx_kernel_rec("ex_b"), hx_kernel_rec("ex_c"),
                        hx_kernel_rec("ex_d") };
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    for (long it = 0; it <= iters; it++) {
        for (uint32_t pos = 0; pos < (it == iters ? 5u : 8u); pos++)
            hx_rec(K[pos % 4], s, log, pos, pos * 11);
        if (it == iters)
            break;
        CK(cuStreamSynchronize(s));
        hx_log_expect(log, 0, exp, (uint32_t)((it + 1) * 8), "exit_held", it);
    }
    printf("exit_held: exiting with 5 launches not synchronised\n");
    fflush(stdout);
    exit(0);
}
