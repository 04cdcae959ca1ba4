/* Loading the simulator's cost table (see simcost.h). */
#include "simcost.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"

/* A key's value: a number, or an object with a numeric "ns" (the committed files say where
 * each value comes from: {"ns": 2850, "source": "..."}). */
/* Fits over graph sizes (`*_base`) and GPU gaps relative to an event-timed kernel (`*_gap`)
 * may be negative as measured (docs/MODEL.md, "The cost table"); every other value is >= 0. */
static int may_be_negative(const char *key)
{
    size_t n = strlen(key);
    return (n > 5 && !strcmp(key + n - 5, "_base")) || (n > 4 && !strcmp(key + n - 4, "_gap"));
}

static int value_of(const json *sec, const char *key, double *out)
{
    const json *v = json_get(sec, key);
    if (v && v->type == JSON_OBJ)
        v = json_get(v, "ns");
    if (!v || v->type != JSON_NUM || (v->num < 0 && !may_be_negative(key)))
        return -1;
    *out = v->num;
    return 0;
}

int sim_costs_load(const char *path, sim_costs *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open the cost table: %s", path, strerror(errno));
        return -1;
    }
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    while (text) {
        size_t r = fread(text + n, 1, cap - n, f);
        n += r;
        if (n < cap)
            break;
        char *t = cap < (1u << 24) ? realloc(text, cap * 2) : NULL;
        if (!t) {
            free(text);
            text = NULL;
            break;
        }
        text = t;
        cap *= 2;
    }
    fclose(f);
    if (!text) {
        snprintf(err, errlen, "%s: cannot read the cost table (too large?)", path);
        return -1;
    }
    json_doc d;
    int rc = json_parse(&d, text, n);
    free(text);
    if (rc) {
        snprintf(err, errlen, "%s: not valid JSON: %s", path, d.err);
        json_free(&d);
        return -1;
    }
    const char *schema = json_str(json_get(d.root, "schema"), "");
    if (strcmp(schema, "libautograph-costs/1")) {
        snprintf(err, errlen, "%s: not a cost table (schema \"%s\", want libautograph-costs/1)",
                 path, schema);
        json_free(&d);
        return -1;
    }
    const json *h = json_get(d.root, "host_ns"), *g = json_get(d.root, "gpu_ns"),
               *e = json_get(d.root, "engine_ns");
    const char *missing = NULL, *section = NULL;
#define SIM_COST_GET(sec, obj, name, k)                                                        \
    if (!missing && value_of(obj, #k, &c->sec.k)) {                                            \
        missing = #k;                                                                          \
        section = name;                                                                        \
    }
#define H(k) SIM_COST_GET(host, h, "host_ns", k)
#define G(k) SIM_COST_GET(gpu, g, "gpu_ns", k)
#define E(k) SIM_COST_GET(engine, e, "engine_ns", k)
    SIM_HOST_COSTS(H)
    SIM_GPU_COSTS(G)
    SIM_ENGINE_COSTS(E)
    /* optional: absent is 0; present, it must be a number like the others */
#define OPT(sec, obj, name, k)                                                                 \
    if (!missing && json_get(obj, #k) && value_of(obj, #k, &c->sec.k)) {                       \
        missing = #k;                                                                          \
        section = name;                                                                        \
    }
#define OH(k) OPT(host, h, "host_ns", k)
#define OG(k) OPT(gpu, g, "gpu_ns", k)
#define OE(k) OPT(engine, e, "engine_ns", k)
    SIM_HOST_COSTS_OPT(OH)
    SIM_GPU_COSTS_OPT(OG)
    SIM_ENGINE_COSTS_OPT(OE)
#undef OH
#undef OG
#undef OE
#undef OPT
#undef H
#undef G
#undef E
#undef SIM_COST_GET
    if (missing) {
        snprintf(err, errlen, "%s: %s.%s is missing or not a number (>= 0 except *_base, *_gap)", path, section,
                 missing);
        json_free(&d);
        return -1;
    }
    snprintf(c->path, sizeof c->path, "%s", path);
    snprintf(c->device, sizeof c->device, "%s", json_str(json_get(d.root, "device"), "?"));
    json_free(&d);
    return 0;
}
