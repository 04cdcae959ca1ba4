/* Reading AUTOGRAPH_TRACE files (cache/tracefmt.h): open, next record, close. The one parser of
 * the format: `autograph trace` (tracecmd.c) and the replay model (simtrace.c) read through it. */
/* Every record handed out has been checked: its size is at least its type's struct (a known
 * type), a multiple of 8, and the strings and arrays its fields announce lie inside it (NAME,
 * FUNC). Any input -- a truncated file, a foreign one, another version -- gives one error
 * message, never a crash. A file whose name ends in .gz is read through `gzip -dc` (run without
 * a shell; where the input ends early because gzip failed, the message says so). */
#ifndef AG_TRACEREAD_H
#define AG_TRACEREAD_H

#include <stddef.h>
#include <stdint.h>

#include "cache/tracefmt.h"

typedef struct ag_trr ag_trr;

/* Opens path and checks its header; NULL when it cannot (err holds why). */
ag_trr *ag_trr_open(const char *path, char *err, size_t errlen);
/* The file's header. */
const ag_tr_file *ag_trr_header(const ag_trr *r);
/* The next record: 1 and *rec (valid until the next call), 0 at the end of a complete
 * trace (after its END record), -1 on an error (ag_trr_error says what: a record cut short,
 * a corrupt one, a trace without its END record). */
int ag_trr_next(ag_trr *r, const ag_tr_hdr **rec);
const char *ag_trr_error(const ag_trr *r);
/* Offset of the last record returned, in the (uncompressed) file. */
uint64_t ag_trr_offset(const ag_trr *r);
/* Closes; returns 0, or -1 when reading the file failed after all (gzip's exit status). */
int ag_trr_close(ag_trr *r);

/* The string of a NAME record and the name and parameters of a FUNC record (both checked by
 * ag_trr_next). */
const char *ag_trr_name_str(const ag_tr_name *n);
const char *ag_trr_func_name(const ag_tr_func *f);
const uint32_t *ag_trr_func_params(const ag_tr_func *f);
/* The name of a COPY record's op (enum ag_copy_entry, cache/copy.h: "memsetD8" ...), "?" for
 * one this reader does not know. */
const char *ag_trr_copy_name(unsigned op);

#endif
