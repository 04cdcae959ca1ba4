#include <dlfcn.h>
#include <stdio.h>
int call_next(void);
int main(void)
{
    int r = call_next();
    int (*first)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "probe");
    int f = first ? first() : -1;
    printf("next: %d, default: %d\n", r, f);
    return r == 2 && f == 1 ? 0 : 1;
}
