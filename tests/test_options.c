/* The option table: parsing of every type, bounds, defaults and invalid values; the fault
 * spec parser; the log's settings, line prefix, file and warning cap. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy/faultspec.h"
#include "policy/log.h"
#include "policy/options.h"
#include "check.h"

static char g_log[256];

/* The log file's text so far (the test's own buffer). */
static const char *log_text(void)
{
    static char buf[16384];
    FILE *f = fopen(g_log, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = 0;
    return buf;
}

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

static void *thread_logs(void *arg)
{
    ag_log(AG_LOG_INFO, "from a thread");
    return arg;
}

static void test_log(void)
{
    char want[128];
    /* path patterns */
    char out[64];
    CHECK_EQ(ag_path_expand("a.%p.json", out, sizeof out), 0);
    snprintf(want, sizeof want, "a.%ld.json", (long)getpid());
    CHECK(!strcmp(out, want));
    CHECK_EQ(ag_path_expand("100%%-%q", out, sizeof out), 0);
    CHECK(!strcmp(out, "100%-%q"));
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    CHECK_EQ(ag_path_expand("%h", out, sizeof out), 0);
    CHECK(!strcmp(out, host));
    CHECK_EQ(ag_path_expand("%p%p%p%p%p%p%p%p%p%p", out, 16), -1); /* too long: refused */

    /* the file, through the options: %p expanded, every line with the pid prefix */
    snprintf(g_log, sizeof g_log, "/tmp/ag_test_log.%ld", (long)getpid());
    unlink(g_log);
    setenv("AUTOGRAPH_LOG_FILE", "/tmp/ag_test_log.%p", 1);
    setenv("AUTOGRAPH_LOG", "info", 1);
    setenv("AUTOGRAPH_MAX_HOLD_US", "500", 1);
    ag_options_reload();
    CHECK_EQ(ag_log_level(), AG_LOG_INFO); /* set by options, read from log's own atomic */
    /* at info, the options that differ from their defaults, once */
    snprintf(want, sizeof want, "autograph[%ld]: options: ", (long)getpid());
    CHECK(strstr(log_text(), want) != NULL);
    CHECK(strstr(log_text(), "MAX_HOLD_US=500 (default 2000)") != NULL);
    CHECK(strstr(log_text(), "MIN_REPEATS=") == NULL); /* unset: not listed */
    ag_log(AG_LOG_DEBUG, "not shown at info");
    CHECK(strstr(log_text(), "not shown") == NULL);
    ag_log(AG_LOG_INFO, "shown %d", 7);
    snprintf(want, sizeof want, "autograph[%ld]: shown 7\n", (long)getpid());
    CHECK(strstr(log_text(), want) != NULL);
    pthread_t t;
    pthread_create(&t, NULL, thread_logs, NULL);
    pthread_join(t, NULL);
    snprintf(want, sizeof want, "autograph[%ld:", (long)getpid());
    const char *tl = strstr(log_text(), want);
    CHECK(tl && strstr(tl, "]: from a thread\n"));

    /* the cap: 10 lines of one format, the 10th says so, the rest counted */
    uint64_t before = ag_log_suppressed();
    for (int i = 0; i < 25; i++)
        ag_log(AG_LOG_WARN, "repeated warning %d", i);
    const char *txt = log_text();
    CHECK_EQ(count_of(txt, "warning: repeated warning"), AG_LOG_CAP);
    CHECK(strstr(txt, "repeated warning 9 (further warnings of this kind suppressed)"));
    CHECK(!strstr(txt, "repeated warning 10"));
    CHECK_EQ(ag_log_suppressed() - before, 15);
    ag_log(AG_LOG_WARN, "another kind");  /* another format: not capped by the first */
    CHECK(strstr(log_text(), "warning: another kind\n"));
    ag_log_print_suppressed();
    CHECK(strstr(log_text(), "warning: 15 more warnings like \"repeated warning %d\" were suppressed"));
    unlink(g_log);
    unsetenv("AUTOGRAPH_LOG_FILE");
    unsetenv("AUTOGRAPH_MAX_HOLD_US");
    setenv("AUTOGRAPH_LOG", "error", 1);
    ag_options_reload();
    CHECK_EQ(ag_log_level(), AG_LOG_ERROR);
}

static void test_faultspec(void)
{
    long every[AG_FAULT_NPOINTS] = { 0 };
    CHECK_EQ(ag_fault_spec_parse("instantiate:3,launch", every), 0);
    CHECK_EQ(every[1], 3);
    CHECK_EQ(every[5], 1);
    CHECK_EQ(every[0], 0);
    CHECK(!strcmp(ag_fault_point_names[3], "update"));
    CHECK_EQ(ag_fault_spec_parse("launch:x", NULL), -1);
    CHECK(ag_fault_spec_valid(""));
}

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
    test_faultspec();
    test_log();
    return check_done("test_options");
}
