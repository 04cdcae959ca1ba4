/* Reading AUTOGRAPH_TRACE files (see traceread.h). */
#include "traceread.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_HDR 4096 /* a later version's header may be longer; not this much */

struct ag_trr {
    FILE *f;
    int pipe;                 /* read through gzip -dc */
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
    return k;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && !strcmp(s + n - m, suffix);
}

/* popen's command for gzip -dc on path, the path single-quoted. */
static char *gzip_command(const char *path)
{
    size_t n = strlen(path);
    char *cmd = malloc(4 * n + 32), *o = cmd;
    if (!cmd)
        return NULL;
    o += sprintf(o, "gzip -dc -- '");
    for (const char *p = path; *p; p++) {
        if (*p == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *p;
        }
    }
    strcpy(o, "'");
    return cmd;
}

ag_trr *ag_trr_open(const char *path, char *err, size_t errlen)
{
    ag_trr *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    if (ends_with(path, ".gz")) {
        char *cmd = access(path, R_OK) ? NULL : gzip_command(path);
        if (!cmd) {
            snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno ? errno : ENOMEM));
            free(r);
            return NULL;
        }
        r->f = popen(cmd, "r");
        r->pipe = 1;
        free(cmd);
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
    const char *why = NULL;
    char tmp[128];
    uint32_t version = 0, hdr_size = 0;
    if (n >= 16) {
        memcpy(&version, head + 8, 4);
        memcpy(&hdr_size, head + 12, 4);
    }
    if (n < 8 || memcmp(head, AG_TR_MAGIC, 8))
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
            why = "is cut short inside its header";
        r->hdr.host[sizeof r->hdr.host - 1] = 0;
        r->hdr.cmd[sizeof r->hdr.cmd - 1] = 0;
    }
    if (why) {
        snprintf(err, errlen, "%s %s", path, why);
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
    if (n == 0 && r->ended)
        return 0;
    if (n == 0) {
        fail(r, "cut short: no END record after %llu records (the recording did not end "
             "normally, or the file was cut)", (unsigned long long)r->nrec);
        return -1;
    }
    if (n < sizeof *h) {
        fail(r, "cut short inside a record at offset %llu", (unsigned long long)r->rec_off);
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
        fail(r, "cut short inside a record at offset %llu", (unsigned long long)r->rec_off);
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
    if (r->pipe) {
        /* gzip is told to stop when we stop early: its complaint then means nothing */
        int st = pclose(r->f);
        rc = st != 0 && !r->failed && r->ended ? -1 : 0;
    } else {
        fclose(r->f);
    }
    free(r);
    return rc;
}
