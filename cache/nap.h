/* The hold watchdog's next nap: pure arithmetic, apart so a unit test can reach it. */
#ifndef AG_NAP_H
#define AG_NAP_H

#include <stdint.h>

/* ns to sleep before the next tick: until the oldest hold left (its start, 0 when none is left)
 * would outlive max_age, at least an eighth of max_age, at most all of it. A hold left that is
 * already due (a tick may leave one exactly max_age old) gets the least nap, not a whole one. */
static inline uint64_t ag_watchdog_nap(uint64_t oldest, uint64_t now, uint64_t max_age)
{
    uint64_t nap = !oldest ? max_age : oldest + max_age > now ? oldest + max_age - now : 0;
    if (nap < max_age / 8)
        nap = max_age / 8;
    return nap > max_age ? max_age : nap;
}
#endif
