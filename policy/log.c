/* See log.h. */
#include "log.h"

#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

const char *const ag_log_level_names[] = { "error", "warn", "info", "debug", "trace", NULL };
static const char *const level_tag[] = { "error: ", "warning: ", "", "debug: ", "trace: " };

/* -1: not configured yet (see ag_log_level). */
static atomic_int g_level = -1;
static _Atomic(const char *) g_pattern;   /* NULL or "": stderr */
static atomic_int g_configured;

/* The open log file: valid for (g_fd_pattern, g_fd_pid); reopened after a fork (%p). */
static atomic_int g_fd = -1;
static _Atomic(const char *) g_fd_pattern;
static atomic_int g_fd_pid;
/* The pid holding the open lock, 0 when free. A lock held by another pid was inherited
 * through fork from a thread that no longer exists: it is taken over. */
static atomic_int g_open_lock;

static int early_level(void)
{
    const char *s = getenv("AUTOGRAPH_LOG");
    if (s)
        for (int i = 0; ag_log_level_names[i]; i++)
            if (!strcasecmp(s, ag_log_level_names[i]))
                return i;
    return AG_LOG_WARN;
}

int ag_log_level(void)
{
    int l = atomic_load_explicit(&g_level, memory_order_relaxed);
    if (__builtin_expect(l >= 0, 1))
        return l;
    l = early_level();
    int unset = -1;
    atomic_compare_exchange_strong(&g_level, &unset, l); /* options may have set it meanwhile */
    return atomic_load_explicit(&g_level, memory_order_relaxed);
}

void ag_log_configure(int level, const char *file_pattern)
{
    atomic_store(&g_pattern, file_pattern && *file_pattern ? file_pattern : NULL);
    atomic_store(&g_configured, 1);
    atomic_store_explicit(&g_level, level < 0 ? AG_LOG_WARN : level > AG_LOG_TRACE ? AG_LOG_TRACE
                                                                                     : level,
                          memory_order_release);
}

int ag_path_expand(const char *p, char *out, size_t n)
{
    size_t k = 0;
    char tmp[256];
    for (; *p; p++) {
        const char *add = NULL;
        char one[2] = { *p, 0 };
        if (*p == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
            add = tmp;
            p++;
        } else if (*p == '%' && p[1] == 'h') {
            if (gethostname(tmp, sizeof tmp - 1))
                strcpy(tmp, "unknown");
            tmp[sizeof tmp - 1] = 0;
            add = tmp;
            p++;
        } else if (*p == '%' && p[1] == '%') {
            add = "%";
            p++;
        } else {
            add = one;
        }
        size_t m = strlen(add);
        if (k + m >= n)
            return -1;
        memcpy(out + k, add, m);
        k += m;
    }
    if (k >= n)
        return -1;
    out[k] = 0;
    return 0;
}

static void write_all(int fd, const char *buf, size_t n)
{
    for (size_t off = 0; off < n;) {
        ssize_t w = write(fd, buf + off, n - off);
        if (w <= 0)
            break;
        off += (size_t)w;
    }
}

static void open_lock(int pid)
{
    for (;;) {
        int cur = 0;
        if (atomic_compare_exchange_weak(&g_open_lock, &cur, pid))
            return;
        if (cur != 0 && cur != pid && atomic_compare_exchange_weak(&g_open_lock, &cur, pid))
            return; /* a lock left behind by the parent of a fork */
        sched_yield();
    }
}

/* Where a line goes: the log file when one is set (opened on first use, and again in a child
 * after fork), else stderr. */
static int out_fd(void)
{
    const char *pat = atomic_load(&g_pattern);
    if (!atomic_load(&g_configured) && !pat) {
        /* options have not parsed yet: honour the environment already */
        const char *e = getenv("AUTOGRAPH_LOG_FILE");
        pat = e && *e ? e : NULL;
    }
    if (!pat)
        return 2;
    int pid = (int)getpid();
    int fd = atomic_load(&g_fd);
    if (fd >= 0 && atomic_load(&g_fd_pid) == pid && atomic_load(&g_fd_pattern) == pat)
        return fd;
    open_lock(pid);
    fd = atomic_load(&g_fd);
    if (!(fd >= 0 && atomic_load(&g_fd_pid) == pid && atomic_load(&g_fd_pattern) == pat)) {
        char path[4096];
        int nfd = -1;
        if (ag_path_expand(pat, path, sizeof path) == 0)
            nfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (nfd < 0) {
            char msg[512];
            int m = snprintf(msg, sizeof msg,
                             "autograph[%d]: warning: cannot open AUTOGRAPH_LOG_FILE %s; "
                             "logging on stderr\n", pid, pat);
            write_all(2, msg, m < 0 ? 0 : m >= (int)sizeof msg ? sizeof msg - 1 : (size_t)m);
            nfd = 2;
        }
        if (fd > 2)
            close(fd); /* the previous pattern's file, or the parent's before a fork */
        atomic_store(&g_fd_pattern, pat);
        atomic_store(&g_fd_pid, pid);
        atomic_store(&g_fd, nfd);
        fd = nfd;
    }
    atomic_store(&g_open_lock, 0);
    return fd;
}

static void vprint(int fd, const char *tag, const char *fmt, va_list ap, const char *suffix)
{
    char buf[1024];
    long pid = (long)getpid(), tid = (long)syscall(SYS_gettid);
    int n = tid == pid ? snprintf(buf, sizeof buf, "autograph[%ld]: %s", pid, tag)
                       : snprintf(buf, sizeof buf, "autograph[%ld:%ld]: %s", pid, tid, tag);
    size_t room = sizeof buf - (size_t)n - 1; /* one byte kept for the newline */
    int m = vsnprintf(buf + n, room, fmt, ap);
    n += m < 0 ? 0 : m >= (int)room ? (int)room - 1 : m;
    if (suffix) {
        room = sizeof buf - (size_t)n - 1;
        m = snprintf(buf + n, room, "%s", suffix);
        n += m < 0 ? 0 : m >= (int)room ? (int)room - 1 : m;
    }
    buf[n++] = '\n';
    write_all(fd == 2 ? out_fd() : fd, buf, (size_t)n);
}

/* The cap: one slot per format string (its address: one call site, or identical literals
 * merged), claimed lock-free. With every slot taken, further formats go uncapped. */
#define CAP_SLOTS 64
static struct {
    _Atomic(const char *) fmt;
    atomic_ulong n;
} g_cap[CAP_SLOTS];

static atomic_ulong *cap_counter(const char *fmt)
{
    size_t h = ((size_t)(uintptr_t)fmt >> 3) * 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < CAP_SLOTS; i++) {
        size_t s = (h + i) % CAP_SLOTS;
        const char *cur = atomic_load(&g_cap[s].fmt);
        if (cur == fmt)
            return &g_cap[s].n;
        if (!cur && atomic_compare_exchange_strong(&g_cap[s].fmt, &cur, fmt))
            return &g_cap[s].n;
        if (cur == fmt)
            return &g_cap[s].n;
    }
    return NULL;
}

void ag_log_write(int level, const char *fmt, ...)
{
    const char *suffix = NULL;
    if (level <= AG_LOG_WARN) {
        atomic_ulong *c = cap_counter(fmt);
        unsigned long k = c ? atomic_fetch_add(c, 1) + 1 : 0;
        if (k > AG_LOG_CAP)
            return;
        if (k == AG_LOG_CAP)
            suffix = " (further warnings of this kind suppressed)";
    }
    va_list ap;
    va_start(ap, fmt);
    vprint(2, level_tag[level < 0 ? 0 : level > AG_LOG_TRACE ? AG_LOG_TRACE : level], fmt, ap,
           suffix);
    va_end(ap);
}

void ag_print(int fd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vprint(fd, "", fmt, ap, NULL);
    va_end(ap);
}

uint64_t ag_log_suppressed(void)
{
    uint64_t sum = 0;
    for (int i = 0; i < CAP_SLOTS; i++) {
        unsigned long n = atomic_load(&g_cap[i].n);
        if (n > AG_LOG_CAP)
            sum += n - AG_LOG_CAP;
    }
    return sum;
}

void ag_log_print_suppressed(void)
{
    for (int i = 0; i < CAP_SLOTS; i++) {
        const char *fmt = atomic_load(&g_cap[i].fmt);
        unsigned long n = atomic_load(&g_cap[i].n);
        if (fmt && n > AG_LOG_CAP)
            ag_print(2, "warning: %lu more warnings like \"%s\" were suppressed",
                     n - AG_LOG_CAP, fmt);
    }
}

__attribute__((destructor)) static void at_unload(void)
{
    ag_log_print_suppressed();
}

void ag_log_put(char *buf, size_t n, size_t *at, const char *fmt, ...)
{
    if (*at >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf + *at, n - *at, fmt, ap);
    va_end(ap);
    *at = w < 0 || (size_t)w >= n - *at ? n : *at + (size_t)w;
}
