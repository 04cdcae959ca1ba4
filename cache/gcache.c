/* Built graphs and their limits (see gcache.h). */
#include "cache/gcache.h"

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/driver.h"
#include "cache/fill.h"
#include "cache/lock.h"

atomic_long ag_graphs_live, ag_graph_mem_live;

/* Every built template of every stream, most recently replayed first: a stream that needs
 * room evicts from the tail, whichever stream's graphs are there. A template is on the list
 * exactly while its nbuilt > 0; both change only under its stream's lock, and the links also
 * under g_lru.mu, taken briefly inside a stream lock (never a stream lock after it, except by
 * trylock: see lru_victim). head is also read without the lock, as a hint (ag_gcache_front). */
static struct {
    ag_lock_t mu;
    ag_tmpl *head, *tail;
} g_lru;

static void lru_set_head(ag_tmpl *T)
{
    __atomic_store_n(&g_lru.head, T, __ATOMIC_RELAXED);
}

/* Under g_lru.mu, T on the list. */
static void lru_unlink_locked(ag_tmpl *T)
{
    if (T->lru_prev)
        T->lru_prev->lru_next = T->lru_next;
    else
        lru_set_head(T->lru_next);
    if (T->lru_next)
        T->lru_next->lru_prev = T->lru_prev;
    else
        g_lru.tail = T->lru_prev;
    T->lru_prev = T->lru_next = NULL;
}

/* Moves T (on the list, or joining it: its first piece just built) to the front. A loop
 * replays the same template again and again, and then it is at the front already: a relaxed
 * look says so without the lock. The look is exact for T's membership (only T's stream, under
 * its lock, puts T at the front or takes it off the list), a hint only for the order. */
void ag_gcache_front(ag_stream *st, ag_tmpl *T)
{
    if (__atomic_load_n(&g_lru.head, __ATOMIC_RELAXED) == T)
        return;
    ag_lock(&g_lru.mu);
    if (g_lru.head != T) {
        if (T->lru_prev) /* on the list (every member but the head has a predecessor) */
            lru_unlink_locked(T);
        else
            T->st = st; /* joining: read by lru_victim, under g_lru.mu */
        T->lru_next = g_lru.head;
        if (g_lru.head)
            g_lru.head->lru_prev = T;
        else
            g_lru.tail = T;
        lru_set_head(T);
    }
    ag_unlock(&g_lru.mu);
}

static void lru_unlink(ag_tmpl *T)
{
    ag_lock(&g_lru.mu);
    lru_unlink_locked(T);
    ag_unlock(&g_lru.mu);
}

/* The least recently replayed built template other than T whose stream's lock the caller
 * holds now: one of st's own (its lock is held already), or another stream's whose lock it
 * takes here by trylock -- never waited for, so no thread ever waits on a second stream lock;
 * a stream busy right now is passed over. *vs: the victim's stream (unlock it when not st).
 * Returns NULL when none can be had. The victim stays on the list (its stream's lock keeps
 * it there) until ag_tmpl_drop_graph takes it off. */
static ag_tmpl *lru_victim(ag_stream *st, ag_tmpl *T, ag_stream **vs)
{
    ag_lock(&g_lru.mu);
    ag_tmpl *v = g_lru.tail;
    while (v && (v == T || (v->st != st && !ag_trylock(&v->st->mu))))
        v = v->lru_prev;
    if (v)
        *vs = v->st;
    ag_unlock(&g_lru.mu);
    return v;
}

/* Destroys every piece's graph and exec of T (T stays, and may be built again). */
void ag_tmpl_drop_graph(ag_stream *st, ag_tmpl *T)
{
    AG_ASSERT(ag_lock_held(&st->mu));
    (void)st;
    for (uint32_t p = 0; p < T->npieces; p++) {
        ag_piece *P = &T->pieces[p];
        if (P->exec)
            ag_drv.cuGraphExecDestroy(P->exec);
        if (P->alt)
            ag_drv.cuGraphExecDestroy(P->alt);
        if (P->graph)
            ag_drv.cuGraphDestroy(P->graph);
        P->exec = P->alt = NULL;
        P->graph = NULL;
        P->flips = P->alt_misses = 0;
        P->pending = 0; /* (a build under way is for the old generation: thrown away) */
        P->fresh = 0;
    }
    T->gen++;
    for (uint32_t i = 0; i < T->len; i++)
        T->nodes[i].node = NULL;
    if (T->nbuilt) {
        atomic_fetch_sub(&ag_graphs_live, 1);
        atomic_fetch_sub(&ag_graph_mem_live, (long)T->mem_est);
        lru_unlink(T);
    }
    T->nbuilt = 0;
    T->mem_est = 0;
}

/* Reserves room for `est` more bytes of T's graphs (and, for its first piece, one more graph)
 * within AUTOGRAPH_MAX_GRAPHS and MAX_GRAPH_MEM, destroying the least recently replayed graphs
 * of any stream if need be (lru_victim). The reservation is taken first and checked after, so
 * that threads building at once cannot all slip under the limit. Returns 0 when reserved. */
int ag_gcache_reserve(ag_stream *st, ag_tmpl *T, size_t est)
{
    long max_graphs = (long)ag_opt(AG_OPT_MAX_GRAPHS), max_mem = (long)ag_opt(AG_OPT_MAX_GRAPH_MEM);
    long one = T->nbuilt ? 0 : 1;
    for (;;) {
        long g = atomic_fetch_add(&ag_graphs_live, one) + one;
        long m = atomic_fetch_add(&ag_graph_mem_live, (long)est) + (long)est;
        if (g <= max_graphs && m <= max_mem)
            return 0;
        atomic_fetch_sub(&ag_graphs_live, one);
        atomic_fetch_sub(&ag_graph_mem_live, (long)est);
        ag_stream *vs;
        ag_tmpl *victim = lru_victim(st, T, &vs);
        if (!victim)
            return -1;
        ag_log(AG_LOG_DEBUG, "evicting graph of sequence %016llx (%u launches)%s",
               (unsigned long long)victim->key, victim->len, vs != st ? " of another stream" : "");
        /* The victim may be its stream's occurrence under way, some pieces out already: a
         * piece whose exec is gone is built again when its launches are held (replay). */
        ag_tmpl_drop_graph(vs, victim);
        if (vs != st)
            ag_unlock(&vs->mu);
        ag_stat_inc(AG_ST_GRAPH_EVICTED);
    }
}

void ag_gcache_release(const ag_tmpl *T, size_t est)
{
    atomic_fetch_sub(&ag_graphs_live, T->nbuilt ? 0 : 1);
    atomic_fetch_sub(&ag_graph_mem_live, (long)est);
}

/* The device memory piece p of T is estimated to take. */
size_t ag_piece_mem(const ag_tmpl *T, uint32_t p)
{
    uint32_t s = ag_piece_start(T, p), e = ag_piece_gend(T, p);
    size_t est = (size_t)(e - s) * AG_NODE_MEM_EST;
    for (uint32_t i = s; i < e; i++)
        est += T->nodes[i].lay->size;
    return est;
}
