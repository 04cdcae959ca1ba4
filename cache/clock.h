/* The engine's clock: monotonic nanoseconds. */
#ifndef AG_CLOCK_H
#define AG_CLOCK_H
#include <stdint.h>
#include <time.h>
/* Monotonic nanoseconds (vDSO: tens of ns; read once per sequence, never per launch). */
static inline uint64_t ag_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif
