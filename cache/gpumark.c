/* GPU occurrence marks for cost/benefit probes and trials (see gpumark.h and
 * policy/benefit.h). */
#include "gpumark.h"

#include <stdlib.h>

#include "policy/log.h"
#include "policy/stats.h"
#include "driver.h"
#include "internal.h"

enum { M_FREE, M_OPEN, M_DONE, M_VOID };

static ag_mark *slot(ag_marks *k, uint32_t i)
{
    return &k->m[(k->head + i) % AG_MARKS];
}

static void pop(ag_marks *k)
{
    slot(k, 0)->state = M_FREE;
    slot(k, 0)->T = NULL;
    k->head = (k->head + 1) % AG_MARKS;
    k->n--;
    if (k->open >= 0)
        k->open--;
}

/* Reads back pairs of consecutive marks of one template whose later event the GPU has
 * passed; stops at the first it has not (later ones on the stream cannot be done either). */
static void harvest(ag_marks *k)
{
    while (k->n) {
        ag_mark *a = slot(k, 0);
        if (a->state == M_OPEN)
            return;
        if (a->state != M_DONE || !a->T) {
            pop(k);
            continue;
        }
        ag_mark *b = NULL;
        for (uint32_t j = 1; j < k->n && !b; j++)
            if (slot(k, j)->T == a->T && slot(k, j)->state != M_VOID)
                b = slot(k, j);
        if (!b || b->state == M_OPEN)
            return; /* its successor has not ended yet */
        if (b->seq == a->seq + 1 && b->trial_id == a->trial_id) {
            CUresult q = ag_drv.cuEventQuery(b->ev);
            if (q == CUDA_ERROR_NOT_READY)
                return;
            float ms = 0;
            if (q == CUDA_SUCCESS && ag_drv.cuEventElapsedTime_v2(&ms, a->ev, b->ev) == CUDA_SUCCESS &&
                ms > 0)
                ag_benefit_gpu(a->T->bp, a->trial_id, a->graph, a->build,
                               (uint64_t)((double)ms * 1e6));
        }
        pop(k);
    }
}

void ag_mark_begin(ag_stream *st, ag_tmpl *T, int graph)
{
    ag_marks *k = st->marks;
    if (!ag_benefit_want_gpu_mark(T->bp) || (k && k->off) ||
        !ag_drv.cuEventQuery || !ag_drv.cuEventElapsedTime_v2 ||
        atomic_load_explicit(&ag_hot.captures, memory_order_acquire))
        return;
    if (!k) {
        if (!(k = st->marks = calloc(1, sizeof *k)))
            return;
        k->open = -1;
    }
    if (k->open >= 0) /* an occurrence that never ended */
        ag_mark_end(st, NULL, 0);
    if (k->n && ag_benefit_want_look(T->bp, graph)) {
        /* Has the GPU reached the previous occurrence's start (the newest mark, when it is
         * T's previous occurrence, in the same mode)? Not yet: more than a whole occurrence
         * is queued ahead of this one (policy/benefit.h). One query, never a wait. */
        ag_mark *p = slot(k, k->n - 1);
        if (p->T == T && p->state == M_DONE && p->seq == T->mark_seq && p->graph == graph) {
            CUresult q = ag_drv.cuEventQuery(p->ev);
            uint32_t bounds = T->bp->gpu_bounds;
            if (q == CUDA_SUCCESS || q == CUDA_ERROR_NOT_READY)
                ag_benefit_behind(T->bp, graph, q == CUDA_ERROR_NOT_READY);
            if (T->bp->gpu_bounds != bounds) {
                ag_tmpl_noted_gpu_bound(T);
                T->mark_seq++; /* this occurrence is not marked: the chain breaks */
                return;
            }
        }
    }
    harvest(k);
    if (k->n == AG_MARKS)
        pop(k); /* the GPU is far behind: drop the oldest */
    ag_mark *m = slot(k, k->n);
    if ((!m->ev && ag_drv.cuEventCreate(&m->ev, CU_EVENT_DEFAULT)) ||
        ag_drv.cuEventRecord(m->ev, st->issue)) {
        k->off = 1;
        return;
    }
    m->T = T;
    m->trial_id = T->bp->trial_id;
    m->graph = (uint8_t)graph;
    m->build = 0;
    m->state = M_OPEN;
    k->open = (int32_t)k->n++;
    ag_benefit_marked(T->bp);
}

void ag_mark_end(ag_stream *st, ag_tmpl *T, int build)
{
    ag_marks *k = st->marks;
    if (!k || k->open < 0) {
        if (T)
            T->mark_seq++; /* an unmarked occurrence between two marked ones */
        return;
    }
    ag_mark *m = slot(k, (uint32_t)k->open);
    k->open = -1;
    if (m->T && m->T == T) {
        m->state = M_DONE;
        m->build = (uint8_t)build;
        m->seq = ++T->mark_seq;
    } else {
        if (m->T)
            m->T->mark_seq++;
        if (T)
            T->mark_seq++;
        m->state = M_VOID;
    }
}

void ag_marks_free(ag_stream *st)
{
    ag_marks *k = st->marks;
    if (!k)
        return;
    st->marks = NULL;
    if (atomic_load(&ag_hot.state) == AG_ENGINE_ON)
        for (int i = 0; i < AG_MARKS; i++)
            if (k->m[i].ev)
                ag_drv.cuEventDestroy_v2(k->m[i].ev);
    free(k);
}

void ag_tmpl_noted_gpu_bound(const ag_tmpl *T)
{
    ag_stat_inc(AG_ST_POLICY_GPU_BOUND);
    ag_log(AG_LOG_DEBUG, "sequence %016llx: GPU-bound (the GPU is behind the host): eager, "
           "no graph, probed again after %u occurrences", (unsigned long long)T->key,
           T->bp->wait);
}
