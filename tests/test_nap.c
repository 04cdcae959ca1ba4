/* The hold watchdog's next nap (cache/nap.h). */
#include "tests/check.h"
#include "cache/nap.h"

int main(void)
{
    const uint64_t P = 8000000; /* a period of 8 ms, in ns */
    const uint64_t now = 1000000000;
    CHECK_EQ(ag_watchdog_nap(0, now, P), P);                    /* nothing left: a whole period */
    CHECK_EQ(ag_watchdog_nap(now, now, P), P);                  /* begun now: due in a period */
    CHECK_EQ(ag_watchdog_nap(now - P / 2, now, P), P / 2);      /* due in half */
    CHECK_EQ(ag_watchdog_nap(now - P + P / 16, now, P), P / 8); /* due sooner than the floor */
    CHECK_EQ(ag_watchdog_nap(now - P, now, P), P / 8);          /* due exactly now: the floor */
    CHECK_EQ(ag_watchdog_nap(now - 3 * P, now, P), P / 8);      /* overdue: the floor */
    CHECK_EQ(ag_watchdog_nap(now + P, now, P), P);              /* (a clock read late) capped */
    return check_done("test_nap");
}
