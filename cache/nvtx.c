/* NVTX ranges around replays (see nvtx.h). */
#include "cache/nvtx.h"

#include <pthread.h>
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

static nvtxDomainHandle_t g_domain;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void create(void)
{
    g_domain = nvtxDomainCreateA("libautograph");
}

static nvtxDomainHandle_t domain(void)
{
    pthread_once(&g_once, create);
    return g_domain;
}

/* Without a tool (none injected: NVTX_INJECTION64_PATH unset) the domain is NULL and nothing
 * would record a name or a range: the name is not even formatted (it was, at every replay of a
 * sequence, since its NULL handle was never kept: ~1,800 instructions per graph launch). */
void *ag_nvtx_name(uint64_t key, uint32_t len, const char *first)
{
    if (!domain())
        return NULL;
    char buf[200];
    snprintf(buf, sizeof buf, "autograph: sequence %016llx, %u launches: %s...",
             (unsigned long long)key, len, first);
    return (void *)nvtxDomainRegisterStringA(domain(), buf);
}

void ag_nvtx_push(void *name)
{
    if (!domain())
        return;
    nvtxEventAttributes_t a = { 0 };
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = (nvtxStringHandle_t)name;
    nvtxDomainRangePushEx(domain(), &a);
}

void ag_nvtx_pop(void)
{
    nvtxDomainHandle_t d = domain();
    if (d)
        nvtxDomainRangePop(d);
}
