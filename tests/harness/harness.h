/* What the CPU harness programs share: checks, the fake's kernels, logs of what ran.
 *
 * Every kernel here records what it did: it appends (kernel id, argument, value) to a log in
 * host-visible memory, and/or folds its arguments into an order-sensitive checksum. The
 * programs compare logs and checksums with what the host computes, after synchronising, so a
 * launch that is lost, late (a missing flush) or out of order makes them fail. */
#ifndef HARNESS_H
#define HARNESS_H

#include <stdint.h>
#include <stdio.h>

#include "fakecuda.h"

/* ---- checks ------------------------------------------------------------------------------ */
#define CK(call) hx_check((call), #call, __FILE__, __LINE__)
void hx_check(CUresult r, const char *what, const char *file, int line);
__attribute__((noreturn, format(printf, 1, 2))) void hx_fail(const char *fmt, ...);
#define HX_ASSERT(cond, ...)                                                                   \
    do {                                                                                       \
        if (!(cond))                                                                           \
            hx_fail(__VA_ARGS__);                                                              \
    } while (0)

/* cuInit, the primary context of device 0 made current. */
CUcontext hx_init(void);
/* Prints the fake's counters ("fakecuda: <name> <value>") and "PASS <name>" on stdout. */
void hx_pass(const char *name);
/* An integer from argv[i] or the default. */
long hx_arg(int argc, char **argv, int i, long def);

/* ---- logs ---------------------------------------------------------------------------------- */
typedef struct hx_entry {
    uint32_t kid, a;
    uint64_t b;
} hx_entry;

typedef struct hx_log {
    uint32_t n, cap, overflow, pad;
    hx_entry e[];
} hx_log;

/* A log of `cap` entries in pinned host memory (cuMemAllocHost_v2). */
hx_log *hx_log_new(uint32_t cap);
/* Initialises a log placed in memory the caller provides (size: hx_log_bytes(cap)). */
void hx_log_init(hx_log *l, uint32_t cap);
size_t hx_log_bytes(uint32_t cap);
/* Appends {kid, a, b} (a kernel's record: the fake runs kernels on its stream threads); a full
 * log is marked overflowed, which hx_log_expect reports. */
void hx_log_put(hx_log *l, uint32_t kid, uint32_t a, uint64_t b);
/* Checks that the log holds exactly from + n entries, the last n being exp. */
void hx_log_expect(const hx_log *l, uint32_t from, const hx_entry *exp, uint32_t n,
                   const char *what, long iter);

/* The order-sensitive checksum the accumulating kernels compute. */
static inline uint64_t hx_mix(uint64_t acc, uint32_t kid, uint32_t val)
{
    acc ^= (uint64_t)kid * 0x9E3779B97F4A7C15ull + val;
    acc *= 0x100000001B3ull;
    return acc ^ (acc >> 29);
}

/* ---- kernels ------------------------------------------------------------------------------- */
/* Parameter layouts (the fake's natural alignment gives the C struct offsets). */
typedef struct { hx_log *log; uint32_t kid, val; } hx_p_rec;            /* 8,4,4 */
typedef struct { hx_log *log; uint64_t v; uint8_t kid; uint16_t x; } hx_p_rec64; /* 8,8,1,2 */
typedef struct { hx_log *log; uint64_t *acc; uint32_t kid, val; } hx_p_acc;  /* 8,8,4,4 */
typedef struct { uint64_t *dst; const uint64_t *src; hx_log *log; uint32_t kid; } hx_p_copy;
typedef struct { uint32_t *flag; uint32_t v; } hx_p_flag;                /* 8,4 */

/* rec: log {kid, val, 0}.  rec64: log {kid, x, v}.
 * acc: *acc = hx_mix(*acc, kid, val); log {kid, val, *acc} when log is not NULL.
 * copy: *dst = *src; log {kid, 0, value} when log is not NULL.
 * flag: atomically stores v into *flag (release). */
CUfunction hx_kernel_rec(const char *name);
CUfunction hx_kernel_rec64(const char *name);
CUfunction hx_kernel_acc(const char *name);
CUfunction hx_kernel_copy(const char *name);
CUfunction hx_kernel_flag(const char *name);
/* The same kernels in a given module. */
CUfunction hx_module_rec(CUmodule m, const char *name);
CUfunction hx_module_rec64(CUmodule m, const char *name);

/* Launches through cuLaunchKernel (1 block of 32 threads); ptsz: cuLaunchKernel_ptsz. */
void hx_rec(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val);
void hx_rec64(CUfunction f, CUstream s, hx_log *log, uint64_t v, uint8_t kid, uint16_t x);
void hx_acc(CUfunction f, CUstream s, hx_log *log, uint64_t *acc, uint32_t kid, uint32_t val);
void hx_copy(CUfunction f, CUstream s, uint64_t *dst, const uint64_t *src, hx_log *log,
             uint32_t kid);
void hx_flag(CUfunction f, CUstream s, uint32_t *flag, uint32_t v);
void hx_rec_ptsz(CUfunction f, CUstream s, hx_log *log, uint32_t kid, uint32_t val);
/* n launches of a recording kernel f on s that never repeat (each with its own grid and
 * priority attribute: no segment and no period ever recurs), a synchronisation after every 8
 * and at the end; what they record goes to `scratch`, emptied at each synchronisation. */
void hx_never_repeat(CUfunction f, CUstream s, hx_log *scratch, long n);

/* "Device" memory (cuMemAlloc_v2) as a host pointer, set to `init` 64-bit words. */
uint64_t *hx_dev_u64(size_t n, uint64_t init);

/* A driver function looked up the way cuBLAS and cudart do: dlsym on a dlopen handle of
 * libcuda.so.1 (libautograph's dlsym hands out its wrapper for the functions it wraps). */
void *hx_driver_sym(const char *name);

/* Monotonic time in seconds. */
double hx_now(void);

/* ---- waiting for the library's worker -------------------------------------------------------- */
/* With the worker on, a graph is there when that thread has run, which on a loaded host can be
 * after the whole of a short loop. HX_SETTLE=1 in the environment makes a loop go on past its
 * iterations until at least as many of them ran entirely from graphs (the fake's
 * graph_kernels_executed) as not: the worker's results are then in the counts, however late
 * it ran. At most HX_SETTLE_MAX iterations in all (then the loop fails). Without HX_SETTLE a
 * loop runs its iterations, no more. */
#define HX_SETTLE_MAX 20000L
/* Kernels the fake driver has run from graphs so far (graph_kernels_executed). */
uint64_t hx_graph_kernels(void);
typedef struct hx_settle {
    int on;
    long graphed, other; /* iterations so far that ran entirely from graphs, and the others */
    uint64_t g0;
} hx_settle;
/* Reads HX_SETTLE; returns the most iterations the loop may run (its log's size). */
long hx_settle_init(hx_settle *st, long iters);
/* Whether iteration `it` runs (of `iters`); when it does, its graph kernels are counted from
 * now. */
int hx_settle_more(hx_settle *st, long it, long iters);
/* After iteration's synchronisation: it ran `kernels` kernels. */
void hx_settle_done(hx_settle *st, uint32_t kernels);

#endif
