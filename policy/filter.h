/* AUTOGRAPH_ALLOW / AUTOGRAPH_DENY: which kernels may go into graphs, by name. */
#ifndef AG_FILTER_H
#define AG_FILTER_H

/* 1 when a kernel of this name may go into graphs: DENY wins; an empty ALLOW allows all. */
int ag_filter_allows(const char *kernel_name);

#endif
