/* See pieces.h. */
#include "pieces.h"

#define SPAN_GRAPHS 4   /* a sequence issued in less than this many graph launches: one piece */
#define AMORTISE 4      /* a piece's graph launch costs at most 1/AMORTISE of its eager launches */
#define GPU_NODE_NS 1000 /* the GPU's least time per kernel node of a graph (H100: 64 tiny kernels
                          * in 66.9 us, P3's hand graph) */
#define FAST_SHARE 6     /* a host that may not be twice as slow as the GPU: no piece longer than
                          * 1/FAST_SHARE of the sequence */

/* A host faster per launch than the GPU's shortest node: once the GPU has started, it is the
 * bottleneck, so what counts is how soon it starts and how few gaps between graphs it sees.
 * Pieces grow from a small first one, doubling: piece k+1 (2s launches, held in 2s * held_ns)
 * is ready before the GPU has run piece k (s nodes, at least s * GPU_NODE_NS). A remainder
 * smaller than m joins the last piece. */
static uint32_t forwards(uint32_t len, uint32_t m, uint64_t most, uint32_t ends[AG_MAX_PIECES])
{
    uint32_t n = 0, at = 0;
    uint64_t s = m;
    while (n < AG_MAX_PIECES - 1 && len - at > s + m) {
        at += (uint32_t)s;
        ends[n++] = at;
        s = 2 * s < most ? 2 * s : most;
    }
    ends[n++] = len;
    return n;
}

/* Piece sizes from the last piece backwards (m, 2m, 4m, ..., each at most `most`), the first
 * piece last: what remains. Returns how many. */
static uint32_t backwards(uint32_t len, uint32_t m, uint64_t most, uint32_t sizes[AG_MAX_PIECES])
{
    uint32_t n = 0, left = len;
    uint64_t s = m;
    while (left && n < AG_MAX_PIECES - 1) {
        uint32_t take = (uint32_t)(s < most ? s : most);
        if (take >= left || left - take < m) /* the rest would be a piece smaller than m */
            break;
        sizes[n++] = take;
        left -= take;
        s *= 2;
    }
    sizes[n++] = left;
    return n;
}

uint32_t ag_pieces_plan(uint32_t len, const ag_piece_costs *c, uint32_t ends[AG_MAX_PIECES])
{
    ends[0] = len;
    if (len < 2 || !c->eager_ns || !c->graph_ns || c->queued)
        return 1;
    uint64_t held = c->held_ns ? c->held_ns : 1;
    if ((uint64_t)len * held < SPAN_GRAPHS * c->graph_ns)
        return 1;
    uint64_t m = (AMORTISE * c->graph_ns + c->eager_ns - 1) / c->eager_ns;
    if (m < 2)
        m = 2;
    uint64_t most = c->max_hold_ns ? c->max_hold_ns / 4 / held : len;
    if (held < GPU_NODE_NS) {
        /* (as below: when the pieces run out, the cap grows until the last is no longer) */
        uint32_t n;
        for (;; most++) {
            n = forwards(len, (uint32_t)m, most, ends);
            if (ends[n - 1] - (n > 1 ? ends[n - 2] : 0) <= most || n < AG_MAX_PIECES)
                return n;
        }
    }
    if (held < 2 * GPU_NODE_NS && most > (len + FAST_SHARE - 1) / FAST_SHARE)
        most = (len + FAST_SHARE - 1) / FAST_SHARE;
    if (most < m)
        most = m;
    /* sizes from the end backwards: m, 2m, 4m, ... (each at most `most`); when the pieces run
     * out with a first piece longer than `most` (a long sequence from a slow host: 290 launches
     * 62 us apart left a first piece of 70, held 4.3 ms against MAX_HOLD_US 2 ms, and every
     * hold timed out), the cap grows until the first piece is no longer than the others */
    uint32_t sizes[AG_MAX_PIECES], n;
    for (;; most++) {
        n = backwards(len, (uint32_t)m, most, sizes);
        if (sizes[n - 1] <= most)
            break;
    }
    uint32_t at = 0;
    for (uint32_t i = 0; i < n; i++) {
        at += sizes[n - 1 - i];
        ends[i] = at;
    }
    return n;
}

uint32_t ag_pieces_align(const uint32_t *sib, uint32_t nsib, uint32_t common,
                         uint32_t ends[AG_MAX_PIECES], uint32_t n, uint32_t len)
{
    if (common < 2 || common >= len || !n)
        return n;
    uint32_t out[AG_MAX_PIECES], m = 0;
    for (uint32_t i = 0; i < nsib && sib[i] <= common && m < AG_MAX_PIECES - 1; i++)
        out[m++] = sib[i];
    for (uint32_t i = 0; i < n && m < AG_MAX_PIECES; i++)
        if (ends[i] > common && (!m || ends[i] > out[m - 1]))
            out[m++] = ends[i];
    if (!m || out[m - 1] != len) { /* (its own last end is len; gone only when out was full) */
        if (m == AG_MAX_PIECES)
            m--;
        out[m++] = len;
    }
    for (uint32_t i = 0; i < m; i++)
        ends[i] = out[i];
    return m;
}
