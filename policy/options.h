/* Every AUTOGRAPH_* option, read once from the environment (see options.c for the table with
 * names, defaults and docs; docs/CONFIG.md is checked against it). An invalid value gives one
 * "autograph: warning:" naming the variable and the default used instead. */
#ifndef AG_OPTIONS_H
#define AG_OPTIONS_H

/* The largest MAX_NODES: what a template, and so a piece, can hold (update.c's bitmap). */
#define AG_MAX_NODES_LIMIT 4096

#include <stddef.h>

typedef enum ag_opt_id {
    AG_OPT_DISABLE,
    AG_OPT_MIN_REPEATS,
    AG_OPT_MAX_NODES,
    AG_OPT_MAX_GRAPHS,
    AG_OPT_MAX_GRAPH_MEM,
    AG_OPT_MAX_HOLD_US,
    AG_OPT_PIECE,
    AG_OPT_LOG,
    AG_OPT_LOG_FILE,
    AG_OPT_STATS,
    AG_OPT_ALLOW,
    AG_OPT_DENY,
    AG_OPT_PROFILE,
    AG_OPT_BENEFIT,
    AG_OPT_COPY_NODES,
    AG_OPT_READBACK_NODES,
    AG_OPT_FAULT,
    AG_OPT_TRACE,
    AG_OPT_TRACE_GPU,
    AG_OPT_WORKER,
    AG_OPT_COUNT
} ag_opt_id;

enum ag_benefit_mode { AG_BENEFIT_MEASURE, AG_BENEFIT_ALWAYS, AG_BENEFIT_NOW };

typedef enum ag_opt_type { AG_T_BOOL, AG_T_INT, AG_T_SIZE, AG_T_ENUM, AG_T_STR } ag_opt_type;

typedef struct ag_opt_desc {
    const char *name;        /* without the AUTOGRAPH_ prefix */
    ag_opt_type type;
    const char *def;         /* default, as a user would write it */
    long long min, max;      /* AG_T_INT / AG_T_SIZE bounds */
    const char *const *names; /* AG_T_ENUM: the accepted words, NULL-terminated */
    int (*valid)(const char *); /* AG_T_STR: extra check, or NULL */
    const char *doc;
} ag_opt_desc;

extern const ag_opt_desc ag_opt_table[AG_OPT_COUNT];

/* Value of a numeric, boolean or enum option (enum: index into names). */
long long ag_opt(ag_opt_id id);
/* Value of a string option ("" when unset). */
const char *ag_opt_str(ag_opt_id id);
/* The raw environment value, or NULL when unset (for `autograph config`). */
const char *ag_opt_raw(ag_opt_id id);
/* Whether the environment value was rejected (the default is in force). */
int ag_opt_invalid(ag_opt_id id);

/* Whether CUDA_LAUNCH_BLOCKING is on (a nonzero number): the driver then returns from every
 * launch only once its kernel ran, which a held launch could not honour (a host that reads
 * mapped memory right after a launch, an error at the very launch that made it), so the engine
 * stays off. Read with the options. */
int ag_opt_launch_blocking(void);

/* Reads the environment again (tests and the CLI); warnings are given again. */
void ag_options_reload(void);

/* Whether loading prints, at info, the options that differ from their defaults (on by
 * default; the CLI turns it off: `autograph config` shows them itself). */
void ag_options_set_announce(int on);

/* Parses one value of one option; returns 0 and sets *num / *str on success. */
int ag_opt_parse(ag_opt_id id, const char *text, long long *num, const char **str);

#endif
