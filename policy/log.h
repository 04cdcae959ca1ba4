/* Logging with the "autograph: " prefix, on stderr, never allocating (NCCL_DEBUG-like levels
 * chosen by AUTOGRAPH_LOG). Safe from any thread; each message is one write(2). */
#ifndef AG_LOG_H
#define AG_LOG_H

enum ag_log_level { AG_LOG_ERROR, AG_LOG_WARN, AG_LOG_INFO, AG_LOG_DEBUG, AG_LOG_TRACE };

/* The level in force (AUTOGRAPH_LOG; warn by default). */
int ag_log_level(void);

void ag_log_write(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define ag_log(level, ...)                                                                     \
    do {                                                                                       \
        if ((level) <= ag_log_level())                                                         \
            ag_log_write(level, __VA_ARGS__);                                                  \
    } while (0)

/* Plain output with the prefix, whatever the level (stats, `autograph config`). */
void ag_print(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
