/* Issuing records to the driver eagerly: one launch, a held list, the error a held launch left. */
/* The lowest layer of the launch path: everything above (holds, flushes, the launch path, the
 * watchdog) sends launches out through here, and nothing here calls back up. */
#include <stdlib.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/copy.h"
#include "cache/driver.h"
#include "cache/internal.h"

__attribute__((hot)) CUresult ag_launch_call(const ag_launch *l)
{
    switch (l->entry) {
    case AG_ENTRY_LAUNCH:
    case AG_ENTRY_LAUNCH_PTSZ: {
        CUresult (*fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                       unsigned, CUstream, void **, void **) =
            l->entry == AG_ENTRY_LAUNCH ? ag_drv.cuLaunchKernel : ag_drv.cuLaunchKernel_ptsz;
        return fn(l->f, l->grid[0], l->grid[1], l->grid[2], l->block[0], l->block[1],
                  l->block[2], l->smem, l->stream, l->params, l->extra);
    }
    case AG_ENTRY_EX:
        return ag_drv.cuLaunchKernelEx(l->config, l->f, l->params, l->extra);
    case AG_ENTRY_EX_PTSZ:
        return ag_drv.cuLaunchKernelEx_ptsz(l->config, l->f, l->params, l->extra);
    case AG_ENTRY_COOP:
        return ag_drv.cuLaunchCooperativeKernel(l->f, l->grid[0], l->grid[1], l->grid[2],
                                                l->block[0], l->block[1], l->block[2], l->smem,
                                                l->stream, l->params);
    default:
        return ag_drv.cuLaunchCooperativeKernel_ptsz(l->f, l->grid[0], l->grid[1], l->grid[2],
                                                     l->block[0], l->block[1], l->block[2],
                                                     l->smem, l->stream, l->params);
    }
}

/* Issues one held launch as the application made it, on the stream's canonical handle. Nothing
 * is allocated here: a flush may come from the watchdog or an exiting thread, and a launch
 * must not be lost to a failed malloc (ag_hold_one reserved st->ptrs). */
static CUresult issue(ag_stream *st, const ag_rec *r)
{
    if (r->shape.kind == AG_KIND_COPY)
        return ag_copy_issue(st, r); /* a memset or copy (copy.c) */
    const ag_shape *s = &r->shape;
    void *ptrs_small[16], **ptrs = r->lay->nparams <= 16 ? ptrs_small : st->ptrs;
    if (r->lay->nparams > st->ptrs_cap && ptrs != ptrs_small)
        return CUDA_ERROR_OUT_OF_MEMORY; /* cannot happen: reserved when it was held */
    ag_params_ptrs(r->lay, st->arena + r->blob, ptrs);
    int attrs = s->kind == AG_KIND_ATTRS;
    const ag_dims *d = &r->dims;
    CUlaunchConfig c = { d->grid[0], d->grid[1], d->grid[2], d->block[0], d->block[1],
                         d->block[2], d->smem, st->issue,
                         attrs ? (CUlaunchAttribute *)(st->arena + r->attrs) : NULL,
                         attrs ? s->nattrs : 0 };
    /* (the function itself: s->fn is its class's, params.h) */
    ag_launch l = { (CUfunction)r->lay->handle, { d->grid[0], d->grid[1], d->grid[2] },
                    { d->block[0], d->block[1], d->block[2] }, d->smem, st->issue, NULL, 0,
                    r->lay->nparams ? ptrs : NULL, NULL,
                    s->kind == AG_KIND_COOP ? AG_ENTRY_COOP : attrs ? AG_ENTRY_EX : AG_ENTRY_LAUNCH,
                    &c };
    return ag_launch_call(&l);
}

/* A held launch failed when it went out: the application was told CUDA_SUCCESS for it, so the
 * error stays on the stream and its next call returns it (ag_stream_error_take), as the driver
 * returns an earlier launch's error at a sync. The first error is kept. */
static void error_keep(ag_stream *st, CUresult r)
{
    if (!st->err)
        __atomic_store_n(&st->err, (uint16_t)(r > 0xffff ? CUDA_ERROR_UNKNOWN : r),
                         __ATOMIC_RELAXED);
    ag_rest_end(st); /* no call on it may pass on a rest token before the error is returned */
}

CUresult ag_stream_error_take(ag_stream *st, CUresult r)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    CUresult e = (CUresult)st->err;
    if (AG_LIKELY(!e) || r != CUDA_SUCCESS)
        return r; /* the call's own error first; the held launch's comes at the next call */
    __atomic_store_n(&st->err, 0, __ATOMIC_RELAXED);
    return e;
}

void ag_issue_held(ag_stream *st, enum ag_stat fate)
{
    ag_issue_held_from(st, 0, fate);
}

void ag_issue_held_from(ag_stream *st, uint32_t first, enum ag_stat fate)
{
    AG_ASSERT(ag_lock_held(&st->mu) && first <= st->nheld);
    uint32_t copies = 0;
    for (uint32_t i = first; i < st->nheld; i++) {
        copies += st->held[i].shape.kind == AG_KIND_COPY;
        CUresult r = issue(st, &st->held[i]);
        if (r != CUDA_SUCCESS) {
            ag_stat_inc(AG_ST_FAIL_EAGER);
            ag_log(AG_LOG_WARN, "held launch of %s failed on flush (%d): the next call on "
                   "stream %p returns the error", st->held[i].lay->name, (int)r,
                   (void *)st->handle);
            error_keep(st, r);
        }
    }
    ag_stat_add(AG_ST_FLUSHED, st->nheld - first);
    ag_stat_add(fate, st->nheld - first - copies); /* where these launches went */
    if (copies)
        ag_stat_add(AG_ST_COPY_FLUSHED, copies);
}

/* The owner thread, as a hold begins: marks what the stream holds so far, so that a flush from
 * another thread can order the side stream after it. */
int ag_ptds_mark(ag_stream *st)
{
    if (!st->ev_start && ag_drv.cuEventCreate(&st->ev_start, CU_EVENT_DISABLE_TIMING))
        return -1;
    return ag_drv.cuEventRecord(st->ev_start, CU_STREAM_PER_THREAD) ? -1 : 0;
}

/* ---- the eager launch estimate ---------------------------------------------------------- */

/* What holding a launch saves, for planning pieces and the payback estimate. A sample is only
 * ever inflated (the thread preempted, an interrupt), never deflated, so the EWMA takes the
 * least of each four samples: one outlier on a loaded host must not make a short region look
 * worth a trial (cpu_harness_policy "a short region"). */
static uint64_t g_eager_ns;
static __thread unsigned t_nsamples __attribute__((tls_model("initial-exec")));
static __thread uint64_t t_least __attribute__((tls_model("initial-exec")));

uint64_t ag_eager_launch_ns(void)
{
    return __atomic_load_n(&g_eager_ns, __ATOMIC_RELAXED);
}

void ag_eager_sample(uint64_t d)
{
    if (!t_least || d < t_least)
        t_least = d;
    if (++t_nsamples & 3) /* not the fourth sample of a group yet */
        return;
    uint64_t old = ag_eager_launch_ns();
    __atomic_store_n(&g_eager_ns, old ? old - old / 8 + t_least / 8 : t_least, __ATOMIC_RELAXED);
    t_least = 0;
}
