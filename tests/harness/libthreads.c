/* The library's own threads, as the process sees them: after cuInit and a few launches, every
 * thread of the process is listed with its name and scheduling policy, one per line:
 * "thread NAME POLICY" (POLICY: other, batch, idle, fifo, rr). The worker must be there under
 * SCHED_BATCH (it never preempts the thread that wakes it); the caller's own policy must be
 * untouched.
 *
 * Usage: libthreads */
#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static const char *policy_name(int p)
{
    switch (p) {
    case SCHED_OTHER: return "other";
    case SCHED_BATCH: return "batch";
    case SCHED_IDLE: return "idle";
    case SCHED_FIFO: return "fifo";
    case SCHED_RR: return "rr";
    default: return "unknown";
    }
}

int main(void)
{
    hx_init();
    CUfunction A = hx_kernel_rec("lt_a");
    CUstream s;
    CK(cuStreamCreate(&s, 0));
    hx_log *log = hx_log_new(64);
    for (uint32_t i = 0; i < 16; i++)
        hx_rec(A, s, log, 1, i);
    CK(cuStreamSynchronize(s));
    HX_ASSERT(log->n == 16, "%u launches ran, not 16", log->n);
    DIR *d = opendir("/proc/self/task");
    HX_ASSERT(d, "no /proc/self/task");
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[300], name[32] = "?";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (f) {
            if (fgets(name, sizeof name, f))
                name[strcspn(name, "\n")] = 0;
            fclose(f);
        }
        int p = sched_getscheduler(atoi(e->d_name));
        printf("thread %s %s%s\n", name, policy_name(p), atoi(e->d_name) == getpid() ? " main" : "");
        n++;
    }
    closedir(d);
    HX_ASSERT(n > 0, "no threads listed");
    CK(cuStreamDestroy(s));
    hx_pass("libthreads");
    return 0;
}
