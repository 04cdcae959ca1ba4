/* A small JSON reader for our own files (the stats JSON): the whole text parsed into a tree
 * held in one arena. Strict (RFC 8259 grammar), bounded nesting, never crashes on bad input:
 * json_parse fails with a message instead. */
#ifndef AG_JSON_H
#define AG_JSON_H

#include <stddef.h>

#include "arena.h"

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR, JSON_ARR, JSON_OBJ } json_type;

typedef struct json {
    json_type type;
    double num;              /* JSON_NUM; JSON_BOOL: 0 or 1 */
    const char *str;         /* JSON_STR: the value, unescaped, NUL-terminated */
    size_t len;              /* JSON_STR: its length (it may hold NULs); ARR/OBJ: members */
    const char *key;         /* the member's name, inside an object */
    struct json *child, *next;
} json;

typedef struct json_doc {
    json *root;
    char err[160];           /* why json_parse failed */
    ag_arena arena;          /* the values */
} json_doc;

#define JSON_MAX_DEPTH 64

/* Parses text[0..n); 0 and doc->root, or -1 with doc->err. json_free in both cases. */
int json_parse(json_doc *doc, const char *text, size_t n);
void json_free(json_doc *doc);

/* The member `key` of an object, or NULL (also when o is NULL or not an object). */
const json *json_get(const json *o, const char *key);
/* A number, or def when n is not one. */
double json_num(const json *n, double def);
/* A string, or def when n is not one. */
const char *json_str(const json *n, const char *def);

#endif
