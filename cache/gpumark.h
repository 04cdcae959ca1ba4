/* Occurrence marks on the GPU: timing events at the starts of a sequence's occurrences during
 * its cost/benefit probe and trial, read back (never waited for) once the GPU has passed them.
 * At a marked start the engine also asks (cuEventQuery) whether the GPU has reached the
 * previous occurrence's mark yet: whether the GPU is behind (policy/benefit.h). */
#ifndef AG_GPUMARK_H
#define AG_GPUMARK_H

#include <cuda.h>
#include <stdint.h>

struct ag_stream;
struct ag_tmpl;

#define AG_MARKS 32 /* marks a stream keeps in flight: a trial's worth, with the GPU behind */

typedef struct ag_mark {
    CUevent ev;               /* created once per slot, reused */
    struct ag_tmpl *T;
    uint32_t trial_id, seq;   /* seq: the occurrence's number in T (consecutive ones pair) */
    uint8_t state;            /* enum in gpumark.c */
    uint8_t graph, build;
} ag_mark;

typedef struct ag_marks {
    ag_mark m[AG_MARKS];
    uint32_t head, n;         /* the ring: oldest first */
    int32_t open;             /* the mark of the occurrence under way, or -1 */
    uint8_t off;              /* events failed here once: no more marks on this stream */
} ag_marks;

/* Marks the start of an occurrence of T on st (before any of its work is issued), when T's
 * probe or trial wants GPU samples; first looks whether the GPU has reached the previous
 * occurrence's mark (when the policy wants to know: ag_benefit_want_look). Also reads back
 * what the GPU has passed meanwhile. */
void ag_mark_begin(struct ag_stream *st, struct ag_tmpl *T, int graph);
/* The occurrence under way was one of T (`build`: it built the graph): its mark counts. Any
 * other ending (T is NULL or another template: a broken-off hold, another sequence) voids it
 * and breaks T's chain of consecutive occurrences. */
void ag_mark_end(struct ag_stream *st, struct ag_tmpl *T, int build);
/* T's probe found the GPU the bottleneck (counted, logged). */
void ag_tmpl_noted_gpu_bound(const struct ag_tmpl *T);
/* The stream's templates are being freed: forget every mark (and destroy the events unless
 * the process is exiting). */
void ag_marks_free(struct ag_stream *st);

#endif
