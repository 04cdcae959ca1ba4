/* See log.h. */
#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "options.h"

static const char *const level_tag[] = { "error: ", "warning: ", "", "debug: ", "trace: " };

int ag_log_level(void)
{
    return (int)ag_opt(AG_OPT_LOG);
}

static void vprint(int fd, const char *tag, const char *fmt, va_list ap)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "autograph: %s", tag);
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    n += m < 0 ? 0 : (m >= (int)(sizeof buf - (size_t)n - 1) ? (int)(sizeof buf - (size_t)n - 2) : m);
    buf[n++] = '\n';
    for (ssize_t off = 0, w; off < n; off += w)
        if ((w = write(fd, buf + off, (size_t)(n - off))) <= 0)
            break;
}

void ag_log_write(int level, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint(2, level_tag[level < 0 ? 0 : level > AG_LOG_TRACE ? AG_LOG_TRACE : level], fmt, ap);
    va_end(ap);
}

void ag_print(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint(fd, "", fmt, ap);
    va_end(ap);
}
