/* Reading AUTOGRAPH_TRACE files (see traceread.h). */
#include "traceread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_HDR 4096 /* a later version's header may be longer; not this much */

struct ag_trr {
    FILE *f;
    pid_t gzip;               /* > 0: read through gzip -dc, this child */
    int gzip_status;          /* its wait status, once reaped (gzip_reaped) */
    int gzip_reaped, eof;
    ag_tr_file hdr;
    uint64_t off, rec_off;    /* bytes read; the last record's offset */
    uint64_t nrec;
    int ended, failed;
    char err[512];
    uint64_t buf[65536 / 8];  /* the current record (sizes are 16 bits) */
};

static void fail(ag_trr *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(ag_trr *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err, sizeof r->err, fmt, ap);
    va_end(ap);
    r->failed = 1;
}

static size_t get(ag_trr *r, void *p, size_t n)
{
    size_t k = n ? fread(p, 1, n, r->f) : 0;
    r->off += k;
    if (k < n)
        r->eof = 1;
    return k;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* gzip -dc -- path, run directly (no shell: any path is safe), its stdout our input and its
 * stderr /dev/null (its own message would be a second one: the reader's says it). */
static FILE *gzip_open(const char *path, pid_t *pid)
{
    int p[2];
    if (pipe(p))
        return NULL;
    *pid = fork();
    if (*pid < 0) {
        close(p[0]);
        close(p[1]);
        return NULL;
    }
    if (*pid == 0) {
        dup2(p[1], 1);
        close(p[0]);
        close(p[1]);
        int devnull = open("/dev/null", O_WRONLY);
        if (devnull >= 0)
            dup2(devnull, 2);
        execlp("gzip", "gzip", "-dc", "--", path, (char *)NULL);
        _exit(127);
    }
    close(p[1]);
    FILE *f = fdopen(p[0], "rb");
    if (!f)
        close(p[0]);
    return f;
}

/* Waits for gzip once its output has ended; 1 when it failed. */
static int gzip_failed(ag_trr *r)
{
    if (r->gzip <= 0)
        return 0;
    if (!r->gzip_reaped) {
        while (waitpid(r->gzip, &r->gzip_status, 0) < 0 && errno == EINTR)
            ;
        r->gzip_reaped = 1;
    }
    return !WIFEXITED(r->gzip_status) || WEXITSTATUS(r->gzip_status) != 0;
}

/* Where the input ended early: through gzip, gzip's failure (a cut or foreign .gz file) is
 * the cause to report, not the cut it left in the trace. 1 when it said so in *why. */
static int gzip_why(ag_trr *r, char *why, size_t n)
{
    if (!r->eof || !gzip_failed(r))
        return 0;
    snprintf(why, n, "%s",
             WIFEXITED(r->gzip_status) && WEXITSTATUS(r->gzip_status) == 127
                 ? "cannot run gzip to decompress it"
                 : "gzip -dc failed: not a gzip file, or cut short");
    return 1;
}

ag_trr *ag_trr_open(const char *path, char *err, size_t errlen)
{
    ag_trr *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (ends_with(path, ".gz")) {
        if (access(path, R_OK)) {
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
            free(r);
            return NULL;
        }
        r->f = gzip_open(path, &r->gzip);
        if (!r->f) {
            snprintf(err, errlen, "cannot run gzip for %s: %s", path, strerror(errno));
            if (r->gzip > 0)
                while (waitpid(r->gzip, NULL, 0) < 0 && errno == EINTR)
                    ;
            free(r);
            return NULL;
        }
    } else {
        r->f = fopen(path, "rb");
    }
    if (!r->f) {
        snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
        free(r);
        return NULL;
    }
    uint8_t head[16];
    size_t n = get(r, head, sizeof head);
    const char *why = NULL, *sep = " "; /* "PATH is not ...", "PATH: gzip -dc failed" */
    char tmp[128];
    uint32_t version = 0, hdr_size = 0;
    if (n >= 16) {
        memcpy(&version, head + 8, 4);
        memcpy(&hdr_size, head + 12, 4);
    }
    if (n < 16 && gzip_why(r, tmp, sizeof tmp)) {
        why = tmp;
        sep = ": ";
    }
    else if (n < 8 || memcmp(head, AG_TR_MAGIC, 8))
        why = n == 0 ? "is empty, not an autograph trace"
                     : "is not an autograph trace (no AGTRACE header)";
    else if (n < 16)
        why = "is cut short inside its header";
    else if (version != AG_TR_VERSION) {
        snprintf(tmp, sizeof tmp, "is a trace of format version %u; this reader knows version %u",
                 version, AG_TR_VERSION);
        why = tmp;
    } else if (hdr_size < sizeof(ag_tr_file) || hdr_size > MAX_HDR || hdr_size % 8) {
        snprintf(tmp, sizeof tmp, "has a corrupt header (header size %u)", hdr_size);
        why = tmp;
    } else {
        memcpy(&r->hdr, head, sizeof head);
        uint8_t rest[MAX_HDR];
        if (get(r, (uint8_t *)&r->hdr + 16, sizeof r->hdr - 16) != sizeof r->hdr - 16 ||
            get(r, rest, hdr_size - sizeof r->hdr) != hdr_size - sizeof r->hdr)
            why = gzip_why(r, tmp, sizeof tmp) ? (sep = ": ", tmp) : "is cut short inside its header";
        r->hdr.host[sizeof r->hdr.host - 1] = 0;
        r->hdr.cmd[sizeof r->hdr.cmd - 1] = 0;
    }
    if (why) {
        snprintf(err, errlen, "%s%s%s", path, sep, why);
        ag_trr_close(r);
        return NULL;
    }
    return r;
}

const ag_tr_file *ag_trr_header(const ag_trr *r)
{
    return &r->hdr;
}

const char *ag_trr_error(const ag_trr *r)
{
    return r->err;
}

uint64_t ag_trr_offset(const ag_trr *r)
{
    return r->rec_off;
}

/* The smallest size of each known record type. */
static size_t min_size(int type)
{
    switch (type) {
    case AG_TR_NAME: return sizeof(ag_tr_name) + 8;
    case AG_TR_FUNC: return sizeof(ag_tr_func) + 8;
    case AG_TR_STREAM: return sizeof(ag_tr_stream);
    case AG_TR_LAUNCH: return sizeof(ag_tr_launch);
    case AG_TR_OP: return sizeof(ag_tr_op);
    case AG_TR_COPY: return sizeof(ag_tr_copy);
    case AG_TR_GPU: return sizeof(ag_tr_gpu);
    case AG_TR_END: return sizeof(ag_tr_end);
    default: return sizeof(ag_tr_hdr);
    }
}

int ag_trr_next(ag_trr *r, const ag_tr_hdr **rec)
{
    if (r->failed)
        return -1;
    ag_tr_hdr *h = (ag_tr_hdr *)r->buf;
    r->rec_off = r->off;
    size_t n = get(r, h, sizeof *h);
    char why[128];
    if (n == 0 && r->ended)
        return 0;
    if (n < sizeof *h && gzip_why(r, why, sizeof why)) {
        fail(r, "%s", why);
        return -1;
    }
    if (n == 0) {
        fail(r, "truncated: no END record after %llu records (the recording did not end "
             "normally, or the file was cut)", (unsigned long long)r->nrec);
        return -1;
    }
    if (n < sizeof *h) {
        fail(r, "truncated: cut short inside a record at offset %llu",
             (unsigned long long)r->rec_off);
        return -1;
    }
    if (r->ended) {
        fail(r, "data after the END record, at offset %llu", (unsigned long long)r->rec_off);
        return -1;
    }
    if (h->size < min_size(h->type) || h->size % 8) {
        fail(r, "corrupt record at offset %llu (type %u, size %u)",
             (unsigned long long)r->rec_off, h->type, h->size);
        return -1;
    }
    if (get(r, h + 1, h->size - sizeof *h) != h->size - sizeof *h) {
        if (gzip_why(r, why, sizeof why))
            fail(r, "%s", why);
        else
            fail(r, "truncated: cut short inside a record at offset %llu",
                 (unsigned long long)r->rec_off);
        return -1;
    }
    uint8_t *b = (uint8_t *)r->buf;
    if (h->type == AG_TR_NAME) {
        ag_tr_name *m = (ag_tr_name *)h;
        if ((uint64_t)sizeof *m + m->len + 1 > h->size) {
            fail(r, "corrupt NAME record at offset %llu", (unsigned long long)r->rec_off);
            return -1;
        }
        b[sizeof *m + m->len] = 0;
    } else if (h->type == AG_TR_FUNC) {
        ag_tr_func *f = (ag_tr_func *)h;
        uint64_t end = sizeof *f + 4ull * f->nparams + f->name_len;
        if (end + 1 > h->size) {
            fail(r, "corrupt FUNC record at offset %llu", (unsigned long long)r->rec_off);
            return -1;
        }
        b[end] = 0;
    } else if (h->type == AG_TR_END) {
        r->ended = 1;
    }
    r->nrec++;
    *rec = h;
    return 1;
}

const char *ag_trr_name_str(const ag_tr_name *n)
{
    return (const char *)(n + 1);
}

const uint32_t *ag_trr_func_params(const ag_tr_func *f)
{
    return (const uint32_t *)(f + 1);
}

const char *ag_trr_func_name(const ag_tr_func *f)
{
    return (const char *)(ag_trr_func_params(f) + f->nparams);
}

int ag_trr_close(ag_trr *r)
{
    if (!r)
        return 0;
    int rc = 0;
    fclose(r->f);
    if (r->gzip > 0) {
        /* gzip is stopped by the closed pipe when we stop early: its failure then means
         * nothing; after a complete trace it does (a corrupt end of the .gz file) */
        rc = gzip_failed(r) && !r->failed && r->ended ? -1 : 0;
    }
    free(r);
    return rc;
}

const char *ag_trr_copy_name(unsigned op)
{
    static const char *const names[] = { "memsetD8", "memsetD16", "memsetD32", "memcpy",
                                         "memcpyHtoD", "memcpyDtoH", "memcpyDtoD" };
    return op < sizeof names / sizeof *names ? names[op] : "?";
}
