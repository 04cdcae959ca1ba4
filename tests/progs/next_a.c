/* RTLD_NEXT must stay relative to the object that asks (here: the one after this library). */
#include <dlfcn.h>
int probe(void) { return 1; }
int call_next(void)
{
    int (*next)(void) = (int (*)(void))dlsym(RTLD_NEXT, "probe");
    return next ? next() : -1;
}
