/* The cost/benefit policy on synthetic timings. */
#include "policy/benefit.h"
#include "check.h"

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

static void test_graph_wins(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0);
    CHECK(ag_benefit_want_graph(&b)); /* a trial starts with the graph */
    uint64_t t = 1000;
    int graphs = 0;
    run(&b, 40, 30000, 100000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK_EQ(b.wins, 1);
    CHECK(b.med_graph == 30000);
    CHECK(b.med_eager == 100000);
    /* stays on, re-checked after 64 occurrences, then after 256 (a short trial between) */
    int on_runs[3] = { 0, 0, 0 }, k = 0, prev_state = b.state;
    for (int i = 0; i < 2000 && k < 3; i++) {
        if (b.state == AG_BEN_ON)
            on_runs[k]++;
        run(&b, 1, 30000, 100000, &t, &graphs);
        if (prev_state == AG_BEN_ON && b.state == AG_BEN_TRIAL)
            k++;
        prev_state = b.state;
    }
    CHECK(on_runs[0] > 0 && on_runs[0] <= 64); /* part of the first 64 passed above */
    CHECK_EQ(on_runs[1], 256);
    CHECK_EQ(on_runs[2], 1024);
    CHECK_EQ(b.wins, 3);
}

static void test_eager_wins(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0);
    uint64_t t = 1000;
    int graphs = 0;
    /* compute-bound: the same either way -> eager (graphs must win by a margin) */
    run(&b, 40, 200000, 200000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_OFF);
    int before = graphs;
    run(&b, 30, 200000, 200000, &t, &graphs); /* (the first back-off is 64 occurrences) */
    CHECK_EQ(graphs, before); /* off: no graph occurrences during the back-off */
    /* after the back-off a new trial starts; if graphs now win, they come back */
    run(&b, 200, 50000, 200000, &t, &graphs);
    CHECK_EQ(b.state, AG_BEN_ON);
    CHECK(b.trials >= 2);
}

static void test_aborts_and_failures(void)
{
    ag_benefit b;
    ag_benefit_init(&b, 0);
    for (int i = 0; i < 4; i++)
        ag_benefit_aborted(&b);
    CHECK_EQ(b.state, AG_BEN_OFF);
    CHECK(!ag_benefit_want_graph(&b));

    ag_benefit_init(&b, 1); /* always: on without measuring, back on after a failure */
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
    ag_benefit_init(&b, 0);
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

int main(void)
{
    test_graph_wins();
    test_eager_wins();
    test_aborts_and_failures();
    test_build_sample_excluded();
    return check_done("test_benefit");
}
