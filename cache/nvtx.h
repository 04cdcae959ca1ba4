/* NVTX ranges around replays, so Nsight Systems shows what libautograph graphed. */
/* NVTX (the header-only nvtx3 of the CUDA toolkit) does nothing unless a tool injects itself
 * (NVTX_INJECTION64_PATH): then each call is one indirect call to a no-op. */
#ifndef AG_NVTX_H
#define AG_NVTX_H
#include <stdint.h>

/* A registered name for a sequence ("autograph: sequence <key>, <len> launches: <first>"). */
void *ag_nvtx_name(uint64_t key, uint32_t len, const char *first_kernel);
void ag_nvtx_push(void *name);
void ag_nvtx_pop(void);
#endif
