/* Where every launch went: the fate of a launch that goes out eagerly while its stream learns. */
/* Each launch is counted once under one fate (policy/stats.h, AG_FATES) where its fate is
 * decided: launch.c for what passes, flush.c and hold.c for what was held and goes out
 * eagerly, graph.c for what a graph ran. What passes on the learning path is told apart here:
 * an eager occurrence of a template (eager by policy: waiting for its payback, in a probe, a
 * trial's eager turn, off after a lost trial, GPU-bound, backing off) or a launch that is only
 * learned. The learner counts a closed segment as an eager occurrence of a template when the
 * segment is that template (tmpl.c, ag_on_closed); here the same is followed launch by launch:
 * a segment that begins with a template's first launch and goes on with its next ones. */
#include "cache/internal.h"

enum ag_stat ag_fate_eager(ag_stream *st, const ag_shape *sh, uint64_t h,
                           const CUlaunchAttribute *at)
{
    AG_ASSERT(ag_lock_held(&st->mu) && !st->cand);
    ag_tmpl *T = st->eager_tmpl;
    if (ag_learn_starting(&st->learn)) { /* a segment begins: a template's occurrence may */
        T = NULL;
        if (st->ntmpl && (st->first_bits[(h >> 6) & 3] & (1ull << (h & 63)))) {
            ag_bucket *b = ag_bucket_of(st, h);
            for (T = b ? b->head : NULL; T && !ag_node_matches(T, 0, sh, h, at);)
                T = T->next_first;
        }
        st->eager_pos = 0;
    } else if (T && !ag_node_matches(T, st->eager_pos, sh, h, at)) {
        T = NULL; /* the segment left it (or outgrew it) */
    }
    st->eager_tmpl = T;
    if (!T)
        return AG_ST_FATE_EAGER_LEARNING;
    st->eager_pos++;
    return AG_ST_FATE_EAGER_POLICY;
}
