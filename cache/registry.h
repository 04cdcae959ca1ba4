/* Finding the state of a stream. Launches look it up on every call, so each thread keeps a
 * small cache in front of the shared table; a generation number, bumped whenever a state is
 * retired, invalidates every thread's cache at once. Retired states are never freed while the
 * process runs (a racing thread may still hold one): they are emptied and marked dead. */
#ifndef AG_REGISTRY_H
#define AG_REGISTRY_H

#include "hot.h"
#include "stream.h"

/* The lookup behind the two below. */
ag_stream *ag_stream_lookup(CUstream s, int ptsz, int create);

/* The created stream this thread looked up last: programs mostly launch on one stream in a
 * row, and this answers them in a few instructions, before any other cache. */
typedef struct ag_stream_last {
    CUstream stream;
    unsigned long gen;
    ag_stream *st;
} ag_stream_last;
extern __thread ag_stream_last ag_t_last __attribute__((tls_model("initial-exec")));

static inline ag_stream *ag_stream_last_hit(CUstream s)
{
    if ((uintptr_t)s > (uintptr_t)CU_STREAM_PER_THREAD && ag_t_last.stream == s &&
        ag_t_last.gen == atomic_load_explicit(&ag_hot.registry_gen, memory_order_acquire))
        return ag_t_last.st;
    return NULL;
}

/* The state for stream s as passed to a call through a plain (ptsz 0) or per-thread (ptsz 1)
 * entry point; created on first sight. NULL when the driver does not know the stream (the
 * call then passes through and gets the driver's error), or when out of memory. */
static inline ag_stream *ag_stream_of(CUstream s, int ptsz)
{
    ag_stream *st = ag_stream_last_hit(s);
    return st ? st : ag_stream_lookup(s, ptsz, 1);
}

/* The same, but never creating a state (so never asking the driver about the stream): while
 * the application captures, such questions could invalidate its capture. */
static inline ag_stream *ag_stream_find(CUstream s, int ptsz)
{
    ag_stream *st = ag_stream_last_hit(s);
    return st ? st : ag_stream_lookup(s, ptsz, 0);
}

/* A number for the calling thread, unique for the life of the process. */
uint64_t ag_thread_id(void);

/* Calls fn on every live state, under the registry lock (fn may lock the stream). */
void ag_streams_each(void (*fn)(ag_stream *, void *), void *arg);

/* Retires one state, or all of them (flushing is the caller's job); fn is applied to each,
 * under its lock, before it is marked dead. */
void ag_stream_retire(ag_stream *st, void (*empty)(ag_stream *));
void ag_streams_retire_all(void (*empty)(ag_stream *));

/* Allocates what a state needs for learning and holding (on its first launch). */
int ag_stream_prepare(ag_stream *st);

extern atomic_int ag_nholding;       /* states holding launches, process-wide */
extern pthread_mutex_t ag_registry_mu;

#endif
