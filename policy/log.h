/* Logging (NCCL_DEBUG-like levels chosen by AUTOGRAPH_LOG) on stderr or into
 * AUTOGRAPH_LOG_FILE, never allocating. Every line starts "autograph[PID]: " (or
 * "autograph[PID:TID]: " from a thread other than the main one), so that the lines of many
 * processes can be told apart; each line is one write(2). Repeated warnings and errors are
 * capped per message format (AG_LOG_CAP lines each); the count of the rest is printed at exit.
 *
 * log owns its settings: options.c sets them once it has parsed the environment; nothing
 * here calls into options. */
#ifndef AG_LOG_H
#define AG_LOG_H

#include <stddef.h>
#include <stdint.h>

enum ag_log_level { AG_LOG_ERROR, AG_LOG_WARN, AG_LOG_INFO, AG_LOG_DEBUG, AG_LOG_TRACE };

/* "error" ... "trace", NULL-terminated (AUTOGRAPH_LOG's words). */
extern const char *const ag_log_level_names[];

/* Lines of one warning (or error) format printed before the rest are only counted. */
#define AG_LOG_CAP 10

/* The level in force. Before options have set it, AUTOGRAPH_LOG read directly (warn when
 * unset or not a level), so that early messages are not lost. */
int ag_log_level(void);

/* Options call this after parsing: the level and the log file pattern ("" or NULL: stderr).
 * The pattern must stay valid (an environment string). */
void ag_log_configure(int level, const char *file_pattern);

void ag_log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Appends to buf[*at..n) what printf would, for a line built in parts; cut at the end (then
 * *at == n and later parts are dropped). */
void ag_log_put(char *buf, size_t n, size_t *at, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#define ag_log(level, ...)                                                                     \
    do {                                                                                       \
        if ((level) <= ag_log_level())                                                         \
            ag_log_write(level, __VA_ARGS__);                                                  \
    } while (0)

/* Plain output with the prefix, whatever the level (the stats summary). fd 2 means "where
 * the log goes" (AUTOGRAPH_LOG_FILE when set). */
void ag_print(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Expands %p (pid), %h (host name) and %% in a path pattern (AUTOGRAPH_LOG_FILE,
 * AUTOGRAPH_STATS); other % sequences stay as they are. Returns 0, or -1 when out (n bytes)
 * is too small. */
int ag_path_expand(const char *pattern, char *out, size_t n);

/* Warnings and errors suppressed so far by the cap. */
uint64_t ag_log_suppressed(void);

/* Prints the suppressed counts per format now (also done at exit). For tests. */
void ag_log_print_suppressed(void);

#endif
