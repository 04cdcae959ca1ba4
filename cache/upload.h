/* The worker's own upload streams: one non-blocking stream per context (upload.c). */
#ifndef AG_UPLOAD_H
#define AG_UPLOAD_H

#include <cuda.h>

/* ctx's upload stream, made at its first use; NULL when none can be (then a graph is uploaded
 * by its first replay). Called by the worker only (never two threads at once). */
CUstream ag_upload_stream(CUcontext ctx);
/* Destroys them all (made again when needed): before a module unload or a context's
 * teardown, with the worker idle. */
void ag_upload_streams_forget(void);

#endif
