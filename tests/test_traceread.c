/* The trace reader (cli/traceread.c) on a small valid trace built here, on every truncation of
 * it, on random bytes and on random changes of it, and compressed (.gz) and cut: every record of
 * the valid trace comes back, anything else is one error (never a crash, never a record past
 * the input). The replay model reads traces through the same reader (cli/simtrace.c).
 *
 * Usage: test_traceread [TRACE]   (with a file: every truncation of it as well) */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "cli/traceread.h"

static char g_tmp[256];

static void put(uint8_t *buf, size_t *n, const void *rec, size_t size)
{
    memcpy(buf + *n, rec, size);
    *n += size;
}

static ag_tr_hdr hdr(int type, size_t size)
{
    ag_tr_hdr h;
    memset(&h, 0, sizeof h);
    h.type = (uint16_t)type;
    h.size = (uint16_t)size;
    h.tid = 1;
    return h;
}

/* header, NAME, FUNC (2 params), STREAM, LAUNCH, OP, COPY, GPU, END: 8 records */
static size_t build(uint8_t *buf)
{
    size_t n = 0;
    ag_tr_file f;
    memset(&f, 0, sizeof f);
    memcpy(f.magic, AG_TR_MAGIC, 8);
    f.version = AG_TR_VERSION;
    f.hdr_size = sizeof f;
    strcpy(f.host, "host");
    put(buf, &n, &f, sizeof f);
    uint8_t nm[48] = { 0 };
    ag_tr_name *a = (ag_tr_name *)nm;
    a->h = hdr(AG_TR_NAME, sizeof nm);
    a->id = 1;
    a->len = 6;
    memcpy(nm + sizeof *a, "cuTest", 6);
    put(buf, &n, nm, sizeof nm);
    uint8_t fn[64 + 8 + 8] = { 0 };
    ag_tr_func *b = (ag_tr_func *)fn;
    b->h = hdr(AG_TR_FUNC, sizeof fn);
    b->id = 1;
    b->flags = AG_TRFN_LAYOUT;
    b->nparams = 2;
    b->param_bytes = 12;
    b->name_len = 5;
    uint32_t params[2] = { 0 << 16 | 8, 8 << 16 | 4 };
    memcpy(fn + sizeof *b, params, sizeof params);
    memcpy(fn + sizeof *b + 8, "kern1", 5);
    put(buf, &n, fn, sizeof fn);
    ag_tr_stream s = { hdr(AG_TR_STREAM, sizeof s), AG_TRST_NONBLOCKING, 0, 0x1234 };
    put(buf, &n, &s, sizeof s);
    ag_tr_launch l;
    memset(&l, 0, sizeof l);
    l.h = hdr(AG_TR_LAUNCH, sizeof l);
    l.func = 1;
    put(buf, &n, &l, sizeof l);
    ag_tr_op o;
    memset(&o, 0, sizeof o);
    o.h = hdr(AG_TR_OP, sizeof o);
    o.h.seq = 1;
    o.name = 1;
    put(buf, &n, &o, sizeof o);
    ag_tr_copy c;
    memset(&c, 0, sizeof c);
    c.h = hdr(AG_TR_COPY, sizeof c);
    c.h.seq = 2;
    put(buf, &n, &c, sizeof c);
    ag_tr_gpu g = { hdr(AG_TR_GPU, sizeof g), 0, 1000 };
    put(buf, &n, &g, sizeof g);
    ag_tr_end e = { hdr(AG_TR_END, sizeof e), 3, 0 };
    put(buf, &n, &e, sizeof e);
    return n;
}

static void write_file(const void *p, size_t n)
{
    FILE *f = fopen(g_tmp, "wb");
    if (!f) {
        perror(g_tmp);
        exit(2);
    }
    fwrite(p, 1, n, f);
    fclose(f);
}

/* Reads path to its end: the records read, and the last result (0 end, -1 error, -2 the open
 * failed). Every record handed out must lie inside the file. */
static int read_all(const char *path, size_t file_size, int *nrec)
{
    char err[512];
    *nrec = 0;
    ag_trr *r = ag_trr_open(path, err, sizeof err);
    if (!r) {
        CHECK(err[0] != 0);
        return -2;
    }
    const ag_tr_hdr *h;
    int rc;
    size_t bytes = ag_trr_header(r)->hdr_size;
    while ((rc = ag_trr_next(r, &h)) == 1) {
        (*nrec)++;
        bytes += h->size;
        CHECK(h->size >= sizeof *h && h->size % 8 == 0);
        CHECK(bytes <= file_size);
        if (h->type == AG_TR_NAME)
            CHECK(strlen(ag_trr_name_str((const ag_tr_name *)h)) ==
                  ((const ag_tr_name *)h)->len);
        if (h->type == AG_TR_FUNC)
            CHECK(strlen(ag_trr_func_name((const ag_tr_func *)h)) ==
                  ((const ag_tr_func *)h)->name_len);
    }
    if (rc < 0)
        CHECK(ag_trr_error(r)[0] != 0);
    if (ag_trr_close(r) && rc == 0) /* gzip failed after a whole trace (a cut .gz trailer) */
        rc = -1;
    return rc;
}

static void truncations(const uint8_t *buf, size_t n, int whole_records)
{
    for (size_t k = 0; k < n; k++) {
        write_file(buf, k);
        int nrec, rc = read_all(g_tmp, k, &nrec);
        if (rc == 0) { /* only the whole file reads as complete */
            fprintf(stderr, "a trace cut at %zu of %zu bytes read as complete\n", k, n);
            CHECK(rc != 0);
        }
    }
    write_file(buf, n);
    int nrec;
    CHECK_EQ(read_all(g_tmp, n, &nrec), 0);
    if (whole_records)
        CHECK_EQ(nrec, whole_records);
}

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static uint32_t rnd(void)
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return (uint32_t)g_rng;
}

int main(int argc, char **argv)
{
    snprintf(g_tmp, sizeof g_tmp, "%s/test_traceread.%ld", getenv("TMPDIR") ? getenv("TMPDIR")
                                                                            : "/tmp",
             (long)getpid());
    if (argc > 1) { /* a recorded trace: every truncation */
        FILE *f = fopen(argv[1], "rb");
        if (!f) {
            perror(argv[1]);
            return 2;
        }
        static uint8_t big[1 << 22];
        size_t n = fread(big, 1, sizeof big, f);
        fclose(f);
        truncations(big, n, 0);
        unlink(g_tmp);
        return check_done("test_traceread (file)");
    }
    uint8_t buf[2048], tmp[2048];
    size_t n = build(buf);
    truncations(buf, n, 8);

    /* another version, a foreign file, an empty one: the open says so */
    int nrec;
    memcpy(tmp, buf, n);
    tmp[8] = 2;
    write_file(tmp, n);
    CHECK_EQ(read_all(g_tmp, n, &nrec), -2);
    write_file("#!/bin/sh\necho hello\n", 21);
    CHECK_EQ(read_all(g_tmp, 21, &nrec), -2);
    write_file("", 0);
    CHECK_EQ(read_all(g_tmp, 0, &nrec), -2);

    /* through gzip (a path ending in .gz): the whole file reads as the plain one; every cut
     * of the compressed file is an error (gzip's own failure where it ended early) */
    char gz[300], cmd[700];
    snprintf(gz, sizeof gz, "%s.gz", g_tmp);
    write_file(buf, n);
    snprintf(cmd, sizeof cmd, "gzip -n -c '%s' > '%s'", g_tmp, gz);
    if (system(cmd) == 0) {
        CHECK_EQ(read_all(gz, n, &nrec), 0);
        CHECK_EQ(nrec, 8);
        FILE *f = fopen(gz, "rb");
        static uint8_t z[4096];
        size_t zn = f ? fread(z, 1, sizeof z, f) : 0;
        if (f)
            fclose(f);
        CHECK(zn > 0);
        for (size_t k = 0; k < zn; k++) {
            f = fopen(gz, "wb");
            fwrite(z, 1, k, f);
            fclose(f);
            char err[512];
            ag_trr *r = ag_trr_open(gz, err, sizeof err);
            if (!r) {
                CHECK(strstr(err, "gzip -dc failed") != NULL);
                continue;
            }
            const ag_tr_hdr *h;
            int rc;
            while ((rc = ag_trr_next(r, &h)) == 1)
                ;
            if (rc < 0)
                CHECK(strstr(ag_trr_error(r), "gzip -dc failed") != NULL);
            CHECK(ag_trr_close(r) != 0 || rc < 0);
        }
        unlink(gz);
    } else {
        fprintf(stderr, "test_traceread: gzip not run: .gz reading not tested\n");
    }

    /* data after END */
    memcpy(tmp, buf, n);
    memcpy(tmp + n, buf + n - sizeof(ag_tr_end), sizeof(ag_tr_end));
    write_file(tmp, n + sizeof(ag_tr_end));
    CHECK_EQ(read_all(g_tmp, n + sizeof(ag_tr_end), &nrec), -1);

    /* random bytes, and random bytes after a valid header */
    for (int i = 0; i < 300; i++) {
        size_t k = rnd() % sizeof tmp;
        for (size_t j = 0; j < k; j++)
            tmp[j] = (uint8_t)rnd();
        if (i & 1 && k > sizeof(ag_tr_file))
            memcpy(tmp, buf, sizeof(ag_tr_file));
        write_file(tmp, k);
        read_all(g_tmp, k, &nrec);
    }
    /* random changes of the valid trace: never a crash, never a record outside the file */
    for (int i = 0; i < 1000; i++) {
        memcpy(tmp, buf, n);
        for (int j = 1 + rnd() % 4; j > 0; j--)
            tmp[sizeof(ag_tr_file) + rnd() % (n - sizeof(ag_tr_file))] = (uint8_t)rnd();
        write_file(tmp, n);
        read_all(g_tmp, n, &nrec);
    }
    unlink(g_tmp);
    return check_done("test_traceread");
}
