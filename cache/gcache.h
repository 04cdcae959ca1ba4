/* Built graphs and their limits: every stream's built templates on one list, least recently
 * replayed last; room reserved within AUTOGRAPH_MAX_GRAPHS and MAX_GRAPH_MEM (evicting from the
 * list's tail); a template's graphs dropped. */
#ifndef AG_GCACHE_H
#define AG_GCACHE_H

#include <stdatomic.h>
#include <stddef.h>

#include "cache/stream.h"

/* Process-wide graph accounting (AUTOGRAPH_MAX_GRAPHS / MAX_GRAPH_MEM). */
extern atomic_long ag_graphs_live, ag_graph_mem_live;

/* Device memory of an instantiated, uploaded graph per kernel node: 2560 bytes measured on an
 * H100 with driver 580 (tests/progs/probe.c: cuMemGetInfo around 8 graphs of 512 nodes). */
#define AG_NODE_MEM_EST 2560

/* The device memory piece p of T (one exec of it) is estimated to take. */
size_t ag_piece_mem(const ag_tmpl *T, uint32_t p);

/* Reserves room for `est` more bytes of T's graphs (and, while T has none, one more graph),
 * evicting other templates' graphs if need be. 0 when reserved. */
int ag_gcache_reserve(ag_stream *st, ag_tmpl *T, size_t est);

/* A reservation of ag_gcache_reserve for T given back (not used, or its exec destroyed): the
 * bytes, and the graph while T has none built. */
void ag_gcache_release(const ag_tmpl *T, size_t est);

/* T was replayed, or its first piece built: it goes to the front of the list. */
void ag_gcache_front(ag_stream *st, ag_tmpl *T);

/* Destroys T's graphs and execs, every piece's (T stays, and may be built again). */
void ag_tmpl_drop_graph(ag_stream *st, ag_tmpl *T);

#endif
