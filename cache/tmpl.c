/* Templates: their making, index and piece plans, and what closed learning segments make of them. */
/* A template is made from a learned (or profile) sequence, indexed by its first shape, cut into
 * pieces once the costs are measured (policy/pieces.h), told its occurrences (policy/benefit.h),
 * and freed with its stream. Holding its launches and replaying it: hold.c. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/log.h"
#include "policy/options.h"
#include "policy/stats.h"
#include "cache/clock.h"
#include "cache/copy.h"
#include "cache/gpumark.h"
#include "cache/internal.h"
#include "cache/profile.h"
#include "cache/worker.h"

/* Templates one stream may keep (graphs are limited separately by AUTOGRAPH_MAX_GRAPHS). */
#define AG_MAX_TEMPLATES 2048
#define AG_LOOP_BODY 32 /* launches: a loop body this long is templated a sighting sooner */

/* ---- a template's making and freeing ---------------------------------------------------- */

/* Bytes of a node's values in a template's block: at least one (a function without
 * parameters), 8-aligned (values hold pointers). */
static size_t vals_bytes(const ag_layout *lay)
{
    return ((lay->size ? lay->size : 1) + 7) & ~(size_t)7;
}

ag_tmpl *ag_tmpl_new(uint64_t key, const ag_shape *shapes, const uint64_t *hashes, uint32_t len)
{
    /* layouts the worker has not probed yet make no template: known before allocating one (a
     * program's first template is fresh heap, a page fault: most of a 5-9 us ordering point
     * in a cuBLAS loop timed once on the H100 host, eighteenth session) */
    for (uint32_t i = 0; i < len; i++)
        if (shapes[i].kind != AG_KIND_COPY && ag_layout_awaited(shapes[i].fn))
            return NULL;
    ag_tmpl *T = calloc(1, sizeof *T);
    if (!T || !(T->nodes = calloc(len, sizeof *T->nodes)))
        goto fail;
    T->key = key;
    T->first_hash = hashes[0];
    T->len = len;
    size_t nattrs = 0, vals = 0;
    for (uint32_t i = 0; i < len; i++) {
        ag_node *n = &T->nodes[i];
        n->shape = shapes[i];
        n->shape_hash = hashes[i];
        n->lay = shapes[i].kind == AG_KIND_COPY ? ag_copy_layout(shapes[i].fn) /* copy.h */
                                                : ag_layout_known(shapes[i].fn);
        if (!n->lay || !n->lay->graphable || n->lay->size > AG_MAX_PARAM_BYTES)
            goto fail;
        nattrs += shapes[i].kind == AG_KIND_ATTRS ? shapes[i].nattrs : 0;
        vals += 2 * vals_bytes(n->lay);
    }
    /* attributes first (their alignment), then each node's exec and template values */
    T->block_size = nattrs * sizeof(CUlaunchAttribute) + vals;
    if (!(T->block = malloc(T->block_size)))
        goto fail;
    uint8_t *at = T->block;
    for (uint32_t i = 0; i < len; i++) {
        ag_node *n = &T->nodes[i];
        if (n->shape.kind == AG_KIND_ATTRS) {
            n->attrs = (CUlaunchAttribute *)(void *)at;
            at += n->shape.nattrs * sizeof(CUlaunchAttribute);
        }
    }
    for (uint32_t i = 0; i < len; i++) {
        ag_node *n = &T->nodes[i];
        n->exec_vals = at;
        n->graph_vals = at + vals_bytes(n->lay);
        at += 2 * vals_bytes(n->lay);
    }
    T->bp = &T->ben;
    ag_benefit_init(T->bp, ag_opt(AG_OPT_BENEFIT) == AG_BENEFIT_ALWAYS, len);
    ag_stat_add(AG_ST_SEQ_TEMPLATE_LAUNCHES, len);
    T->npieces = 1;
    T->ends[0] = len;
    /* trailing read-backs go out after the last piece's graph (fill.h, ag_piece_gend) */
    if (!ag_opt(AG_OPT_READBACK_NODES))
        while (T->tail < len - 1 && T->tail < UINT8_MAX &&
               ag_copy_is_readback(&T->nodes[len - 1 - T->tail].shape))
            T->tail++;
    return T;
fail:
    if (T)
        free(T->nodes);
    free(T);
    return NULL;
}

/* Whether p is in T's block (else it is a node's malloc'd alt_vals, or NULL). */
static int in_block(const ag_tmpl *T, const uint8_t *p)
{
    uintptr_t b = (uintptr_t)T->block, q = (uintptr_t)p;
    return q >= b && q < b + T->block_size;
}

void ag_tmpl_free(ag_stream *st, ag_tmpl *T)
{
    ag_tmpl_drop_graph(st, T);
    /* the exec and alt values swap (update.c): the one outside the block is freed */
    for (uint32_t i = 0; i < T->len; i++) {
        ag_node *n = &T->nodes[i];
        free(in_block(T, n->alt_vals) ? n->exec_vals : n->alt_vals);
    }
    free(T->block);
    free(T->nodes);
    free(T);
}

/* How many first launches T and U share. */
static uint32_t common_start(const ag_tmpl *T, const ag_tmpl *U)
{
    uint32_t m = U->len < T->len ? U->len : T->len, i = 0;
    while (i < m && U->nodes[i].shape_hash == T->nodes[i].shape_hash)
        i++;
    return i;
}

/* T's plan aligned with its longest planned sibling (policy/pieces.h, ag_pieces_align). */
static uint32_t align_siblings(ag_stream *st, const ag_tmpl *T, uint32_t *ends, uint32_t n)
{
    ag_bucket *b = ag_bucket_of(st, T->first_hash);
    const ag_tmpl *V = NULL;
    uint32_t common = 0;
    for (const ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first) {
        uint32_t c = U == T || !U->planned || U->related || U->npieces < 2 ? 0
                                                                           : common_start(T, U);
        if (c > common) {
            common = c;
            V = U;
        }
    }
    return V ? ag_pieces_align(V->ends, V->npieces, common, ends, n, T->len) : n;
}

/* Cuts T into pieces for pipelined replay (policy/pieces.h), from the host's time per launch
 * while T's launches are held and the graph and eager launch costs measured in this process,
 * and whether T's graph occurrences find the GPU still busy with earlier work (ben.queued:
 * then one piece, whatever AUTOGRAPH_PIECE says). Until the costs are known or guessed (below)
 * T is one piece; a plan that changes the pieces drops T's graphs. */
void ag_tmpl_plan(ag_stream *st, ag_tmpl *T, uint64_t held_ns, int guess)
{
    uint32_t ends[AG_MAX_PIECES], n = 1;
    ends[0] = T->len;
    /* Before this process's first measured graph launch its cost is guessed, where waiting
     * for the measure costs more than a rough plan:
     * - `guess`: the worker is about to build T's pieces (hold.c). A worker-built graph's first
     *   replay is no sample of the cost (graph.c), so a plan made at the second replay dropped
     *   the one-piece graph just built, and a further occurrence was held and issued eagerly
     *   while the pieces were built (D1 on the H100: 1.5 ms against 0.25 ms replayed). The
     *   guess is three quarters of an eager launch: on the H100 a graph launch took 2.7-3.6 us
     *   in steady state against 2.8-4.5 us eager (the first measured replays, 3-11 us, are the
     *   noisier guide), and in the replay model a whole eager launch cut P1 and F11 into
     *   pieces 5% slower than their measured plans, three quarters none (F3, whose eager
     *   launches are cheaper, 3% slower). A guess that left T one piece is planned again
     *   once the graph launch is measured and T's graphs are on (ag_complete, `plan_guessed`):
     *   a Thrust loop's 13-launch step, one piece on the guess, is three on the measure
     *   (model, T1: 1.141x -> 1.188x). Not a plan of several pieces: its graphs are rebuilt
     *   for a smaller change (model: F1 -0.6%, F15d -0.5%, F13 +4%).
     * - a sequence whose holds would outlast half of MAX_HOLD_US must be cut at once, or its
     *   first holds time out and it is turned off before it ever replays (a CNN forward:
     *   docs/MODEL.md): a whole eager launch, the safer guess (fewer, longer pieces).
     * Otherwise T stays one piece until its first replays have measured the cost. */
    uint64_t eager_ns = ag_eager_launch_ns(), graph_ns = ag_graph_launch_ns();
    uint64_t max_hold_ns = (uint64_t)ag_opt(AG_OPT_MAX_HOLD_US) * 1000;
    if (!graph_ns && held_ns * T->len > max_hold_ns / 2)
        graph_ns = eager_ns;
    else if (!graph_ns && guess)
        graph_ns = eager_ns * 3 / 4;
    ag_piece_costs c = { held_ns, eager_ns, graph_ns, max_hold_ns, T->bp->queued };
    if (c.queued && !T->plan_queued)
        ag_stat_inc(AG_ST_POLICY_WHOLE);
    T->plan_queued = T->bp->queued;
    T->plan_held_ns = held_ns;
    T->plan_guessed = !ag_graph_launch_ns();
    uint32_t fixed = (uint32_t)ag_opt(AG_OPT_PIECE);
    if (!T->related && fixed && c.queued) {
        T->planned = 1; /* the GPU is busy with earlier work: pieces would only cost */
    } else if (!T->related && fixed) {
        for (n = 0; n < AG_MAX_PIECES - 1 && (n + 1) * fixed < T->len; n++)
            ends[n] = (n + 1) * fixed;
        ends[n++] = T->len;
        T->planned = 1;
    } else if (!T->related && c.eager_ns && c.graph_ns) {
        n = ag_pieces_plan(T->len, &c, ends);
        T->planned = 1;
    }
    if (n > 1 && !c.queued)
        n = align_siblings(st, T, ends, n);
    if (n == T->npieces && !memcmp(ends, T->ends, n * sizeof *ends))
        return;
    ag_tmpl_drop_graph(st, T);
    if (T->bp == &T->ben) /* (a variant's cut is its own: the group's samples stand) */
        ag_benefit_replanned(T->bp);
    T->npieces = n;
    memcpy(T->ends, ends, n * sizeof *ends);
    ag_log(AG_LOG_DEBUG, "sequence %016llx (%u launches, %.1f us apart when held; a launch "
           "%.1f us eager, %.1f us a graph%s): %u piece%s%s", (unsigned long long)T->key, T->len,
           (double)held_ns / 1e3, (double)eager_ns / 1e3, (double)graph_ns / 1e3,
           ag_graph_launch_ns() ? "" : ", guessed", n, n > 1 ? "s" : "",
           c.queued ? " (the GPU is busy with earlier work when holds begin)" : "");
}

/* What a graph costs before it saves anything, for the payback estimate (policy/benefit.h,
 * ag_benefit_dormant). Build: adding, instantiating and uploading a node cost ~3.9 us on the
 * H100 (bench/costs/h100.json: 0.5 + 2.2 + 1.2), plus the calls' bases; a process's first
 * graph costs the driver a one-time set-up: ~230 us more than the next ones on the H100
 * (kernels/graph_first, 2026-11-24: 247-272 us for the first capture, instantiation, upload
 * and launch of 2 kernels, 26-35 us for the next); a trial records a mark (~1.3 us) at up to
 * twice its occurrences (~24 of them). */
#define PAYBACK_NODE_NS 4000ull
#define PAYBACK_BASE_NS 20000ull
#define PAYBACK_FIRST_GRAPH_NS 230000ull
#define PAYBACK_TRIAL_NS 48000ull
#define PAYBACK_EAGER_NS 4500ull   /* an eager launch, until sampled (h100.json: 4.5 us) */
#define PAYBACK_GRAPH_NS 2500ull   /* a graph launch, until measured (h100.json: 2.3 us) */

/* Occurrences a sequence must have been seen before its first probe: a graph saves at most
 * the launches' host time less a graph launch per occurrence, and a sequence seen n times is
 * expected about n times more, so it is measured only once n times that saving pays for the
 * trial. */
static uint32_t payback_need_len(uint32_t len)
{
    if (ag_opt(AG_OPT_BENEFIT) == AG_BENEFIT_NOW)
        return 0;
    uint64_t eager = ag_eager_launch_ns(), graph = ag_graph_launch_ns();
    if (!eager)
        eager = PAYBACK_EAGER_NS;
    if (!graph)
        graph = PAYBACK_GRAPH_NS;
    uint64_t save = len * eager > graph ? len * eager - graph : 0;
    uint64_t cost = len * PAYBACK_NODE_NS + PAYBACK_BASE_NS + PAYBACK_TRIAL_NS +
                    (ag_graph_built_once() ? 0 : PAYBACK_FIRST_GRAPH_NS);
    if (!save || cost / save >= UINT32_MAX / 2)
        return UINT32_MAX / 2;
    return (uint32_t)((cost + save - 1) / save);
}

static uint32_t payback_need(const ag_tmpl *T)
{
    return payback_need_len(T->len);
}

/* U is a variant of T: another learned template of T's bucket (the same first launch) whose
 * length is within an eighth of `of` launches (join_variants and trust_variants each measure
 * from their own reference). */
static int variant_of(const ag_tmpl *U, const ag_tmpl *T, uint32_t of)
{
    uint32_t d = U->len > T->len ? U->len - T->len : T->len - U->len;
    return U != T && !U->prof && !U->from_profile && 8 * d <= of;
}

/* A new template joins the variant group of an older one: it follows that one's policy (its
 * probe, trial, verdict and back-offs: one ag_benefit) instead of its own. Variants are
 * templates of the stream that start as the group's first does and are about as long (within
 * an eighth), AG_VARIANT_MIN launches or more (8 cost F10 and F24 in the model). A decode
 * step comes in variants that take turns (kernels PyTorch picks by the alignment of a growing
 * tensor and by powers of two of its length: a T5 step in 13 over 24 tokens, a Llama step in
 * 6), so a trial of each one's own collects its samples slowly, and in a run of a few
 * generate calls none finished (model: F24 0.987x, F15r 1.045x); one trial over all of them
 * samples every step. Its intervals run from one variant's start to the next's, one step
 * each, in the mode the step ran in. 1 when T joined. */
#define AG_VARIANT_MIN 16
static int join_variants(ag_stream *st, ag_tmpl *T)
{
    if (T->len < AG_VARIANT_MIN || T->from_profile || T->bp->always)
        return 0;
    ag_bucket *b = ag_bucket_of(st, T->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first) {
        if (!variant_of(U, T, U->len) || U->bp != &U->ben || U->len < AG_VARIANT_MIN)
            continue;
        T->bp = &U->ben;
        ag_stat_inc(AG_ST_POLICY_VARIANT_JOIN);
        ag_log(AG_LOG_DEBUG, "sequence %016llx: a variant of %016llx (the same first launch, "
               "%u launches against %u): one policy for both", (unsigned long long)T->key,
               (unsigned long long)U->key, T->len, U->len);
        return 1;
    }
    return 0;
}

/* T's trial just won: its variants take the verdict -- templates of the stream that start as
 * T does and are about as long (within an eighth), still probing (past their payback wait)
 * or in a trial of their own. A decode step comes in variants (kernels PyTorch picks by the
 * alignment of a growing tensor: a Llama step in six) that take turns, so each one's trial
 * collects its samples slowly, and in a run of a few generate calls most never finished
 * theirs (model, F15d: 1 of 6 graphed, 1.045x). They run on the same stream in the same loop,
 * so what paid for one pays for them; each is re-checked by a trial of its own later, like
 * any winner. A variant that lost its own trial keeps its verdict. */
static void trust_variants(ag_stream *st, const ag_tmpl *T)
{
    ag_bucket *b = ag_bucket_of(st, T->first_hash);
    for (ag_tmpl *U = b ? b->head : NULL; U; U = U->next_first) {
        if (!variant_of(U, T, T->len) ||
            !(ag_benefit_probing(U->bp) || U->bp->state == AG_BEN_TRIAL))
            continue;
        ag_benefit_trust(U->bp);
        ag_stat_inc(AG_ST_POLICY_VARIANT);
        ag_log(AG_LOG_DEBUG, "sequence %016llx: graphs pay for its variant %016llx (the same "
               "first launch, %u launches against %u): on without a trial of its own",
               (unsigned long long)U->key, (unsigned long long)T->key, U->len, T->len);
    }
}

/* An occurrence of T, told to its policy; a finished trial is counted. */
void ag_tmpl_occurred(ag_stream *st, ag_tmpl *T, int graph, int build, uint64_t t)
{
    if (ag_benefit_dormant(T->bp)) /* the costs may be better known now */
        ag_benefit_set_need(T->bp, 0, payback_need(T));
    int before = T->bp->state;
    uint32_t bounds = T->bp->gpu_bounds;
    if (t && ag_benefit_wants_span(T->bp, graph, build)) /* (it ends here: at an ordering
                                                             * point, or its last launch) */
        ag_benefit_span(T->bp, graph, build, ag_now_ns() - t);
    ag_benefit_occurred(T->bp, graph, build, t);
    if (T->bp != &T->ben)
        ag_benefit_gate_occurred(&T->ben, graph);
    if (T->bp->gpu_bounds != bounds)
        ag_tmpl_noted_gpu_bound(T);
    else if (before == AG_BEN_PROBE && T->bp->state == AG_BEN_TRIAL) {
        ag_stat_inc(AG_ST_POLICY_HOST_BOUND);
        ag_log(AG_LOG_DEBUG, "sequence %016llx: host-bound (its probe found the GPU caught up): "
               "a trial", (unsigned long long)T->key);
    }
    if (before == AG_BEN_TRIAL && T->bp->state != AG_BEN_TRIAL) {
        int on = T->bp->state == AG_BEN_ON;
        ag_stat_inc(on ? AG_ST_POLICY_ON : AG_ST_POLICY_OFF);
        if (ag_log_level() >= AG_LOG_DEBUG) {
            char samples[1024];
            ag_benefit_describe(T->bp, samples, sizeof samples);
            ag_log_write(AG_LOG_DEBUG, "sequence %016llx: %s (median %.1f us as a graph, %.1f "
                         "us eager; samples in us, %s)", (unsigned long long)T->key,
                         on ? "graphs pay" : "eager is as fast", T->bp->med_graph / 1e3,
                         T->bp->med_eager / 1e3, samples);
        }
        if (on)
            trust_variants(st, T);
    }
}

ag_bucket *ag_bucket_of(ag_stream *st, uint64_t first_hash)
{
    ag_bucket *b;
    HASH_FIND(hh, st->buckets, &first_hash, sizeof first_hash, b);
    return b;
}


/* The first template that starts with this launch and for which `want` says yes. */
static ag_tmpl *first_starting(ag_stream *st, const ag_shape *sh, uint64_t h,
                               const CUlaunchAttribute *at, int (*want)(const ag_tmpl *))
{
    if (!(st->first_bits[(h >> 6) & 3] & (1ull << (h & 63))))
        return NULL;
    ag_bucket *b = ag_bucket_of(st, h);
    for (ag_tmpl *T = b ? b->head : NULL; T; T = T->next_first)
        if (want(T) && ag_node_matches(T, 0, sh, h, at))
            return T;
    return NULL;
}

/* In a trial, and eager this time: its occurrence is marked on the GPU (gpumark.h). */
static int trial_eager(const ag_tmpl *T)
{
    return ag_benefit_want_gpu_mark(T->bp) && !ag_benefit_want_graph(T->bp);
}

/* In its probe, with no graph and none being built, and the worker would build it: this
 * occurrence is held all the same, to hand the worker the launches to build from, and goes out
 * eagerly (hold.c, complete_elsewhere; no sample of the probe's), so that the graph is ready
 * when the trial begins. Built after the probe instead, the trial's first occurrences went out
 * eagerly while its pieces were built (D1 on the H100: its first 3 timed steps, 0.8-2.0 ms
 * against 0.25 ms replayed). */
static int wants_snapshot(const ag_tmpl *T)
{
    return ag_benefit_probing(T->bp) && !T->pieces[0].exec && !T->pieces[0].pending &&
           !T->from_profile && !T->build_here && ag_worker_on();
}

static int want_held(const ag_tmpl *T)
{
    return ag_tmpl_wants_graph(T) || wants_snapshot(T);
}

ag_tmpl *ag_find_trial_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                             const CUlaunchAttribute *at)
{
    return first_starting(st, sh, h, at, trial_eager);
}

ag_tmpl *ag_find_start(ag_stream *st, const ag_shape *sh, uint64_t h,
                       const CUlaunchAttribute *at)
{
    return first_starting(st, sh, h, at, want_held);
}


/* ---- the template index ----------------------------------------------------------------- */

static void insert_template(ag_stream *st, ag_tmpl *T)
{
    ag_bucket *b = ag_bucket_of(st, T->first_hash);
    if (!b) {
        if (!(b = calloc(1, sizeof *b)))
            return;
        b->first_hash = T->first_hash;
        HASH_ADD(hh, st->buckets, first_hash, sizeof b->first_hash, b);
    }
    for (ag_tmpl *U = b->head; U; U = U->next_first) {
        uint32_t n = U->len < T->len ? U->len : T->len, i = common_start(T, U);
        if (i == n && U->len < T->len)
            U->has_ext = 1;
        else if (i == n && T->len < U->len)
            T->has_ext = 1;
        else
            continue;
        /* one extends the other: both are one piece, so that the hold can move from one to
         * the other at any point (see held_prefix_of) */
        T->related = 1;
        if (!U->related) {
            U->related = 1;
            if (U->npieces > 1)
                ag_tmpl_plan(st, U, 0, 0);
        }
    }
    T->next_first = b->head;
    b->head = T;
    st->first_bits[(T->first_hash >> 6) & 3] |= 1ull << (T->first_hash & 63);
    T->next_all = st->tmpls;
    st->tmpls = T;
    st->ntmpl++;
}

/* A provisional template (from the profile) has been held whole: it becomes a real template,
 * made of the launches actually held. Returns it, or NULL. */
ag_tmpl *ag_adopt_provisional(ag_stream *st, ag_tmpl *P)
{
    uint32_t n = st->nheld;
    ag_shape *shapes = malloc(n * sizeof *shapes);
    uint64_t *hashes = malloc(n * sizeof *hashes);
    ag_tmpl *T = NULL;
    if (shapes && hashes) {
        for (uint32_t i = 0; i < n; i++) {
            shapes[i] = st->held[i].shape;
            hashes[i] = st->held[i].shape_hash;
        }
        uint64_t key = ag_hash(hashes, n * sizeof *hashes);
        ag_sighting *s = ag_learn_adopt(&st->learn, key, n);
        if (s && s->tmpl) {
            T = s->tmpl; /* learned meanwhile */
        } else if (s && (T = ag_tmpl_new(key, shapes, hashes, n))) {
            insert_template(st, T);
            s->tmpl = T;
            T->from_profile = 1; /* (built where it is first held: hold.c) */
            ag_benefit_trust(T->bp);
            ag_stat_inc(AG_ST_SEQ_TEMPLATES);
        }
    }
    free(shapes);
    free(hashes);
    if (T)
        ag_profile_used(P->prof);
    else
        ag_profile_failed(P->prof);
    free(P);
    return T;
}

/* ---- learning --------------------------------------------------------------------------- */

/* Learning rests for the launches of left - 1 occurrences of a sequence of k launches (copies
 * do not count off a rest), capped; returns the occurrences rested (0: none, too few left). */
static uint32_t rest_occurrences(ag_stream *st, uint32_t k, uint64_t left)
{
    if (!k || left < 2)
        return 0;
    uint64_t n = (left - 1) * k;
    if (n > AG_LEARN_REST_MAX)
        n = AG_LEARN_REST_MAX - AG_LEARN_REST_MAX % k;
    ag_learn_rest(&st->learn, (uint32_t)n);
    ag_stat_inc(AG_ST_RESTS);
    return (uint32_t)(n / k);
}

/* T is eager by policy for a while: after a lost trial or a GPU-bound probe for ben.wait
 * occurrences (`off`), or while it waits for its payback (dormant: until `need` have been
 * seen). When it is the stream's only sequence and the stream runs nothing else (`alone`: this
 * occurrence began where the last one ended), nothing learned meanwhile could be used: the
 * stream rests for about those occurrences' launches (a resting launch costs a fraction of a
 * learning one), and they count as occurrences served -- the next one after the rest begins
 * the probe. A short timed region of one repeating call (30 cuBLAS sgemm timed once, issue
 * 20's G2) so pays for a few learning launches, not 60. Not where other launches come between
 * (a decode step's short sequence, found before the step's layers: resting would put off
 * learning them). Not while something is held (a hold broken off shows its launches to the
 * learner: a rest must not begin under it). */
static void rest_eager(ag_stream *st, ag_tmpl *T, int off, int alone)
{
    if (!alone || st->cand || st->ntmpl != 1 || T->bp->always || ag_learn_rests(&st->learn))
        return;
    uint32_t k = 0;
    for (uint32_t i = 0; i < T->len; i++)
        k += T->nodes[i].shape.kind != AG_KIND_COPY;
    uint64_t left = off ? (T->bp->wait > T->bp->nocc ? T->bp->wait - T->bp->nocc : 0)
                        : (T->bp->need > T->bp->seen ? T->bp->need - T->bp->seen : 0);
    uint32_t occ = rest_occurrences(st, k, left);
    if (!occ)
        return;
    ag_benefit_rested(T->bp, occ);
    ag_log(AG_LOG_DEBUG, "stream %p: its only sequence %016llx is eager by policy (%s); "
           "learning rests for %llu launches", (void *)st->handle, (unsigned long long)T->key,
           off ? "its back-off" : "waiting for its payback", (unsigned long long)occ * k);
}

/* The closed segment is the tail of sib_done from sib_pos on (hold.c, ag_hold_abort): the
 * occurrence was sib_done's, eager past the pieces its sibling's graph ran (so sib_done's
 * probe and trial see its occurrences, which always begin as another template's hold). */
static void sibling_done(ag_stream *st, const ag_closed *c)
{
    ag_tmpl *U = st->sib_done;
    st->sib_done = NULL;
    if (U->len != st->sib_pos + c->len)
        return;
    for (uint32_t i = 0; i < c->len; i++)
        if (!ag_shape_eq(&U->nodes[st->sib_pos + i].shape, &c->shapes[i]))
            return;
    U->eager_runs++;
    ag_tmpl_occurred(st, U, 0, 0, st->sib_t0);
}

/* Sightings a sequence needs to become a template: MIN_REPEATS, one fewer for a long one that
 * followed its last occurrence with nothing between (`alone`): a loop's body. Two of dozens of
 * launches back to back are no coincidence, and the sighting waited for runs one whole body
 * more eagerly (ResNet-50 at batch 1: 281 launches, 5.6 ms eager against 3.7 ms as graphs).
 * Long sequences with other work between their occurrences -- a decode step's layer blocks,
 * whose grids change with the cache -- still need every sighting: with two, their
 * short-lived variants became templates that diverged (the model: F4 1.144x -> 1.127x). */
static uint32_t repeats_needed(const ag_learn *L, uint32_t len, int alone)
{
    return alone && len >= AG_LOOP_BODY && L->min_repeats > 2 ? L->min_repeats - 1
                                                               : L->min_repeats;
}

/* The closed segment repeated often enough for a template, but none could be made: the
 * layouts of its kernels are not known yet (the worker asks the driver for them where the
 * host next waits, worker.c) -- or never will be. When it is all the stream runs (it began
 * where its last occurrence ended; no template yet), it could not pay for a trial before its
 * payback count anyway (ag_benefit_dormant): the stream rests for those occurrences as it
 * would with the template made (rest_eager), and they count as seen, so the template
 * made later starts from them. 30 sgemm timed once (G2), whose probes wait for the end of its
 * timed region, so rest rather than learn. */
static void rest_unmade(ag_stream *st, ag_sighting *s, const ag_closed *c, int alone)
{
    if (!alone || st->ntmpl || st->cand || ag_learn_rests(&st->learn) ||
        ag_opt(AG_OPT_BENEFIT) == AG_BENEFIT_ALWAYS) /* (graphs from the first: no wait) */
        return;
    uint32_t k = 0;
    for (uint32_t i = 0; i < c->len; i++)
        k += c->shapes[i].kind != AG_KIND_COPY;
    uint64_t need = payback_need_len(c->len), left = need > s->count ? need - s->count : 0;
    uint32_t occ = rest_occurrences(st, k, left);
    if (!occ)
        return;
    s->count += occ;
    ag_log(AG_LOG_DEBUG, "stream %p: sequence %016llx repeats alone, not yet a template (its "
           "layouts unknown) and short of its payback: learning rests for %llu launches",
           (void *)st->handle, (unsigned long long)s->key, (unsigned long long)occ * k);
}

void ag_on_closed(ag_stream *st, const ag_closed *c)
{
    ag_sighting *s = c->s;
    int alone = c->end - c->len == s->last_end && s->last_end; /* it followed its last one */
    s->last_end = c->end;
    if (st->sib_done)
        sibling_done(st, c);
    if (s->count == 1)
        ag_stat_inc(AG_ST_SEQ_SEEN);
    ag_tmpl *T = s->tmpl;
    if (T) {
        int same = T->len == c->len;
        for (uint32_t i = 0; same && i < c->len; i++)
            same = ag_shape_eq(&T->nodes[i].shape, &c->shapes[i]); /* else a collision */
        if (st->marks)
            ag_mark_end(st, same ? T : NULL, 0);
        if (!same)
            return;
        T->eager_runs++;
        ag_tmpl_occurred(st, T, 0, 0, c->t0);
        /* graphs lost here: its occurrences should not keep the stream learning (resting) */
        int was = s->barren;
        s->barren = T->bp->state == AG_BEN_OFF;
        if (!was && s->barren)
            rest_eager(st, T, 1, alone);
        else if (ag_benefit_dormant(T->bp))
            rest_eager(st, T, 0, alone);
        return;
    }
    if (st->marks)
        ag_mark_end(st, NULL, 0);
    if (s->count < repeats_needed(&st->learn, c->len, alone) || st->ntmpl >= AG_MAX_TEMPLATES)
        return;
    uint64_t t = ag_now_ns();
    T = ag_tmpl_new(s->key, c->shapes, c->hashes, c->len);
    if (!T) {
        rest_unmade(st, s, c, alone);
        return;
    }
    t = ag_now_ns() - t;
    int joined = join_variants(st, T); /* (before T is in the index: T->bp is set once) */
    insert_template(st, T);
    s->tmpl = T;
    if (!joined)
        ag_benefit_set_need(T->bp, s->count - 1, payback_need(T)); /* this one is told below */
    if (c->t0 || ag_opt(AG_OPT_PIECE)) { /* the host's time per launch of this occurrence, less
                                          * the launches' own (or fixed pieces) */
        uint64_t host = (ag_now_ns() - c->t0) / c->len, eager = ag_eager_launch_ns();
        ag_tmpl_plan(st, T, host > 2 * eager ? host - eager : host / 2, 0);
    }
    T->eager_runs++;
    ag_tmpl_occurred(st, T, 0, 0, c->t0);
    ag_stat_inc(AG_ST_SEQ_TEMPLATES);
    ag_log(AG_LOG_DEBUG, "sequence %016llx of %u launches (first %s) seen %u times: template "
           "(made in %.1f us)", (unsigned long long)T->key, T->len, T->nodes[0].lay->name,
           s->count, t / 1e3);
}

void ag_learn_launch(ag_stream *st, uint64_t h, const ag_shape *sh, uint64_t now)
{
    ag_closed c;
    uint32_t rests = st->learn.rests;
    /* a segment's start time serves the trials of templates, and the piece plan of the
     * template its segment makes (the stream's first one too: a long, slowly issued sequence
     * unplanned is one piece, whose holds outlast MAX_HOLD_US) */
    if (ag_learn_starting(&st->learn) && !now)
        now = ag_now_ns();
    if (ag_learn_push(&st->learn, h, sh, now, &c))
        ag_on_closed(st, &c);
    if (AG_UNLIKELY(st->learn.rests != rests)) {
        ag_stat_inc(AG_ST_RESTS);
        ag_log(AG_LOG_DEBUG, "stream %p: almost nothing repeated in the last window of "
               "launches; learning rests for %u launches", (void *)st->handle,
               __atomic_load_n(&st->learn.rest_left, __ATOMIC_RELAXED));
    }
}

/* A profile sequence that starts with this launch: held for the first time, its template is
 * made when it completes. */
ag_tmpl *ag_provisional(const ag_shape *sh, const ag_layout *lay, uint64_t h)
{
    ag_pshape ps;
    ag_pshape_of(sh, lay, &ps);
    ag_pseq *q = ag_profile_first(&ps);
    ag_tmpl *T = q ? calloc(1, sizeof *T) : NULL;
    if (T) {
        T->prof = q;
        T->bp = &T->ben;
        T->len = ag_profile_len(q);
        T->first_hash = h;
        T->npieces = 1;
        T->ends[0] = T->len;
    }
    return T;
}

ag_tmpl *ag_discard_provisional(ag_tmpl *T)
{
    if (T && T->prof)
        free(T);
    return NULL;
}

/* ---- freeing ------------------------------------------------------------------------------ */

void ag_tmpls_free(ag_stream *st)
{
    st->sibling = st->sib_done = NULL;
    for (ag_tmpl *T = st->tmpls, *next; T; T = next) {
        next = T->next_all;
        ag_tmpl_free(st, T);
    }
    st->tmpls = NULL;
    st->ntmpl = 0;
    ag_bucket *b, *tmp;
    HASH_ITER(hh, st->buckets, b, tmp) {
        HASH_DEL(st->buckets, b);
        free(b);
    }
    memset(st->first_bits, 0, sizeof st->first_bits);
}
