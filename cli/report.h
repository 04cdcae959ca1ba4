/* `autograph report [--markdown] FILE.json...`: a readable summary of AUTOGRAPH_STATS files. */
#ifndef AG_REPORT_H
#define AG_REPORT_H

/* argv[0] is "report". Returns the exit status: 0, 1 when a file could not be read (the
 * others are still reported), 2 for a usage error. */
int ag_report_main(int argc, char **argv);

#endif
