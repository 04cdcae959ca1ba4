/* `autograph trace dump|summary|steps FILE`: AUTOGRAPH_TRACE files, readable (docs/TRACE.md). */
#ifndef AG_TRACECMD_H
#define AG_TRACECMD_H

/* argv[0] is "trace". Returns the exit status: 0, 1 when the file cannot be read to its
 * end (what was read is still shown), 2 for a usage error. */
int ag_trace_main(int argc, char **argv);

#endif
