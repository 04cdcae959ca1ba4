/* What differs between compilers and CPUs: branch hints, the spin-wait pause, prefetches, ticks. */
#ifndef AG_COMPILER_H
#define AG_COMPILER_H

#include <stddef.h>
#include <stdint.h>

#define AG_LIKELY(x) __builtin_expect(!!(x), 1)
#define AG_UNLIKELY(x) __builtin_expect(!!(x), 0)

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* One spin-wait iteration's hint to the CPU (a sibling hyperthread gets the core meanwhile). */
static inline void ag_cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Reads [p, p + len) into the CPU's caches, to be written (`write`) or read soon: for the
 * rehearsals of a first launch's path (code and data). The stride is a cache line. */
static inline void ag_prefetch(const void *p, size_t len, int write)
{
    for (size_t i = 0; i < len; i += 64) {
        if (write)
            __builtin_prefetch((const char *)p + i, 1, 3);
        else
            __builtin_prefetch((const char *)p + i, 0, 3);
    }
}

/* A cheap, monotonic tick counter for measuring short stretches (the TSC on x86, the generic
 * timer on aarch64); ticks are converted to time by measuring them against the clock. */
static inline uint64_t ag_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
#error "ag_ticks: no tick counter for this CPU"
#endif
}

#endif
