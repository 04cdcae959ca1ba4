/* See json.h. */
#include "json.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p, *end;
    json_doc *doc;
    int failed;
} parser;

static void *alloc(json_doc *d, size_t n)
{
    return ag_arena_alloc(&d->arena, n, 65536);
}

static void fail(parser *ps, const char *what)
{
    if (!ps->failed)
        snprintf(ps->doc->err, sizeof ps->doc->err, "%s", what);
    ps->failed = 1;
}

static void ws(parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static int lit(parser *ps, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, w, n))
        return 0;
    ps->p += n;
    return 1;
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t utf8(unsigned cp, char *o)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | cp >> 6);
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | cp >> 12);
        o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | cp >> 18);
    o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A string at ps->p (on the opening quote): its unescaped copy, or NULL. */
static char *string(parser *ps, size_t *len)
{
    const char *s = ++ps->p;
    size_t raw = 0, avail = (size_t)(ps->end - s);
    /* find the end first: the copy is never longer than the raw text */
    while (raw < avail && s[raw] != '"')
        raw += s[raw] == '\\' ? 2 : 1;
    if (raw >= avail) {
        fail(ps, "unterminated string");
        return NULL;
    }
    char *out = alloc(ps->doc, raw + 1);
    if (!out) {
        fail(ps, "out of memory");
        return NULL;
    }
    size_t k = 0;
    const char *e = s + raw;
    while (s < e) {
        unsigned char c = (unsigned char)*s++;
        if (c < 0x20) {
            ps->p = s - 1;
            fail(ps, "control character in string");
            return NULL;
        }
        if (c != '\\') {
            out[k++] = (char)c;
            continue;
        }
        char x = *s++; /* s < e here: a backslash never ends the raw text */
        switch (x) {
        case '"': out[k++] = '"'; break;
        case '\\': out[k++] = '\\'; break;
        case '/': out[k++] = '/'; break;
        case 'b': out[k++] = '\b'; break;
        case 'f': out[k++] = '\f'; break;
        case 'n': out[k++] = '\n'; break;
        case 'r': out[k++] = '\r'; break;
        case 't': out[k++] = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (e - s < 4 || hex4(s, &cp)) {
                ps->p = s;
                fail(ps, "bad \\u escape");
                return NULL;
            }
            s += 4;
            if (cp >= 0xD800 && cp < 0xDC00 && e - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
                !hex4(s + 2, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                s += 6;
            } else if (cp >= 0xD800 && cp < 0xE000) {
                cp = 0xFFFD; /* a lone surrogate */
            }
            /* \uXXXX is 6 bytes of input and at most 3 of output; a pair 12 and 4 */
            k += utf8(cp, out + k);
            break;
        }
        default:
            ps->p = s - 1;
            fail(ps, "bad escape");
            return NULL;
        }
    }
    out[k] = 0;
    *len = k;
    ps->p = e + 1;
    return out;
}

static int digits(parser *ps)
{
    const char *s = ps->p;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9')
        ps->p++;
    return ps->p > s;
}

static int number(parser *ps, double *out)
{
    const char *s = ps->p;
    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (ps->p < ps->end && *ps->p == '0')
        ps->p++;
    else if (!digits(ps))
        return -1;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (!digits(ps))
            return -1;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!digits(ps))
            return -1;
    }
    char buf[64];
    size_t n = (size_t)(ps->p - s);
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = 0;
    *out = strtod(buf, NULL);
    return 0;
}

static json *value(parser *ps, int depth)
{
    ws(ps);
    if (ps->p >= ps->end) {
        fail(ps, "unexpected end");
        return NULL;
    }
    if (depth > JSON_MAX_DEPTH) {
        fail(ps, "nested too deeply");
        return NULL;
    }
    json *v = alloc(ps->doc, sizeof *v);
    if (!v) {
        fail(ps, "out of memory");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    char c = *ps->p;
    if (c == '{' || c == '[') {
        v->type = c == '{' ? JSON_OBJ : JSON_ARR;
        char close = c == '{' ? '}' : ']';
        ps->p++;
        ws(ps);
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            return v;
        }
        json **tail = &v->child;
        for (;;) {
            const char *key = NULL;
            if (v->type == JSON_OBJ) {
                ws(ps);
                size_t kl;
                if (ps->p >= ps->end || *ps->p != '"' || !(key = string(ps, &kl))) {
                    fail(ps, "expected a member name");
                    return NULL;
                }
                ws(ps);
                if (ps->p >= ps->end || *ps->p != ':') {
                    fail(ps, "expected ':'");
                    return NULL;
                }
                ps->p++;
            }
            json *m = value(ps, depth + 1);
            if (!m)
                return NULL;
            m->key = key;
            *tail = m;
            tail = &m->next;
            v->len++;
            ws(ps);
            if (ps->p < ps->end && *ps->p == ',') {
                ps->p++;
                continue;
            }
            if (ps->p < ps->end && *ps->p == close) {
                ps->p++;
                return v;
            }
            fail(ps, v->type == JSON_OBJ ? "expected ',' or '}'" : "expected ',' or ']'");
            return NULL;
        }
    }
    if (c == '"') {
        v->type = JSON_STR;
        if (!(v->str = string(ps, &v->len)))
            return NULL;
        return v;
    }
    if (lit(ps, "true") || lit(ps, "false")) {
        v->type = JSON_BOOL;
        v->num = ps->p[-1] == 'e' && ps->p[-2] == 'u';
        return v;
    }
    if (lit(ps, "null"))
        return v;
    v->type = JSON_NUM;
    if (number(ps, &v->num)) {
        fail(ps, "bad value");
        return NULL;
    }
    return v;
}

void json_free(json_doc *d)
{
    ag_arena_free(&d->arena);
    d->root = NULL;
}

int json_parse(json_doc *d, const char *text, size_t n)
{
    memset(d, 0, sizeof *d);
    parser ps = { text, text + n, d, 0 };
    json *r = value(&ps, 0);
    if (r) {
        ws(&ps);
        if (ps.p != ps.end) {
            fail(&ps, "trailing characters");
            r = NULL;
        }
    }
    if (!r) {
        if (!d->err[0])
            snprintf(d->err, sizeof d->err, "invalid JSON");
        /* the position, appended: where the parser stopped */
        size_t l = strlen(d->err);
        snprintf(d->err + l, sizeof d->err - l, " (byte %zu)", (size_t)(ps.p - text));
        return -1;
    }
    d->root = r;
    return 0;
}

const json *json_get(const json *o, const char *key)
{
    if (!o || o->type != JSON_OBJ)
        return NULL;
    for (const json *m = o->child; m; m = m->next)
        if (m->key && !strcmp(m->key, key))
            return m;
    return NULL;
}

double json_num(const json *n, double def)
{
    return n && n->type == JSON_NUM ? n->num : def;
}

const char *json_str(const json *n, const char *def)
{
    return n && n->type == JSON_STR ? n->str : def;
}
