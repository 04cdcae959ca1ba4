/* The AUTOGRAPH_FAULT spec parser ("point[:K],..."), apart from the runtime injection
 * (cache/fault.c), so that the option table and the CLI check a spec without the engine. */
#ifndef AG_FAULTSPEC_H
#define AG_FAULTSPEC_H

/* The points, in the order of enum ag_fault_point (cache/graph.h asserts the count). */
#define AG_FAULT_NPOINTS 6
extern const char *const ag_fault_point_names[AG_FAULT_NPOINTS];

/* Parses a spec: every[p] = K for each point named (untouched otherwise). With every NULL it
 * only checks. Returns 0, or -1 for a malformed spec. */
int ag_fault_spec_parse(const char *s, long every[AG_FAULT_NPOINTS]);

/* 1 when the spec parses (an option validator). */
int ag_fault_spec_valid(const char *s);

#endif
