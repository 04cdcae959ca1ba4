/* See upload.h. */
#include "cache/upload.h"

#include "cache/driver.h"

#define UPLOAD_CTX 16
static struct {
    CUcontext ctx;
    CUstream s;
} g_up[UPLOAD_CTX];

CUstream ag_upload_stream(CUcontext ctx)
{
    for (int i = 0; i < UPLOAD_CTX; i++) {
        if (g_up[i].ctx == ctx)
            return g_up[i].s;
        if (!g_up[i].ctx) {
            CUstream s = NULL;
            if (ag_drv.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING))
                return NULL;
            g_up[i].ctx = ctx;
            g_up[i].s = s;
            return s;
        }
    }
    return NULL;
}

void ag_upload_streams_forget(void)
{
    for (int i = 0; i < UPLOAD_CTX && g_up[i].ctx; i++) {
        ag_drv.cuStreamDestroy_v2(g_up[i].s);
        g_up[i].ctx = NULL;
        g_up[i].s = NULL;
    }
}
