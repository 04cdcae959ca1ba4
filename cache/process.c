/* Process-wide state: the hot words (life.c sets them) and the threads' numbers. */
#include <stdint.h>

#include "cache/process.h"

static atomic_ulong g_next_tid = 1;
static __thread uint64_t t_tid __attribute__((tls_model("initial-exec")));

uint64_t ag_thread_id(void)
{
    if (!t_tid)
        t_tid = atomic_fetch_add(&g_next_tid, 1);
    return t_tid;
}
