/* Pipelined replay: where to cut a sequence's graph into pieces, each launched as soon as its
 * launches are held, so that the GPU runs piece k while the host issues piece k+1.
 *
 * Only the GPU time left after the host's last launch is exposed, so the last piece is the
 * smallest, and pieces grow going back towards the start (doubling): while the host is at
 * least twice as slow per launch as the GPU, each earlier piece's GPU work still ends before
 * the host has issued everything after it. The smallest piece is as small as its graph
 * launch allows: that launch may cost at most a quarter of the eager launches it replaces.
 * The doubling holds only where the host is at least twice as slow per launch as the GPU.
 * A host that holds launches faster than the GPU's shortest kernel node (~1 us on the H100)
 * is the opposite case: once started, the GPU is the bottleneck, so the GPU should start
 * soon and see few gaps between graphs. There pieces grow forwards from the smallest,
 * doubling (D1, a decode step of 292 launches held 0.4 us apart: 3, 6, 12, ..., the rest).
 * Between the two (1-2 us apart), no piece is longer than a sixth of the sequence, so that
 * the first does not leave the GPU waiting long. On the H100 (2026-11-24) P1 (64 launches
 * 0.2-0.6 us apart) ran in 83.3 us with the capped backward plan and 78.6 us forwards (its
 * hand-written graph: 71.7 us).
 * A sequence the host issues in less than a few graph launches' time is one piece: cutting
 * it would cost more than the GPU could start early. No piece is held for longer than a quarter
 * of MAX_HOLD_US at the mean host time per launch: a host's time comes in bursts (a Python
 * decode step's 57-launch windows, half of MAX_HOLD_US at the mean, took 2.8 ms, more than all
 * of it, one time in ten), and a hold that outlasts MAX_HOLD_US is flushed eagerly. Pieces are
 * only for a GPU that would otherwise wait for the host: where it is still busy with earlier
 * work when a hold begins (`queued`: a loop whose host runs ahead), holding delays nothing on
 * it, and each extra piece only adds a graph launch (its host cost and the GPU's gap between
 * graphs), so the sequence is one piece.
 *
 * Pure arithmetic on measured costs: no clocks, no CUDA. */
#ifndef AG_PIECES_H
#define AG_PIECES_H

#include <stdint.h>

#define AG_MAX_PIECES 16

typedef struct ag_piece_costs {
    uint64_t held_ns;     /* the host's time per launch of this sequence while its launches
                           * are held (the program's own work between them; measured) */
    uint64_t eager_ns;    /* the driver's time for one eager launch (measured) */
    uint64_t graph_ns;    /* the host's time for one graph launch (measured) */
    uint64_t max_hold_ns; /* AUTOGRAPH_MAX_HOLD_US */
    int queued;           /* the GPU is still busy with earlier work when a hold begins
                           * (measured: policy/benefit.h): one piece */
} ag_piece_costs;

/* Fills ends[0..n) with the pieces' ends (increasing; ends[n-1] == len) and returns n
 * (1 <= n <= AG_MAX_PIECES). */
uint32_t ag_pieces_plan(uint32_t len, const ag_piece_costs *c, uint32_t ends[AG_MAX_PIECES]);

/* Sequences that start alike (a decode step's variants, whose kernels differ past some point)
 * cut their common start at the same places, so that a hold leaving one for another where they
 * part keeps its pieces and goes on as the other's. Given a sibling's ends sib[0..nsib) and
 * the number of first launches the two share, rewrites this sequence's plan ends[0..n) (of
 * len launches): the sibling's ends up to `common`, its own after. Returns the new count. */
uint32_t ag_pieces_align(const uint32_t *sib, uint32_t nsib, uint32_t common,
                         uint32_t ends[AG_MAX_PIECES], uint32_t n, uint32_t len);

#endif
