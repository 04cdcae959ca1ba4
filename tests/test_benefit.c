/* The cost/benefit policy on synthetic timings. */
#include "policy/benefit.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

/* A probe in which the engine could not mark (no timing events): two eager occurrences, then
 * the trial. */
static void skip_probe(ag_benefit *b)
{
    CHECK_EQ(b->state, AG_BEN_PROBE);
    CHECK(!ag_benefit_want_graph(b));
    ag_benefit_occurred(b, 0, 0, 0);
    ag_benefit_occurred(b, 0, 0, 0);
    CHECK_EQ(b->state, AG_BEN_TRIAL);
}

/* Runs n occurrences where each occurrence's interval is g (graph) or e (eager) ns. */
static void run(ag_benefit *b, int n, uint64_t g, uint64_t e, uint64_t *t, int *graphs)
{
    for (int i = 0; i < n; i++) {
        int want = ag_benefit_want_graph(b);
        *graphs += want;
        ag_benefit_occurred(b, want, want && *graphs == 1, *t);
        *t += want ? g : e;
    }
}

/* Runs occurrences as run() does until the trial decides (at most 100). */
static void run_until_decided(ag_benefit *b, uint64_t g, uint64_t e, uint64_t *t, int *graphs)
{
    for (int n = 0; b->state == AG_BEN_TRIAL && n < 100; n++)
        run(b, 1, g, e, t, graphs);
}

/* A new sequence of length len, its probe skipped, tried with graph and eager intervals g
 * and e until the trial decides (at most 100 occurrences): returns the occurrences it took. */
static int trial_until_decided(ag_benefit *b, uint32_t len, uint64_t g, uint64_t e, uint64_t *t)
{
    int graphs = 0, n = 0;
    ag_benefit_init(b, 0, len);
    skip_probe(b);
    while (b->state == AG_BEN_TRIAL && n < 100) {
        run(b, 1, g, e, t, &graphs);
        n++;
    }
    return n;
}

/* Occurrences in the state ON before each of the next `k` re-check trials begins (a trial
 * ends in the same timings). */
static void on_runs_before_rechecks(ag_benefit *b, uint64_t g, uint64_t e, uint64_t *t,
                                    int *graphs, int *on_runs, int k)
{
    int n = 0, prev_state = b->state;
    for (int i = 0; i < k; i++)
        on_runs[i] = 0;
    for (int i = 0; i < 20000 && n < k; i++) {
        if (b->state == AG_BEN_ON)
            on_runs[n]++;
        run(b, 1, g, e, t, graphs);
        if (prev_state == AG_BEN_ON && b->state == AG_BEN_TRIAL)
            n++;
        prev_state = b->state;
    }
}

static void test_graph_wins(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    CHECK(ag_benefit_want_graph(&b)); /* a trial starts with the graph */
    uint64_t t = 1000;
    int graphs = 0;
    run(&b, 40, 30000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(b.wins, 1);
    CHECK(b.med_graph == 30000);
    CHECK(b.med_eager == 100000);
    /* a 3.3x win: re-checked only when a re-check's ~8 eager occurrences (70 us more each)
     * cost at most 2% of the graph occurrences between: 8 * 70 / 30 / 2% = 933 of them, and
     * never sooner than the growing floor (64, 256, 1024, ...) */
    int on_runs[3];
    on_runs_before_rechecks(&b, 30000, 100000, &t, &graphs, on_runs, 3);
    CHECK(on_runs[0] > 0 && on_runs[0] <= 933); /* part of them passed above */
    CHECK_EQ(on_runs[1], 933);
    CHECK_EQ(on_runs[2], 1024);
    CHECK_EQ(b.wins, 3);

    /* a 10% win: re-checks 64, 256, 1024 occurrences apart (the floor) */
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    graphs = 0;
    run(&b, 40, 90000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    on_runs_before_rechecks(&b, 90000, 100000, &t, &graphs, on_runs, 3);
    CHECK(on_runs[0] > 0 && on_runs[0] <= 64);
    CHECK_EQ(on_runs[1], 256);
    CHECK_EQ(on_runs[2], 1024);

    /* a 100x win: the wait is capped (4096: a stream's phase can change) */
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    graphs = 0;
    run(&b, 40, 1000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(b.wait, 4096);
}

static void test_eager_wins(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    uint64_t t = 1000;
    int graphs = 0;
    /* compute-bound: the same either way -> eager (graphs must win by a margin) */
    run_until_decided(&b, 200000, 200000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_OFF);
    /* the first loss is tried again soon (a second opinion), and lost again */
    run(&b, 8, 200000, 200000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_PROBE);
    for (int n = 0; b.state != AG_BEN_TRIAL && n < 20; n++)
        run(&b, 1, 200000, 200000, &t, &graphs);
    run_until_decided(&b, 200000, 200000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(b.trials, 2);
    int before = graphs;
    run(&b, 30, 200000, 200000, &t, &graphs); /* (the back-off is 64 occurrences now) */
    CHECK_EQ(graphs, before); /* off: no graph occurrences during the back-off */
    /* after the back-off a new trial starts; if graphs now win, they come back */
    run(&b, 200, 50000, 200000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.trials >= 2);
}

static void test_aborts_and_failures(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    for (int i = 0; i < 4; i++)
        ag_benefit_aborted(&b);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK(!ag_benefit_want_graph(&b));

    ag_benefit_init(&b, 1, 8); /* always: on without measuring, back on after a failure */
    CHECK_EQ(b.state, AG_BEN_ON);
    ag_benefit_failed(&b);
    CHECK(!ag_benefit_want_graph(&b));
    uint64_t t = 0;
    for (int i = 0; i < 70; i++)
        ag_benefit_occurred(&b, 0, 0, t += 1000);
    CHECK(ag_benefit_want_graph(&b));
    for (int i = 0; i < 10; i++)
        ag_benefit_aborted(&b); /* `always` is not turned off by divergence */
    CHECK(ag_benefit_want_graph(&b));
}

static void test_build_sample_excluded(void)
{
    /* The first graph occurrence includes instantiation: a huge interval that must not count. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    uint64_t t = 0;
    int graphs = 0;
    for (int i = 0; i < 40; i++) {
        int want = ag_benefit_want_graph(&b);
        int build = want && graphs == 0;
        graphs += want;
        ag_benefit_occurred(&b, want, build, t);
        t += build ? 10000000 : want ? 30000 : 100000;
    }
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.med_graph == 30000);
}

/* An occurrence that went out eagerly while its graph was built is not reported as one
 * (hold.c): no interval may span it, or the graph occurrence before it takes the build
 * occurrence's time too and a clear win is lost (D1 on the H100: 2.6 ms against 0.25). */
static void test_unsampled_breaks_interval(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    uint64_t t = 1000;
    CHECK(ag_benefit_want_graph(&b));
    ag_benefit_occurred(&b, 1, 0, t);
    t += 30000;
    ag_benefit_occurred(&b, 1, 0, t); /* the first interval: a graph sample of 30 us */
    CHECK_EQ(b.ng, 1);
    t += 30000;
    ag_benefit_unsampled(&b); /* an occurrence held and issued eagerly while a piece built */
    t += 2000000;
    ag_benefit_occurred(&b, 1, 0, t);
    CHECK_EQ(b.ng, 1); /* nothing spans the build occurrence */
    t += 30000;
    ag_benefit_occurred(&b, 1, 0, t);
    CHECK_EQ(b.ng, 2);
    CHECK(b.sg[0] == 30000 && b.sg[1] == 30000);
}

/* Occurrences with both measures: host interval h (graph hg, eager he) and GPU interval
 * (gg, ge). The GPU sample of an occurrence arrives `lag` occurrences later, as it does when
 * the GPU runs behind the host. */
typedef struct {
    uint64_t hg, he, gg, ge;
    int lag;
} both_t;

static void run_both_stop(ag_benefit *b, int n, const both_t *m, uint64_t *t, int stop)
{
    struct { uint32_t id; int graph; } q[64];
    int nq = 0;
    for (int i = 0; i < n && !(stop && b->state != AG_BEN_TRIAL); i++) {
        int want = ag_benefit_want_graph(b);
        if (ag_benefit_want_gpu_mark(b)) {
            ag_benefit_marked(b);
            q[nq].id = b->trial_id;
            q[nq++].graph = want;
        }
        ag_benefit_occurred(b, want, 0, *t);
        *t += want ? m->hg : m->he;
        while (nq > m->lag) { /* the oldest marked occurrence's GPU interval is known now */
            ag_benefit_gpu(b, q[0].id, q[0].graph, 0, q[0].graph ? m->gg : m->ge);
            memmove(&q[0], &q[1], (size_t)--nq * sizeof q[0]);
        }
    }
}

static void run_both(ag_benefit *b, int n, const both_t *m, uint64_t *t)
{
    run_both_stop(b, n, m, t, 0);
}

static void test_clear_win_ends_early(void)
{
    /* every graph sample 3x faster than every eager one: the trial ends at 4 samples of each
     * (4 eager occurrences, not 8); the medians decide as ever */
    ag_benefit b;
    uint64_t t = 1;
    int n = trial_until_decided(&b, 8, 30000, 100000, &t);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.ng >= 4 && b.ng < 8 && b.ne == 4);
    CHECK(n <= 13);

    /* a win whose samples overlap (noise: graph samples as slow as the eager ones, more than
     * one of them) takes all its samples */
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    n = 0;
    while (b.state == AG_BEN_TRIAL && n < 100) {
        int want = ag_benefit_want_graph(&b);
        ag_benefit_occurred(&b, want, 0, t);
        t += want ? (n % 2 == 1 ? 100000 : 30000) : 100000;
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(b.ng, 8);
    CHECK_EQ(b.ne, 8);

    /* the host's samples separate, the GPU's say graphs are 10% slower there: no early end,
     * and graphs lose (one measure better, the other worse) */
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    both_t m = { 30000, 100000, 44000, 40000, 0 }; /* (run_both one at a time: no lag) */
    n = 0;
    while (b.state == AG_BEN_TRIAL && n < 100) {
        run_both(&b, 1, &m, &t);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(b.ng, 8);

    /* the GPU's samples separate and the host's are equal (a full queue): early, on */
    ag_benefit_init(&b, 0, 16);
    skip_probe(&b);
    both_t q = { 40000, 40000, 20000, 40000, 0 };
    n = 0;
    while (b.state == AG_BEN_TRIAL && n < 100) {
        run_both(&b, 1, &q, &t);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.ngg >= 4 && b.ngg < 8 && b.nge < 8);
}

static void test_gpu_bound_async(void)
{
    /* The host runs ahead (a graph launch is cheaper on the host) but the GPU, the bottleneck,
     * runs the graph slower: eager must win, and the samples arrive late. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 2);
    skip_probe(&b);
    uint64_t t = 1;
    both_t m = { 10000, 30000, 48000, 40000, 6 };
    run_both_stop(&b, 40, &m, &t, 1);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK(b.gpu_graph == 48000 && b.gpu_eager == 40000);
    CHECK(b.med_graph == 10000); /* the host alone would have said "graphs win" */
    CHECK_EQ(b.wait, 8);       /* the first trial lost: a second opinion soon... */
    CHECK_EQ(b.backoff, 256); /* ...but a clear loss (20%) backs off fourfold after it */
}

static void test_gpu_waits_for_samples(void)
{
    /* Host samples are complete long before the late GPU ones: the trial must wait. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    uint64_t t = 1;
    both_t m = { 10000, 30000, 40500, 40000, 16 };
    run_both(&b, 20, &m, &t);
    CHECK_EQ(b.ng, 8);
    CHECK_EQ(b.ne, 8);
    CHECK(b.nge < 3);
    CHECK_EQ(b.state, AG_BEN_TRIAL); /* still waiting for the GPU's view */
    run_both(&b, 60, &m, &t);
    /* host 3x better, GPU 1.25% worse (within noise): graphs pay */
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.gpu_graph == 40500);
}

static void test_gpu_wins_host_equal(void)
{
    /* A full queue makes the host wait for the GPU; graphs make the GPU faster. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 16);
    skip_probe(&b);
    uint64_t t = 1;
    both_t m = { 40000, 40000, 30000, 40000, 0 };
    run_both(&b, 40, &m, &t);
    CHECK_EQ(b.state, AG_BEN_ON);
}

static void test_stale_gpu_samples(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    uint32_t old = b.trial_id;
    ag_benefit_aborted(&b);
    for (int i = 0; i < 3; i++)
        ag_benefit_aborted(&b); /* off */
    uint64_t t = 1;
    for (int i = 0; i < 64; i++)
        ag_benefit_occurred(&b, 0, 0, t += 1000); /* back-off over: a probe, then a trial */
    skip_probe(&b);
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK(b.trial_id != old);
    ag_benefit_gpu(&b, old, 1, 0, 5000);
    ag_benefit_gpu(&b, b.trial_id, 1, 1, 5000); /* an occurrence that built: not fair */
    CHECK_EQ(b.ngg, 0);
    ag_benefit_gpu(&b, b.trial_id, 1, 0, 5000);
    CHECK_EQ(b.ngg, 1);
}

static void test_short_sequences(void)
{
    /* 4% faster pays for a sequence of 3 launches, not for one of 2 */
    uint64_t t = 1;
    int graphs = 0;
    ag_benefit b;
    ag_benefit_init(&b, 0, 2);
    skip_probe(&b);
    run_until_decided(&b, 96000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_OFF);
    ag_benefit_init(&b, 0, 3);
    skip_probe(&b);
    run(&b, 40, 96000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
}

static void test_clear_loss_ends_early(void)
{
    ag_benefit b;
    uint64_t t = 1;
    int n = trial_until_decided(&b, 8, 150000, 100000, &t);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK(n <= 13); /* 4 graph + 4 eager samples (+ the first occurrence), not 8 + 8 */
    CHECK_EQ(b.backoff, 256);
}

/* A trial whose first block of graph occurrences runs slower than eager, and every later one
 * faster (ResNet-50 on the H100: graph 5.1-5.7 ms, then 3.1-3.5; eager 4.2-5.7): no early end
 * on the first block, graphs on. */
static void test_slow_first_graph_block(void)
{
    static const uint64_t eager[] = { 4618, 4316, 4241, 5675, 4500, 4400, 4700, 4300 };
    ag_benefit b;
    ag_benefit_init(&b, 0, 281);
    skip_probe(&b);
    uint64_t t = 1;
    int graphs = 0, eagers = 0, n = 0;
    while (b.state == AG_BEN_TRIAL && n++ < 100) {
        int want = ag_benefit_want_graph(&b);
        ag_benefit_occurred(&b, want, want && graphs == 0, t);
        t += 1000 * (want ? (graphs++ <= 4 ? 5200 : 3300) : eager[eagers++ % 8]);
    }
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(eagers >= 4 && graphs > 5);
}

/* A sequence's first trial, lost, is tried again soon (its graph samples may have come while
 * something passing slowed them: a torch.compile forward on a fresh H100 lost 1425 us to
 * 1044 and stayed eager for the whole run); a later loss waits the growing back-off. */
static void test_first_loss_second_opinion(void)
{
    ag_benefit b;
    uint64_t t = 1;
    int graphs = 0;
    trial_until_decided(&b, 38, 1425000, 1044000, &t);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(b.trials, 1);
    CHECK_EQ(b.wait, 8);
    run(&b, 8, 600000, 720000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_PROBE); /* probed again after 8 eager occurrences... */
    for (int n = 0; b.state != AG_BEN_ON && n < 100; n++)
        run(&b, 1, 600000, 720000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON); /* ...and graphs win now */
    CHECK_EQ(b.trials, 2);
    /* a re-check lost after a win is not hurried */
    for (int n = 0; b.state != AG_BEN_OFF && n < 10000; n++)
        run(&b, 1, 1425000, 1044000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(b.trials, 3);
    CHECK(b.wait >= 64);
}

/* One probe occurrence as the engine runs it: marked (when wanted), looked at (`behind`: the
 * GPU had not reached the previous occurrence's start), told. The GPU's interval of the
 * previous occurrence arrives now. Returns whether a graph was wanted (never, in a probe). */
static int probe_occ(ag_benefit *b, uint64_t *t, uint64_t host, uint64_t gpu, int behind,
                     int *first)
{
    int want = ag_benefit_want_graph(b);
    if (ag_benefit_want_gpu_mark(b)) {
        if (!*first)
            ag_benefit_behind(b, 0, behind);
        if (ag_benefit_want_gpu_mark(b)) /* a GPU-bound verdict ends the marks at once */
            ag_benefit_marked(b);
        if (!*first && gpu)
            ag_benefit_gpu(b, b->trial_id, 0, 0, gpu);
        *first = 0;
    }
    ag_benefit_occurred(b, want, 0, *t);
    *t += host;
    return want;
}

static void test_probe_gpu_bound(void)
{
    /* 30 sgemm on one stream, no sync: the host runs ahead; the GPU has not reached the
     * previous occurrence's start when the next begins. Decided at the second look: eager,
     * no graph ever wanted, probed again after a back-off that grows. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 2);
    CHECK_EQ(b.state, AG_BEN_PROBE);
    uint64_t t = 1;
    int first = 1, graphs = 0, n = 0;
    ag_benefit_occurred(&b, 0, 0, t); /* the occurrence that made the template: not marked */
    t += 18000;
    while (b.state == AG_BEN_PROBE && n < 20) {
        graphs += probe_occ(&b, &t, 18000, 0, 1, &first);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(n, 3); /* marked, looked (behind), looked (behind): decided */
    CHECK_EQ(b.gpu_bounds, 1);
    CHECK(b.gpu_bound);
    CHECK_EQ(b.trials, 0);
    CHECK_EQ(b.wait, 64);
    n = 0;
    while (b.state == AG_BEN_OFF) {
        graphs += probe_occ(&b, &t, 18000, 0, 1, &first);
        n++;
    }
    CHECK_EQ(n, 63); /* the occurrence under way when it was decided counts */
    CHECK_EQ(b.state, AG_BEN_PROBE); /* probed again, not tried */
    first = 1;
    for (int i = 0; i < 3; i++)
        graphs += probe_occ(&b, &t, 18000, 0, 1, &first);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(b.wait, 128);
    CHECK_EQ(b.gpu_bounds, 2);
    CHECK_EQ(graphs, 0);
    /* the phase changes: the GPU keeps up now (the host waits for it); after the back-off
     * the probe finds it host-bound and a trial follows */
    while (b.state == AG_BEN_OFF)
        probe_occ(&b, &t, 50000, 0, 0, &first);
    CHECK_EQ(b.state, AG_BEN_PROBE);
    first = 1;
    n = 0;
    while (b.state == AG_BEN_PROBE && n < 20) {
        probe_occ(&b, &t, 50000, 50000, 0, &first);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK_EQ(n, 1 + AG_BEN_PROBE_LOOKS);
    CHECK(!b.gpu_bound);
    CHECK(ag_benefit_want_graph(&b));
}

/* (trial_occs: the first g_slow_graphs graph samples' host and GPU intervals are
 * g_slow_graph) */
static uint64_t g_slow_graph;
static int g_slow_graphs;

/* A trial's occurrences as the engine runs them: the previous occurrence's GPU interval
 * arrives as the next begins, marked occurrences are told, the first `building` graph
 * occurrences ran eagerly while the graph was built (no sample). Returns the eager ones. */

static int trial_occs(ag_benefit *b, uint64_t *t, uint64_t hg, uint64_t he, uint64_t gg,
                      uint64_t ge, int building, int max)
{
    int eager = 0, n = 0, prev = -1, prev_build = 0, built = 0, graphs = 0;
    uint32_t prev_id = 0;
    while (b->state == AG_BEN_TRIAL && n++ < max) {
        int want = ag_benefit_want_graph(b);
        eager += !want;
        if (prev >= 0)
            ag_benefit_gpu(b, prev_id, prev, prev_build,
                           prev ? (graphs <= g_slow_graphs ? g_slow_graph : gg) : ge);
        prev = -1;
        if (ag_benefit_want_gpu_mark(b)) {
            ag_benefit_marked(b);
            prev = want;
            prev_id = b->trial_id;
        }
        int build = want && built < building;
        built += build;
        prev_build = build;
        ag_benefit_occurred(b, want, build, *t);
        graphs += want && !build;
        *t += want && !build ? (graphs <= g_slow_graphs ? g_slow_graph : hg) : he;
    }
    return eager;
}

/* A new sequence of length len probed until the probe decides (at most 20 occurrences), the
 * GPU never behind, with host and GPU intervals `host` and `gpu`. */
static void probe_until_decided(ag_benefit *b, uint32_t len, uint64_t *t, uint64_t host,
                                uint64_t gpu)
{
    int first = 1, n = 0;
    ag_benefit_init(b, 0, len);
    while (b->state == AG_BEN_PROBE && n++ < 20)
        probe_occ(b, t, host, gpu, 0, &first);
}

static void test_probe_samples_carried(void)
{
    /* a host-bound decode step (sync each step), 3.3x faster as a graph: the probe's eager
     * samples are the trial's; the trial runs graphs only (three of them eager while the
     * worker builds) and ends as soon as graphs win beyond doubt */
    ag_benefit b;
    uint64_t t = 1;
    probe_until_decided(&b, 290, &t, 100000, 100000);
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK(b.ne >= 3 && b.nge >= 3);
    int eager = trial_occs(&b, &t, 30000, 100000, 30000, 100000, 3, 100);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(eager, 0);
    CHECK(b.med_eager == 100000 && b.gpu_eager == 100000);
    CHECK(b.med_graph == 30000 && b.gpu_graph == 30000);

    /* no better as a graph: the carried samples do not decide alone, the trial goes on in
     * blocks (eager ones among them) and graphs stay off */
    probe_until_decided(&b, 290, &t, 100000, 100000);
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    eager = trial_occs(&b, &t, 100000, 100000, 100000, 100000, 1, 100);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK(eager >= 4);

    /* a winner's re-check has no probe before it: blocks, graph first, eager samples its own */
    ag_benefit_init(&b, 0, 290);
    b.state = AG_BEN_ON;
    b.wait = 1;
    ag_benefit_occurred(&b, 1, 0, t += 30000);
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK(!b.carried && b.ne == 0);
    eager = trial_occs(&b, &t, 30000, 100000, 30000, 100000, 0, 100);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(eager, 4);
}

static void test_probe_carried_modest_win(void)
{
    /* a CNN forward (ResNet-50, batch 1): 4.8 ms eager, 4.2 ms as a graph -- every sample of
     * each side apart by more than 10% but not 20% (F7's trace: 3.5-3.8 ms against 4.7-6.3).
     * The probe carries its eager host samples and 3 GPU ones. The trial ends on graphs after
     * 4 graph samples with no eager occurrence of its own; when a clear win needed 20% and 4
     * GPU samples of each, it ran 5 */
    ag_benefit b;
    uint64_t t = 1;
    probe_until_decided(&b, 281, &t, 4800000, 4800000);
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK(b.ne >= 4 && b.nge >= 3);
    int eager = trial_occs(&b, &t, 4200000, 4800000, 4200000, 4800000, 1, 100);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(eager, 0);
    /* graphs 8% faster (within 10%): no early end, the trial takes all its samples */
    probe_until_decided(&b, 281, &t, 4800000, 4800000);
    eager = trial_occs(&b, &t, 4420000, 4800000, 4420000, 4800000, 1, 100);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(eager >= 2 && b.ng == 8 && b.ne == 8);
    /* the first graph occurrence after the build slowed by it (4.85 ms: ResNet-50 on the H100,
     * thirteenth session, 2 of 3 processes ran all 8 samples of each, five eager forwards
     * more), the rest 4.2 ms: one graph occurrence more, and the trial still ends on graphs
     * with no eager occurrence of its own */
    probe_until_decided(&b, 281, &t, 4800000, 4800000);
    CHECK(b.ne == 4);
    g_slow_graph = 4850000;
    g_slow_graphs = 1;
    eager = trial_occs(&b, &t, 4200000, 4800000, 4200000, 4800000, 1, 100);
    g_slow_graphs = 0;
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(eager, 0);
    CHECK_EQ(b.ng, 5);
    /* two slow graph samples are no clear win: the trial goes on to its eager block */
    probe_until_decided(&b, 281, &t, 4800000, 4800000);
    g_slow_graphs = 2;
    eager = trial_occs(&b, &t, 4200000, 4800000, 4200000, 4800000, 1, 100);
    g_slow_graphs = 0;
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(eager >= 2);
}

static void test_probe_gpu_slower(void)
{
    /* Never seen behind (the GPU catches up at each look), and its start-to-start interval
     * three times the host's: the intervals alone are noise (a loaded host delays the marks),
     * so the trial decides. Behind once with that interval: the queue grows, GPU-bound. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    uint64_t t = 1;
    int first = 1, n = 0;
    while (b.state == AG_BEN_PROBE && n < 20) {
        probe_occ(&b, &t, 20000, 60000, 0, &first);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK_EQ(b.gpu_bounds, 0);
    /* one look found it behind, and the GPU's interval is three times the host's */
    ag_benefit_init(&b, 0, 8);
    first = 1;
    n = 0;
    while (b.state == AG_BEN_PROBE && n < 20) {
        probe_occ(&b, &t, 20000, 60000, n == 2, &first);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK_EQ(b.gpu_bounds, 1);
    /* the same intervals on both sides: host-bound, a trial */
    ag_benefit_init(&b, 0, 8);
    first = 1;
    n = 0;
    while (b.state == AG_BEN_PROBE && n < 20) {
        probe_occ(&b, &t, 20000, 21000, 0, &first);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK_EQ(b.gpu_bounds, 0);
}

static void test_probe_one_behind_is_noise(void)
{
    /* one look behind out of four: host-bound */
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    uint64_t t = 1;
    int first = 1;
    probe_occ(&b, &t, 20000, 0, 0, &first);
    probe_occ(&b, &t, 20000, 0, 1, &first);
    for (int i = 0; i < 3; i++)
        probe_occ(&b, &t, 20000, 0, 0, &first);
    CHECK_EQ(b.state, AG_BEN_TRIAL);
}

static void test_probe_marks_bounded(void)
{
    /* starts that never complete (an irregular stream) do not each get a mark */
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    int marks = 0;
    for (int i = 0; i < 1000; i++)
        if (ag_benefit_want_gpu_mark(&b)) {
            ag_benefit_marked(&b);
            marks++;
        }
    CHECK_EQ(marks, 8);
}

static void test_queued_one_piece(void)
{
    /* P3: graph occurrences find the GPU still behind when the next begins (the host runs far
     * ahead): `queued`, at the second look. A later trial that looks and never finds the GPU
     * behind clears it. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 64);
    skip_probe(&b);
    CHECK(ag_benefit_want_look(&b, 1));
    CHECK(!ag_benefit_want_look(&b, 0)); /* eager occurrences of a trial: no looks */
    ag_benefit_behind(&b, 1, 1);
    CHECK(!b.queued);
    ag_benefit_behind(&b, 1, 1);
    CHECK(b.queued);
    uint64_t t = 1;
    int graphs = 0;
    run(&b, 40, 30000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.queued); /* kept by the decision */
    while (b.state == AG_BEN_ON)
        run(&b, 1, 30000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_TRIAL); /* the re-check */
    ag_benefit_behind(&b, 1, 0);
    ag_benefit_behind(&b, 1, 0);
    run(&b, 40, 30000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(!b.queued);
    /* the GPU's interval between graph occurrences 1.6x the host's: queued */
    ag_benefit_init(&b, 0, 16);
    skip_probe(&b);
    both_t m = { 10000, 40000, 16000, 40000, 2 };
    run_both(&b, 60, &m, &t);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.queued);
    /* the P1 case: the GPU keeps up (intervals equal, never behind): pieces stay */
    ag_benefit_init(&b, 0, 16);
    skip_probe(&b);
    both_t m1 = { 30000, 100000, 30000, 100000, 0 };
    ag_benefit_behind(&b, 1, 0);
    ag_benefit_behind(&b, 1, 0);
    run_both(&b, 60, &m1, &t);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(!b.queued);
    /* the same with the GPU's marks late (a loaded host): its intervals 1.6x the host's, but
     * the looks found the GPU idle: they decide, pieces stay */
    ag_benefit_init(&b, 0, 16);
    skip_probe(&b);
    ag_benefit_behind(&b, 1, 0);
    ag_benefit_behind(&b, 1, 0);
    run_both(&b, 60, &m, &t);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(!b.queued);
}

/* A sequence that completes one time in `every` and breaks off the others: `n` times the
 * program starts it; returns the holds (graph occurrences and broken-off holds). */
static long diverging(ag_benefit *b, long n, int every)
{
    long holds = 0;
    uint64_t t = 1;
    for (long i = 0; i < n; i++) {
        int completes = i % every == 0;
        if (ag_benefit_want_graph(b)) {
            holds++;
            if (completes)
                ag_benefit_occurred(b, 1, 0, t);
            else
                ag_benefit_aborted(b);
        } else if (completes) {
            ag_benefit_occurred(b, 0, 0, t); /* an eager occurrence, seen by the learner */
        } /* else: it diverged eagerly; nothing tells the policy */
        t += 1000;
    }
    return holds;
}

static void test_divergence_backs_off(void)
{
    /* three of four starts break off: the old rule (four aborts *in a row*) never turned it
     * off, so every start was a hold that went out late. Now O(log n) holds. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 8);
    long h1 = diverging(&b, 10000, 4);
    CHECK(b.abort_offs >= 2);
    ag_benefit_init(&b, 0, 8);
    long h2 = diverging(&b, 1000000, 4);
    printf("diverging: %ld holds over 10^4 starts, %ld over 10^6\n", h1, h2);
    CHECK(h1 < 200);
    CHECK(h2 < 100); /* 100 times the starts: a few back-offs more (log), not 100x the holds */
    CHECK(b.abort_backoff > 4096);
    /* a sequence that rarely breaks off stays on */
    ag_benefit_init(&b, 1, 8);
    ag_benefit_init(&b, 0, 8);
    skip_probe(&b);
    uint64_t t = 1;
    int graphs = 0;
    run(&b, 40, 30000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    for (int i = 0; i < 2000 && b.state == AG_BEN_ON; i++) {
        if (i % 10 == 0)
            ag_benefit_aborted(&b);
        else
            ag_benefit_occurred(&b, 1, 0, t += 30000);
        if (b.state == AG_BEN_TRIAL) /* a re-check: graphs keep winning */
            run(&b, 40, 30000, 100000, &t, &graphs);
    }
    CHECK_EQ(b.abort_offs, 0);
}

static void test_payback_dormant(void)
{
    /* G2: 30 sgemm timed once, a 2-launch sequence whose graph would need ~58 occurrences to
     * pay for its trial (the engine's estimate). Made at its third sighting; over the 28 more
     * of the region it is never marked, looked at, measured or tried. */
    ag_benefit b;
    ag_benefit_init(&b, 0, 2);
    ag_benefit_set_need(&b, 2, 58);
    uint64_t t = 1;
    for (int i = 0; i < 29; i++) {
        CHECK(ag_benefit_dormant(&b));
        CHECK(!ag_benefit_want_gpu_mark(&b));
        CHECK(!ag_benefit_want_look(&b, 0));
        CHECK(!ag_benefit_want_graph(&b));
        ag_benefit_behind(&b, 0, 1); /* a look the engine would not take: nothing */
        ag_benefit_occurred(&b, 0, 0, t);
        t += 18000;
    }
    CHECK_EQ(b.state, AG_BEN_PROBE);
    CHECK_EQ(b.seen, 31);
    CHECK_EQ(b.nocc, 0);
    CHECK_EQ(b.ne, 0);
    CHECK_EQ(b.behind, 0);
    CHECK_EQ(b.gpu_bounds, 0);
    /* a longer run: once seen `need` times, the probe begins (and the estimate no longer
     * changes: measuring has begun) */
    while (ag_benefit_dormant(&b)) {
        ag_benefit_occurred(&b, 0, 0, t);
        t += 18000;
    }
    CHECK_EQ(b.seen, 58);
    CHECK(ag_benefit_want_gpu_mark(&b));
    ag_benefit_marked(&b);
    ag_benefit_occurred(&b, 0, 0, t);
    CHECK_EQ(b.nocc, 1);
    ag_benefit_set_need(&b, 0, 1000);
    CHECK(!ag_benefit_dormant(&b));
    /* need 0 (BENEFIT=now, or a cheap sequence): probed from the start */
    ag_benefit_init(&b, 0, 8);
    ag_benefit_set_need(&b, 2, 0);
    CHECK(!ag_benefit_dormant(&b));
    skip_probe(&b);
}

/* Variants of a decode step take turns: no two occurrences of a sequence follow each other, and
 * its holds break off now and then (resetting the interval), so a trial gets no interval
 * samples; it decides on the occurrences' spans once it has AG_BEN_SAMPLES of each mode (the
 * eager ones carried from the probe), by their lower quartiles (upward outliers are other work
 * that fell inside an occurrence). */
/* Runs a trial to its end: host intervals hg/he (with a +-3% wobble, the same in both modes),
 * spans sg/se, GPU intervals gg/ge when nonzero (arriving at once). */
static void span_trial(ag_benefit *b, uint64_t hg, uint64_t he, uint64_t sg, uint64_t se,
                       uint64_t gg, uint64_t ge)
{
    static const int wob[] = { 0, 3, -2, 1, -3, 2, -1, 3 };
    uint64_t t = 1;
    int i = 0;
    ag_benefit_init(b, 0, 121);
    skip_probe(b);
    for (; b->state == AG_BEN_TRIAL && i < 100; i++) {
        int want = ag_benefit_want_graph(b);
        if (gg && ag_benefit_want_gpu_mark(b))
            ag_benefit_marked(b);
        if (gg && i)
            ag_benefit_gpu(b, b->trial_id, want, 0, want ? gg : ge);
        ag_benefit_span(b, want, 0, want ? sg : se);
        ag_benefit_occurred(b, want, 0, t);
        uint64_t h = want ? hg : he;
        t += h + (int64_t)h * wob[i % 8] / 100;
    }
}

/* A decode step's layer block (a fifth of a token's step): its intervals are the whole step,
 * as noisy as its saving, and tie; its spans say graphs win by 12%. Without a GPU view the
 * spans break the tie; with one that ties too, they do not (the saving is host time the
 * program does not wait for); spans that tie too leave graphs off. */
static void test_span_tiebreak(void)
{
    ag_benefit b;
    span_trial(&b, 6230000, 6181000, 2500000, 2850000, 0, 0);
    CHECK_EQ(b.state, AG_BEN_ON);
    span_trial(&b, 6230000, 6181000, 2500000, 2850000, 6200000, 6190000);
    CHECK_EQ(b.state, AG_BEN_OFF);
    span_trial(&b, 6230000, 6181000, 2800000, 2850000, 0, 0);
    CHECK_EQ(b.state, AG_BEN_OFF);
    /* intervals that lose are not overruled by spans that win */
    span_trial(&b, 6600000, 6181000, 2500000, 2850000, 0, 0);
    CHECK_EQ(b.state, AG_BEN_OFF);
}

static void test_spans_when_no_intervals(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0, 121);
    /* the probe (no marks: two eager occurrences): its eager spans are kept for the trial */
    for (int i = 0; i < 2; i++) {
        ag_benefit_span(&b, 0, 0, 2800000);
        ag_benefit_span(&b, 1, 0, 1); /* (a probe has no graph occurrences: ignored) */
        ag_benefit_occurred(&b, 0, 0, 0);
    }
    CHECK_EQ(b.state, AG_BEN_TRIAL);
    CHECK_EQ(b.nspe, 2);
    CHECK_EQ(b.nspg, 0);
    /* the trial: each occurrence told after its span, its interval never measured */
    static const uint64_t g[] = { 2300000, 2400000, 3700000, 2350000,
                                  3600000, 2450000, 3650000, 2380000 };
    static const uint64_t e[] = { 2810000, 2830000, 3900000, 2820000,
                                  2850000, 2840000, 2860000, 2870000 };
    int n = 0, ng = 0, ne = 2;
    while (b.state == AG_BEN_TRIAL && n < 100) {
        int want = ag_benefit_want_graph(&b);
        ag_benefit_span(&b, want, 0, want ? g[ng++ % 8] : e[ne++ % 8]);
        ag_benefit_aborted(&b); /* (as a sibling's break-off: no interval across it) */
        b.aborts = 0;
        ag_benefit_occurred(&b, want, 0, 1000 + (uint64_t)n);
        n++;
    }
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(n < 40);                   /* as soon as the spans are in, not at the 96 limit */
    CHECK(b.ng == 0 && b.ne == 0);   /* (no interval at all) */
    CHECK(b.med_graph == 2380000);   /* the lower quartile (3rd of 8), not the 3.6 ms outliers */
    CHECK(b.med_eager < 2850000);

    /* the same when graphs are slower: off */
    ag_benefit_init(&b, 0, 121);
    skip_probe(&b);
    for (int i = 0; i < 100 && b.state == AG_BEN_TRIAL; i++) {
        int want = ag_benefit_want_graph(&b);
        ag_benefit_span(&b, want, 0, want ? 3000000 : 2000000);
        ag_benefit_aborted(&b);
        b.aborts = 0;
        ag_benefit_occurred(&b, want, 0, 1000 + (uint64_t)i);
    }
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK(b.med_graph == 3000000 && b.med_eager == 2000000);

    /* a loop whose occurrences follow each other decides on its intervals, as before: the
     * spans (here the opposite verdict) are not used */
    ag_benefit_init(&b, 0, 121);
    skip_probe(&b);
    uint64_t t = 1;
    for (int i = 0; i < 100 && b.state == AG_BEN_TRIAL; i++) {
        int want = ag_benefit_want_graph(&b);
        ag_benefit_span(&b, want, 0, want ? 3000000 : 2000000);
        ag_benefit_occurred(&b, want, 0, t);
        t += want ? 1000000 : 2000000;
    }
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.med_graph == 1000000 && b.med_eager == 2000000);
}

/* The decision line's samples: every host sample of the trial, in the order taken, in us; a
 * buffer too small is cut, never overrun. */
static void test_describe(void)
{
    ag_benefit b;
    uint64_t t = 1000;
    trial_until_decided(&b, 8, 30000, 100000, &t);
    CHECK(b.state == AG_BEN_ON && b.ng >= 4 && b.ne >= 4);
    char buf[512], want[64];
    ag_benefit_describe(&b, buf, sizeof buf);
    CHECK(strncmp(buf, "host: graph [30.0 30.0", 22) == 0);
    snprintf(want, sizeof want, "eager [100.0");
    CHECK(strstr(buf, want) != NULL);
    unsigned n = 0;
    for (const char *p = buf; (p = strstr(p, "30.0")); p++)
        n++;
    CHECK_EQ(n, b.ng); /* (the first graph sample, the build's, is not one) */
    CHECK(strstr(buf, "gpu:") == NULL); /* no GPU samples: left out */
    char small[16];
    memset(small, 'x', sizeof small);
    ag_benefit_describe(&b, small, 10);
    CHECK(memchr(small, 0, 10) != NULL && small[10] == 'x');
}

static void test_variant_gate(void)
{
    /* A variant that follows its group's policy keeps its own breaking off apart (a gate): four
     * aborts shut it for the abort back-off (64 occurrences of the variant, then it opens);
     * holds that completed as graphs outweigh aborts, as for a sequence of its own. */
    ag_benefit g;
    ag_benefit_init(&g, 0, 200);
    CHECK(!ag_benefit_gate_shut(&g));
    for (int i = 0; i < 3; i++)
        ag_benefit_aborted(&g);
    CHECK(!ag_benefit_gate_shut(&g));
    ag_benefit_aborted(&g);
    CHECK(ag_benefit_gate_shut(&g));
    int opened = 0;
    for (int i = 0; i < 200 && !opened; i++) {
        ag_benefit_gate_occurred(&g, 0);
        opened = !ag_benefit_gate_shut(&g) ? i + 1 : 0;
    }
    CHECK_EQ(opened, 64);
    for (int i = 0; i < 8; i++) /* completions first: four aborts no longer shut it */
        ag_benefit_gate_occurred(&g, 1);
    for (int i = 0; i < 4; i++)
        ag_benefit_aborted(&g);
    CHECK(!ag_benefit_gate_shut(&g));
    for (int i = 0; i < 8; i++) /* more aborts than completions: shut, for twice as long */
        ag_benefit_aborted(&g);
    CHECK(ag_benefit_gate_shut(&g));
    opened = 0;
    for (int i = 0; i < 400 && !opened; i++) {
        ag_benefit_gate_occurred(&g, 0);
        opened = !ag_benefit_gate_shut(&g) ? i + 1 : 0;
    }
    CHECK_EQ(opened, 128);
}

int main(void)
{
    test_describe();
    test_spans_when_no_intervals();
    test_payback_dormant();
    test_probe_gpu_bound();
    test_probe_gpu_slower();
    test_probe_samples_carried();
    test_probe_carried_modest_win();
    test_probe_one_behind_is_noise();
    test_probe_marks_bounded();
    test_queued_one_piece();
    test_divergence_backs_off();
    test_gpu_bound_async();
    test_gpu_waits_for_samples();
    test_gpu_wins_host_equal();
    test_stale_gpu_samples();
    test_short_sequences();
    test_clear_loss_ends_early();
    test_slow_first_graph_block();
    test_first_loss_second_opinion();
    test_span_tiebreak();
    test_clear_win_ends_early();
    test_graph_wins();
    test_eager_wins();
    test_aborts_and_failures();
    test_build_sample_excluded();
    test_unsampled_breaks_interval();
    test_variant_gate();
    return check_done("test_benefit");
}
