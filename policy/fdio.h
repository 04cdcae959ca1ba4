/* Whole-buffer reads and writes on a file descriptor (EINTR retried), shared by the trace
 * recorder and the simulator. */
#ifndef AG_FDIO_H
#define AG_FDIO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

/* Writes n bytes of p to fd; -1 on an error or a write that makes no progress. */
static inline int ag_write_all(int fd, const void *p, size_t n)
{
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        b += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads exactly n bytes from fd into p; -1 on an error or an early end of file. */
static inline int ag_read_all(int fd, void *p, size_t n)
{
    uint8_t *b = p;
    while (n) {
        ssize_t r = read(fd, b, n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        b += r;
        n -= (size_t)r;
    }
    return 0;
}

#endif
