/* mktrace: writes synthetic AUTOGRAPH_TRACE files (cache/tracefmt.h) of known patterns, for the
 * simulator's tests and gate until traces recorded on a GPU exist.
 *
 *   mktrace PATTERN FILE [N]  (FILE uncompressed; gzip -n it for tests/traces/)
 *
 * N > 1: the launches' GPU records as AUTOGRAPH_TRACE_GPU=N writes them: only the first launch
 * of each function (their dimensions are all alike here) and every N-th after it have one, and
 * the header says so (AG_TRF_GPU_SAMPLED); the trace is otherwise the same.
 *
 * Patterns (each an eager run of a made-up program, timed by a small model of its own: host
 * calls take the durations below with a deterministic jitter of a few percent, the GPU runs a
 * stream's work in order, each kernel starting no earlier than LATENCY after its launch began
 * and GAP after the previous one ended, a sync waits for the stream and costs SYNC):
 *   launch    a launch-bound loop: 64 tiny kernels and a stream sync per iteration (the only
 *             pattern without GPU durations: the simulator's tiny_kernel stands in)
 *   gpu       a GPU-bound async loop: 2 launches of 40 us GPU each, no syncs inside; timed
 *             by events (record, 20 iterations, record, event sync), GPU durations traced
 *   gap       a host-gapped loop: 20 us of host work between launches, a sync per iteration
 *   irregular a stream that never repeats: random kernels, random stretches between syncs,
 *             ~20 us of host work between stretches (like bench P4c)
 *   long      a long loop (8 kernels, one with an argument that changes every iteration)
 *             with a sync every 100 iterations
 *   fnclass   a decode-like loop: A, attn_j, B, attn_j and a sync, attn_j one of 4 copies of a
 *             kernel (one name and layout, 4 handles: a function class), each two steps in turn
 *   recorded  the launch loop with GPU durations as the recorder measured them on the H100 at
 *             aa1eda1 (events around each launch on an idle GPU): the launch call's host time
 *             plus bench/costs/h100.json's tiny_kernel_idle (the only pattern whose durations
 *             are not the work's own: no AG_TRF_GPU_EXACT)
 * The model's constants are those of bench/costs/default.json (the tests pass that table). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/tracefmt.h"

#define LAUNCH_NS 2850u
#define SYNC_NS 250u
#define RECORD_NS 400u
#define GAP_NS 1000u
#define LATENCY_NS 4000u
#define TINY_NS 700u
#define H100_TINY_IDLE_NS 2398u /* bench/costs/h100.json gpu_ns.tiny_kernel_idle */

static FILE *out;
static uint64_t T = 1000;     /* host clock */
static uint64_t ready;        /* the one stream's GPU */
static uint32_t seq, calls;
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static int with_gpu;
static const uint64_t STREAM = 0x5000;

static uint32_t rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng >> 33);
}

/* d, jittered by up to +-3% */
static uint32_t jit(uint32_t d)
{
    return d - d * 3 / 100 + rnd() % (d * 6 / 100 + 1);
}

static void emit(void *rec, size_t size)
{
    static const char zero[8];
    ag_tr_hdr *h = rec;
    size_t padded = (size + 7) & ~(size_t)7;
    h->size = (uint16_t)padded;
    fwrite(rec, 1, size, out);
    fwrite(zero, 1, padded - size, out);
}

static void hdr(ag_tr_hdr *h, int type, uint32_t dur)
{
    memset(h, 0, sizeof *h);
    h->type = (uint16_t)type;
    h->tid = 1;
    h->t_ns = T;
    h->dur_ns = dur;
    h->stream = STREAM;
    if (type == AG_TR_LAUNCH || type == AG_TR_OP || type == AG_TR_COPY) {
        h->seq = seq++;
        calls++;
    }
}

static void name(uint32_t id, const char *s)
{
    char buf[256];
    ag_tr_name *n = (ag_tr_name *)buf;
    memset(buf, 0, sizeof buf);
    hdr(&n->h, AG_TR_NAME, 0);
    n->id = id;
    n->len = (uint32_t)strlen(s);
    memcpy(n + 1, s, n->len + 1);
    emit(n, sizeof *n + n->len + 1);
}

/* a function of nparams 8-byte parameters */
static void func(uint32_t id, uint32_t nparams, const char *nm)
{
    char buf[512];
    memset(buf, 0, sizeof buf);
    ag_tr_func *f = (ag_tr_func *)buf;
    hdr(&f->h, AG_TR_FUNC, 0);
    f->handle = 0x7f0000000000ull + 0x100ull * id;
    f->id = id;
    f->flags = AG_TRFN_LAYOUT;
    f->param_bytes = nparams * 8;
    f->nparams = nparams;
    f->name_len = (uint32_t)strlen(nm);
    uint32_t *p = (uint32_t *)(f + 1);
    for (uint32_t i = 0; i < nparams; i++)
        p[i] = (i * 8) << 16 | 8;
    memcpy(p + nparams, nm, f->name_len + 1);
    emit(f, sizeof *f + 4 * nparams + f->name_len + 1);
}

static void stream_rec(void)
{
    ag_tr_stream s;
    hdr(&s.h, AG_TR_STREAM, 0);
    s.flags = 0;
    s.priority = 0;
    s.ctx = 0xC7C7;
    emit(&s, sizeof s);
}

static void gpu_rec(uint32_t of, uint32_t ns)
{
    if (!with_gpu)
        return;
    ag_tr_gpu g;
    hdr(&g.h, AG_TR_GPU, 0);
    g.of_seq = of;
    g.gpu_ns = ns;
    emit(&g, sizeof g);
}

static int recorded; /* GPU durations as the recorder measures them on an idle GPU */
static uint32_t sample_n = 1;     /* one launch in N of each function timed */
static uint64_t func_launches[64];

static int pdl_launches; /* the `pdl` pattern: launches through cuLaunchKernelEx with PDL */

static void launch(uint32_t fid, uint32_t nparams, uint64_t hash, uint32_t gpu_ns)
{
    ag_tr_launch L;
    memset(&L, 0, sizeof L);
    uint32_t dur = jit(LAUNCH_NS);
    if (recorded)
        gpu_ns = dur + H100_TINY_IDLE_NS;
    hdr(&L.h, AG_TR_LAUNCH, dur);
    L.func = fid;
    L.entry = 0; /* cuLaunchKernel */
    if (pdl_launches) { /* cuLaunchKernelEx, programmatic stream serialisation on */
        L.entry = 2;
        L.attrs = 1u << 6; /* CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION */
        L.pdl = 1;
    }
    L.grid[0] = 16, L.grid[1] = L.grid[2] = 1;
    L.block[0] = 256, L.block[1] = L.block[2] = 1;
    L.param_bytes = nparams * 8;
    L.param_hash = hash;
    uint64_t start = ready + GAP_NS > T + LATENCY_NS ? ready + GAP_NS : T + LATENCY_NS;
    ready = start + gpu_ns;
    emit(&L, sizeof L);
    if (func_launches[fid % 64]++ % sample_n == 0)
        gpu_rec(L.h.seq, gpu_ns);
    T += dur;
}

enum { N_SYNC = 1, N_RECORD, N_EVSYNC, N_PSTART, N_PSTOP };

static void op(uint32_t nm, int cls, uint64_t arg, uint32_t dur)
{
    ag_tr_op o;
    memset(&o, 0, sizeof o);
    hdr(&o.h, AG_TR_OP, dur);
    o.name = nm;
    o.cls = (uint8_t)cls;
    o.arg = arg;
    emit(&o, sizeof o);
    T += dur;
}

static void sync_stream(void)
{
    uint64_t end = T + jit(SYNC_NS);
    if (ready > end)
        end = ready;
    op(N_SYNC, AG_TRC_STREAM, 0, (uint32_t)(end - T));
}

static uint64_t ev_t[4];

static void record(int ev)
{
    ev_t[ev] = ready;
    op(N_RECORD, AG_TRC_STREAM, 0xE0 + (uint64_t)ev, jit(RECORD_NS));
}

static void event_sync(int ev)
{
    uint64_t end = T + jit(SYNC_NS);
    if (ev_t[ev] > end)
        end = ev_t[ev];
    op(N_EVSYNC, AG_TRC_OTHER, 0xE0 + (uint64_t)ev, (uint32_t)(end - T));
}

static uint64_t h64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x | 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: mktrace launch|pdl|gpu|gap|irregular|long|region|recorded FILE [N]\n");
        return 2;
    }
    if (argc == 4 && (sample_n = (uint32_t)strtoul(argv[3], NULL, 10)) < 1)
        sample_n = 1;
    const char *pat = argv[1];
    /* launch, region: no GPU durations (tiny_kernel used) */
    with_gpu = strcmp(pat, "launch") != 0 && strcmp(pat, "region") != 0;
    if (!(out = fopen(argv[2], "wb"))) {
        perror(argv[2]);
        return 1;
    }
    ag_tr_file f;
    memset(&f, 0, sizeof f);
    memcpy(f.magic, AG_TR_MAGIC, 8);
    f.version = AG_TR_VERSION;
    f.hdr_size = sizeof f;
    f.t0_ns = 123456789;
    f.pid = 4242;
    recorded = !strcmp(pat, "recorded");
    pdl_launches = !strcmp(pat, "pdl");
    /* durations: this model's own, but for `recorded` */
    f.flags = with_gpu ? AG_TRF_GPU | (recorded ? 0 : AG_TRF_GPU_EXACT) |
                             (sample_n > 1 ? AG_TRF_GPU_SAMPLED : 0)
                       : 0;
    snprintf(f.host, sizeof f.host, "synthetic");
    snprintf(f.cmd, sizeof f.cmd, "mktrace %s", pat);
    fwrite(&f, 1, sizeof f, out);
    name(N_SYNC, "cuStreamSynchronize");
    name(N_RECORD, "cuEventRecord");
    name(N_EVSYNC, "cuEventSynchronize");
    name(N_PSTART, "cuProfilerStart");
    name(N_PSTOP, "cuProfilerStop");
    stream_rec();
    if (!strcmp(pat, "launch") || recorded || pdl_launches) {
        func(1, 3, "_Z4tinyPfif");
        for (int it = 0; it < 200; it++) {
            for (int k = 0; k < 64; k++)
                launch(1, 3, h64((uint64_t)k), TINY_NS);
            sync_stream();
            T += jit(2000); /* the loop's own work */
        }
    } else if (!strcmp(pat, "region")) {
        /* the launch loop, its last 150 of 200 iterations marked as the timed region
         * (cudaProfilerStart/Stop, as a program tells a profiler) */
        func(1, 3, "_Z4tinyPfif");
        for (int it = 0; it < 200; it++) {
            if (it == 50)
                op(N_PSTART, AG_TRC_OTHER, 0, 300);
            for (int k = 0; k < 64; k++)
                launch(1, 3, h64((uint64_t)k), TINY_NS);
            sync_stream();
            T += jit(2000);
        }
        op(N_PSTOP, AG_TRC_OTHER, 0, 300);
    } else if (!strcmp(pat, "gpu")) {
        func(1, 4, "_Z5gemm1PKfS0_Pfi");
        func(2, 4, "_Z5gemm2PKfS0_Pfi");
        for (int rep = 0; rep < 100; rep++) {
            record(0);
            for (int it = 0; it < 20; it++) {
                launch(1, 4, h64(1), 40000);
                launch(2, 4, h64(2), 40000);
            }
            record(1);
            event_sync(1);
            T += jit(5000);
        }
    } else if (!strcmp(pat, "gap")) {
        func(1, 2, "_Z4stepPfi");
        for (int it = 0; it < 60; it++) {
            for (int k = 0; k < 64; k++) {
                launch(1, 2, h64((uint64_t)k), TINY_NS);
                T += jit(20000);
            }
            sync_stream();
        }
    } else if (!strcmp(pat, "irregular")) {
        for (uint32_t id = 1; id <= 50; id++) {
            char nm[32];
            snprintf(nm, sizeof nm, "_Z6kernel%uPf", id);
            func(id, 2, nm);
        }
        for (int n = 0; n < 12000;) {
            int len = 1 + (int)(rnd() % 13);
            for (int k = 0; k < len; k++, n++)
                launch(1 + rnd() % 50, 2, h64(rnd()), TINY_NS + rnd() % 2000);
            if (rnd() % 3 == 0)
                sync_stream();
            T += jit(20000); /* P4c-like: ~8 launches per ~45 us iteration */
        }
    } else if (!strcmp(pat, "long")) {
        for (uint32_t id = 1; id <= 8; id++) {
            char nm[32];
            snprintf(nm, sizeof nm, "_Z5layer%uPfS_", id);
            func(id, 3, nm);
        }
        for (int it = 0; it < 4000; it++) {
            for (uint32_t k = 1; k <= 8; k++)
                launch(k, 3, k == 5 ? h64(1000u + (uint64_t)it) : h64(k), 1500);
            T += jit(1000);
            if (it % 100 == 99)
                sync_stream();
        }
        sync_stream();
    } else if (!strcmp(pat, "fnclass")) {
        func(1, 3, "_Z5stepAPfS_f");
        func(2, 3, "_Z5stepBPfS_f");
        for (uint32_t id = 3; id <= 6; id++)
            func(id, 3, "_Z4attnPfS_f");
        for (int it = 0; it < 400; it++) {
            uint32_t attn = 3 + (uint32_t)(it / 2 % 4);
            launch(1, 3, h64(1), TINY_NS);
            launch(attn, 3, h64(2), TINY_NS);
            launch(2, 3, h64(3), TINY_NS);
            launch(attn, 3, h64(4), TINY_NS);
            sync_stream();
            T += jit(2000);
        }
    } else {
        fprintf(stderr, "mktrace: unknown pattern %s\n", pat);
        return 2;
    }
    ag_tr_end e;
    hdr(&e.h, AG_TR_END, 0);
    e.calls = calls;
    e.dropped = 0;
    emit(&e, sizeof e);
    return fclose(out) ? 1 : 0;
}
