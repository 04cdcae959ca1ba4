/* The JSON reader of `autograph report` (cli/json.c): values, escapes, strictness, and no
 * crash (and no success) on any truncation of a valid document or on bytes flipped at random
 * (ASan in the sanitizer runs catches reads out of bounds). And the stats JSON's launch
 * accounting as policy/stats.c writes it: the `fates` object, the counters made from fates,
 * replayed_fraction of kernel launches only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/json.h"
#include "policy/stats.h"
#include "check.h"

static json_doc read_doc(const char *path)
{
    json_doc d;
    memset(&d, 0, sizeof d);
    FILE *f = fopen(path, "rb");
    char buf[1 << 16];
    size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f)
        fclose(f);
    CHECK(n > 0 && n < sizeof buf);
    CHECK_EQ(json_parse(&d, buf, n), 0);
    return d;
}

/* One process's counters, as the engine would leave them: 10 launches, 6 of them held (with 3
 * copies held too), 5 replayed in graphs (with the 3 copies), 1 flushed by a divergence, 2
 * learned, 1 rested, 1 while the application captured. */
static void test_stats_fates(void)
{
    ag_stat_add(AG_ST_LAUNCH, 7);
    ag_stat_add(AG_ST_EX_PTSZ, 3);
    ag_stat_add(AG_ST_HELD, 9);
    ag_stat_add(AG_ST_COPY_HELD, 3);
    ag_stat_add(AG_ST_REPLAYED, 8);
    ag_stat_add(AG_ST_COPY_REPLAYED, 3);
    ag_stat_add(AG_ST_FATE_REPLAYED, 5);
    ag_stat_add(AG_ST_FLUSHED, 1);
    ag_stat_add(AG_ST_FATE_DIVERGED, 1);
    ag_stat_add(AG_ST_FATE_EAGER_LEARNING, 2);
    ag_stat_add(AG_ST_FATE_REST_BACKOFF, 1);
    ag_stat_inc(AG_ST_CAPTURED);
    ag_stat_inc(AG_ST_FATE_CAPTURE);

    uint64_t c[AG_ST_COUNT];
    ag_stats_sum(c);
    CHECK_EQ(c[AG_ST_RESTED], 1);
    CHECK_EQ(c[AG_ST_PASSED], 4); /* learned, rested, captured */
    CHECK_EQ(c[AG_ST_PASSED] + c[AG_ST_HELD] - c[AG_ST_COPY_HELD], 10);

    char path[] = "/tmp/test_report_XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(ag_stats_write_json(path, NULL, 0, 0, 0.0), 0);
    json_doc d = read_doc(path);
    unlink(path);
    const json *f = json_get(d.root, "fates"), *k = json_get(d.root, "counters");
    CHECK(f && f->type == JSON_OBJ && f->len == AG_ST_FATE_END - AG_ST_FATE_FIRST);
    double sum = 0;
    int i = AG_ST_FATE_FIRST;
    for (const json *e = f ? f->child : NULL; e; e = e->next, i++) {
        CHECK(!strncmp(ag_stat_names[i], "fate.", 5) && !strcmp(e->key, ag_stat_names[i] + 5));
        CHECK(json_num(e, -1) == (double)c[i]);
        CHECK(json_num(json_get(k, ag_stat_names[i]), -1) == (double)c[i]);
        sum += json_num(e, 0);
    }
    CHECK(sum == 10);
    CHECK(json_num(json_get(f, "replayed"), 0) == 5);
    CHECK(json_num(json_get(f, "app_capture"), 0) == 1);
    CHECK(json_num(json_get(k, "launches.eager"), 0) == 4);
    CHECK(json_num(json_get(k, "launches.learning_rested"), 0) == 1);
    /* kernel launches only: replayed copies would make it 0.8 */
    CHECK(json_num(json_get(d.root, "replayed_fraction"), -1) == 0.5);
    json_free(&d);
}

static int ok(const char *t)
{
    json_doc d;
    int rc = json_parse(&d, t, strlen(t));
    json_free(&d);
    return rc == 0;
}

static const char doc[] =
    "{\"schema\": \"libautograph-stats/2\", \"pid\": 42, \"n\": -1.5e3, \"t\": true,\n"
    " \"f\": false, \"z\": null, \"s\": \"a\\\"b\\\\c\\n\\u00e9\\ud83d\\ude00\",\n"
    " \"a\": [1, [2, {\"k\": []}], {}], \"e\": \"\"}";

int main(void)
{
    json_doc d;
    CHECK_EQ(json_parse(&d, doc, strlen(doc)), 0);
    const json *r = d.root;
    CHECK(r && r->type == JSON_OBJ && r->len == 9);
    CHECK(!strcmp(json_str(json_get(r, "schema"), ""), "libautograph-stats/2"));
    CHECK(json_num(json_get(r, "pid"), 0) == 42);
    CHECK(json_num(json_get(r, "n"), 0) == -1500);
    CHECK(json_get(r, "t")->type == JSON_BOOL && json_get(r, "t")->num == 1);
    CHECK(json_get(r, "f")->type == JSON_BOOL && json_get(r, "f")->num == 0);
    CHECK(json_get(r, "z")->type == JSON_NULL);
    CHECK(!strcmp(json_str(json_get(r, "s"), ""), "a\"b\\c\n\xc3\xa9\xf0\x9f\x98\x80"));
    CHECK(json_num(json_get(r, "s"), -7) == -7);   /* wrong type: the default */
    CHECK(json_str(json_get(r, "pid"), NULL) == NULL);
    CHECK(json_get(r, "missing") == NULL);
    CHECK(json_get(NULL, "x") == NULL);
    const json *a = json_get(r, "a");
    CHECK(a && a->type == JSON_ARR && a->len == 3 && a->child->num == 1);
    CHECK(a->child->next->child->next->type == JSON_OBJ);
    CHECK(json_get(a->child->next->child->next, "k")->type == JSON_ARR);
    CHECK(!strcmp(json_str(json_get(r, "e"), "x"), ""));
    json_free(&d);

    /* strict grammar */
    CHECK(ok(" [ ] "));
    CHECK(ok("0"));
    CHECK(!ok(""));
    CHECK(!ok("[1,]"));
    CHECK(!ok("{\"a\" 1}"));
    CHECK(!ok("{\"a\":1,}"));
    CHECK(!ok("{a:1}"));
    CHECK(!ok("01"));
    CHECK(!ok("1."));
    CHECK(!ok("-"));
    CHECK(!ok("1e"));
    CHECK(!ok("\"\\x\""));
    CHECK(!ok("\"\\u12\""));
    CHECK(!ok("\"tab\there\""));
    CHECK(!ok("[1] 2"));
    CHECK(!ok("tru"));
    CHECK(!ok("\"abc\\\""));
    CHECK(ok("\"\\ud800\"")); /* a lone surrogate becomes U+FFFD */
    CHECK(ok("1e999"));        /* inf: the report never casts it to an integer */
    {
        json_doc z;
        CHECK_EQ(json_parse(&z, "[1]\0", 4), -1); /* a NUL inside the text is not JSON */
        CHECK(strstr(z.err, "trailing") != NULL);
        json_free(&z);
    }

    /* nesting: bounded */
    char deep[2 * (JSON_MAX_DEPTH + 10) + 1];
    memset(deep, '[', JSON_MAX_DEPTH + 10);
    memset(deep + JSON_MAX_DEPTH + 10, ']', JSON_MAX_DEPTH + 10);
    deep[sizeof deep - 1] = 0;
    CHECK(!ok(deep));
    char fine[2 * JSON_MAX_DEPTH + 1];
    memset(fine, '[', JSON_MAX_DEPTH);
    memset(fine + JSON_MAX_DEPTH, ']', JSON_MAX_DEPTH);
    fine[sizeof fine - 1] = 0;
    CHECK(ok(fine));

    /* every proper prefix of the document fails (it is an object: only the whole closes it) */
    int prefix_ok = 0;
    for (size_t n = 0; n < strlen(doc); n++) {
        json_doc p;
        prefix_ok += json_parse(&p, doc, n) == 0;
        json_free(&p);
    }
    CHECK_EQ(prefix_ok, 0);

    /* random damage: never a crash; a parse that succeeds yields a tree of the right shape */
    uint64_t x = 88172645463325252ull;
    char buf[sizeof doc];
    for (int round = 0; round < 20000; round++) {
        memcpy(buf, doc, sizeof doc);
        for (int k = 0; k < 1 + round % 4; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            buf[x % (sizeof doc - 1)] = (char)(x >> 32);
        }
        json_doc p;
        if (json_parse(&p, buf, sizeof doc - 1) == 0)
            CHECK(p.root != NULL);
        else
            CHECK(p.err[0] != 0);
        json_free(&p);
    }
    test_stats_fates();
    return check_done("test_report");
}
