/* The watch's process-wide filters (see watch.h). */
#include "cache/watch.h"

ag_watch_t ag_watch;
