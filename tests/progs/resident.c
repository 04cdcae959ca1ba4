/* After cuInit, every page of libautograph's image must be mapped in this process (run under
 * the preloaded library, against the fake libcuda): the first launches then take no page
 * faults of ours. Prints how many pages are mapped; exits 0 when all are, 1 when some are
 * not, 77 when it cannot tell (no /proc/self/pagemap, or the library is not preloaded). */
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static uintptr_t g_base;
static long g_pages, g_mapped;
static int g_fd = -1;

/* Bit 63 of a page's pagemap entry: present in this process's page tables. */
static int present(uintptr_t addr, long page)
{
    uint64_t e = 0;
    if (pread(g_fd, &e, sizeof e, (off_t)(addr / (uintptr_t)page * sizeof e)) != sizeof e)
        return -1;
    return (int)(e >> 63);
}

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    if (info->dlpi_addr != g_base)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        for (uintptr_t p = lo; p < hi; p += (uintptr_t)page) {
            int r = present(p, page);
            if (r < 0)
                return -1;
            g_pages++;
            g_mapped += r;
            if (!r)
                printf("not mapped: segment %d (flags %x), offset %#lx\n", i, (unsigned)ph->p_flags,
                       (unsigned long)(p - info->dlpi_addr));
        }
    }
    return 1;
}

int main(void)
{
    void *init = dlsym(RTLD_DEFAULT, "cuInit");
    Dl_info di;
    if (!init || !dladdr(init, &di) || !di.dli_fname || !strstr(di.dli_fname, "libautograph")) {
        printf("libautograph is not preloaded\n");
        return 77;
    }
    g_base = (uintptr_t)di.dli_fbase;
    if ((g_fd = open("/proc/self/pagemap", O_RDONLY)) < 0) {
        printf("no /proc/self/pagemap\n");
        return 77;
    }
    CUresult r = cuInit(0); /* libautograph's, preloaded */
    if (r != CUDA_SUCCESS) {
        printf("cuInit: %d\n", (int)r);
        return 1;
    }
    if (dl_iterate_phdr(each_object, NULL) != 1) {
        printf("cannot read the page map\n");
        return 77;
    }
    printf("mapped after cuInit: %ld of %ld pages\n", g_mapped, g_pages);
    return g_mapped == g_pages ? 0 : 1;
}
