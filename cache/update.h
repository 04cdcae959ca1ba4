/* Bringing a piece's exec up to date with the held launches: node by node, the whole graph, or
 * the piece's second exec when the values take turns (exec variants). Under the stream's lock. */
#ifndef AG_UPDATE_H
#define AG_UPDATE_H

#include <stdint.h>

#include "cache/stream.h"

enum { UPD_NODE, UPD_WHOLE }; /* the paths, as ag_piece's upd_ns[] and upd_n[] count them */

/* Brings piece p's exec up to date with the held launches (held[0] its first node); returns
 * the path taken (UPD_NODE, UPD_WHOLE), -1 when no update was needed (or the second exec held
 * the values), -2 when it failed. */
int ag_update(ag_stream *st, ag_tmpl *T, uint32_t p);

/* What the update of that path and the graph launch after it took, ns (chooses the path). */
void ag_update_record(ag_piece *P, int path, uint64_t ns);

#endif
