/* The option table: parsing of every type, bounds, defaults and invalid values. */
#include <stdlib.h>
#include <string.h>

#include "policy/options.h"
#include "check.h"

static int parses(ag_opt_id id, const char *text, long long want)
{
    long long v = -12345;
    const char *s;
    return ag_opt_parse(id, text, &v, &s) == 0 && v == want;
}

static int rejects(ag_opt_id id, const char *text)
{
    long long v;
    const char *s;
    return ag_opt_parse(id, text, &v, &s) != 0;
}

int main(void)
{
    /* every default parses */
    for (int i = 0; i < AG_OPT_COUNT; i++) {
        long long v;
        const char *s;
        CHECK_EQ(ag_opt_parse((ag_opt_id)i, ag_opt_table[i].def, &v, &s), 0);
        CHECK(ag_opt_table[i].doc && *ag_opt_table[i].doc);
    }
    CHECK(parses(AG_OPT_DISABLE, "1", 1));
    CHECK(parses(AG_OPT_DISABLE, "yes", 1));
    CHECK(parses(AG_OPT_DISABLE, "OFF", 0));
    CHECK(rejects(AG_OPT_DISABLE, "2"));
    CHECK(rejects(AG_OPT_DISABLE, ""));
    CHECK(parses(AG_OPT_MIN_REPEATS, "5", 5));
    CHECK(rejects(AG_OPT_MIN_REPEATS, "0"));
    CHECK(rejects(AG_OPT_MIN_REPEATS, "5x"));
    CHECK(rejects(AG_OPT_MIN_REPEATS, "-3"));
    CHECK(rejects(AG_OPT_MAX_NODES, "1"));
    CHECK(rejects(AG_OPT_MAX_NODES, "100000"));
    CHECK(parses(AG_OPT_MAX_GRAPH_MEM, "64M", 64LL << 20));
    CHECK(parses(AG_OPT_MAX_GRAPH_MEM, "2G", 2LL << 30));
    CHECK(parses(AG_OPT_MAX_GRAPH_MEM, "2GiB", 2LL << 30));
    CHECK(parses(AG_OPT_MAX_GRAPH_MEM, "1048576", 1048576));
    CHECK(rejects(AG_OPT_MAX_GRAPH_MEM, "12Q"));
    CHECK(rejects(AG_OPT_MAX_GRAPH_MEM, "1K")); /* under the minimum */
    CHECK(rejects(AG_OPT_MAX_GRAPH_MEM, "99999999999G"));
    CHECK(parses(AG_OPT_LOG, "debug", 3));
    CHECK(parses(AG_OPT_LOG, "ERROR", 0));
    CHECK(rejects(AG_OPT_LOG, "loud"));
    CHECK(parses(AG_OPT_BENEFIT, "always", AG_BENEFIT_ALWAYS));
    CHECK(rejects(AG_OPT_STATS, "banana"));
    CHECK(rejects(AG_OPT_STATS, "2"));
    CHECK(!rejects(AG_OPT_STATS, "/tmp/x.json"));
    CHECK(!rejects(AG_OPT_STATS, "1"));
    CHECK(!rejects(AG_OPT_DENY, "gemm*,*_kernel"));
    CHECK(rejects(AG_OPT_DENY, "a,,b"));
    CHECK(rejects(AG_OPT_DENY, ",a"));
    CHECK(!rejects(AG_OPT_FAULT, "instantiate:1,update:3"));
    CHECK(!rejects(AG_OPT_FAULT, "launch"));
    CHECK(rejects(AG_OPT_FAULT, "instantiate:0"));
    CHECK(rejects(AG_OPT_FAULT, "explode:1"));
    CHECK(rejects(AG_OPT_FAULT, "update:2,"));

    /* from the environment: a bad value keeps the default and is flagged */
    setenv("AUTOGRAPH_LOG", "error", 1); /* keep the test's output quiet */
    setenv("AUTOGRAPH_MIN_REPEATS", "lots", 1);
    setenv("AUTOGRAPH_MAX_NODES", "64", 1);
    ag_options_reload();
    CHECK_EQ(ag_opt(AG_OPT_MIN_REPEATS), 3);
    CHECK(ag_opt_invalid(AG_OPT_MIN_REPEATS));
    CHECK_EQ(ag_opt(AG_OPT_MAX_NODES), 64);
    CHECK(!ag_opt_invalid(AG_OPT_MAX_NODES));
    CHECK(!strcmp(ag_opt_raw(AG_OPT_MIN_REPEATS), "lots"));
    unsetenv("AUTOGRAPH_MIN_REPEATS");
    ag_options_reload();
    CHECK(!ag_opt_invalid(AG_OPT_MIN_REPEATS));
    CHECK(ag_opt_raw(AG_OPT_MIN_REPEATS) == NULL);
    return check_done("test_options");
}
