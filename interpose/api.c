/* The library's own calls, for programs that know it may be preloaded (docs/USAGE.md). */
/* Found with dlsym(RTLD_DEFAULT, "autograph_pause") (ctypes.CDLL(None) in Python): a program
 * run without the library finds nothing and goes on as it would. */
#include "cache/engine.h"
#include "real.h"

/* Holds nothing until autograph_resume; what is held goes out first. Nests; process-wide.
 * Returns 0. */
AG_EXPORT int autograph_pause(void)
{
    return ag_pause();
}

/* Ends one autograph_pause. Returns 0, or -1 (nothing changed) when none is in force. */
AG_EXPORT int autograph_resume(void)
{
    return ag_resume();
}
