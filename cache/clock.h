/* The engine's clock: monotonic nanoseconds. */
#ifndef AG_CLOCK_H
#define AG_CLOCK_H
#include <stdint.h>
#include <time.h>
#ifdef AG_SIM
/* The simulator's build (cli/simulate.c, docs/MODEL.md): the simulated host clock. */
uint64_t ag_sim_now_ns(void);
static inline uint64_t ag_now_ns(void)
{
    return ag_sim_now_ns();
}
#else
/* Monotonic nanoseconds (vDSO: tens of ns; read once per sequence, never per launch). */
static inline uint64_t ag_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
#endif
