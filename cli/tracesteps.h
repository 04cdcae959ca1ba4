/* `autograph trace steps FILE`: the segments a trace's streams run between ordering points,
 * 16 or more launches and device-side copies long, grouped as the engine groups variants
 * (cache/tmpl.c, join_variants: the same first launch, lengths within an eighth), each group
 * with its variants' counts and the positions where each differs from the most frequent one
 * (a decode step's kernels that change with the length or alignment of a growing tensor). */
#ifndef AG_TRACESTEPS_H
#define AG_TRACESTEPS_H

#include "traceread.h"

/* Reads r to its end and prints the groups. Returns ag_trr_next's last status (0 at the end
 * of a complete trace, -1 on an error: what was read is still shown). */
int ag_trace_steps(ag_trr *r);

#endif
