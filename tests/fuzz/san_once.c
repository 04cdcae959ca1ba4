/* Sanitizer builds only (tests/sanitize.mk): a pthread_once for interpose/real.c that the
 * ThreadSanitizer runtime does not intercept.
 *
 * Why: the sanitizer runtimes resolve their interceptors with dlsym(RTLD_NEXT, ...) while they
 * initialise, and libautograph exports dlsym, so those lookups run interpose/dlsym.c and
 * ag_real_dlsym() (interpose/real.c) before the runtime is ready. Both files are therefore
 * built without instrumentation, and real.c is compiled with -Dpthread_once=ag_san_once: TSan's
 * pthread_once interceptor crashes when called before TSan has initialised. This file is built
 * without instrumentation as well. Same contract as pthread_once; `fn` runs exactly once and
 * every caller returns after it has finished. */
#include <pthread.h>
#include <sched.h>

enum { SAN_ONCE_NEW, SAN_ONCE_RUNNING, SAN_ONCE_DONE };

__attribute__((visibility("hidden"))) int ag_san_once(pthread_once_t *once, void (*fn)(void))
{
    int *state = (int *)once; /* glibc: pthread_once_t is an int, PTHREAD_ONCE_INIT is 0 */
    int expected = SAN_ONCE_NEW;
    if (__atomic_load_n(state, __ATOMIC_ACQUIRE) == SAN_ONCE_DONE)
        return 0;
    if (__atomic_compare_exchange_n(state, &expected, SAN_ONCE_RUNNING, 0, __ATOMIC_ACQUIRE,
                                    __ATOMIC_ACQUIRE)) {
        fn();
        __atomic_store_n(state, SAN_ONCE_DONE, __ATOMIC_RELEASE);
        return 0;
    }
    while (__atomic_load_n(state, __ATOMIC_ACQUIRE) != SAN_ONCE_DONE)
        sched_yield();
    return 0;
}
