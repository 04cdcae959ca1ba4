/* Debug-build checks: AG_ASSERT(cond) aborts with its place when cond is false (-DAG_DEBUG). */
/* In the normal build every check compiles to nothing, so a condition must have no side
 * effects. `make test` runs the unit and harness tests on a debug build too (test-debug). */
#ifndef AG_DEBUG_H
#define AG_DEBUG_H

#ifdef AG_DEBUG
#include <stdio.h>
#include <stdlib.h>

static inline __attribute__((noreturn, cold)) void ag_assert_fail(const char *cond,
                                                                  const char *file, int line)
{
    fprintf(stderr, "libautograph: %s:%d: assertion failed: %s\n", file, line, cond);
    abort();
}
#define AG_ASSERT(cond) ((cond) ? (void)0 : ag_assert_fail(#cond, __FILE__, __LINE__))
#else
#define AG_ASSERT(cond) ((void)0)
#endif

#endif
