/* A minimal test harness: CHECK records a failure with its location and goes on; a test
 * program exits non-zero when anything failed. */
#ifndef AG_CHECK_H
#define AG_CHECK_H
#include <stdio.h>
#include <stdlib.h>

static int check_failures, check_count;

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        check_count++;                                                                         \
        if (!(cond)) {                                                                         \
            check_failures++;                                                                  \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);           \
        }                                                                                      \
    } while (0)

#define CHECK_EQ(a, b)                                                                         \
    do {                                                                                       \
        long long check_a_ = (long long)(a), check_b_ = (long long)(b);                        \
        check_count++;                                                                         \
        if (check_a_ != check_b_) {                                                            \
            check_failures++;                                                                  \
            fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %lld, %s == %lld\n", __FILE__,      \
                    __LINE__, #a, check_a_, #b, check_b_);                                     \
        }                                                                                      \
    } while (0)

static inline int check_done(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, check_count, check_failures);
    return check_failures ? 1 : 0;
}
#endif
