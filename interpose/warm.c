/* Our own image's pages mapped in at cuInit, so that no launch takes their page faults. */
/* A launch path that runs for the first time touches tens of pages of our code and data; each
 * first touch is a page fault (microseconds each on a virtual machine), and the program's first
 * launches -- often timed by the program -- would pay for them. cuInit pays instead. */
#include "real.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ /* Linux 5.14; older headers */
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

struct range {
    uintptr_t lo, hi;
};

/* Maps [lo, hi) in, writable where `write`: the kernel does it in one call where it can
 * (5.14 and later); else one access per page -- a read, or for writable pages an atomic
 * add of 0, which leaves the byte as it is even if another thread writes it meanwhile. */
static void populate(uintptr_t lo, uintptr_t hi, int write, uintptr_t page)
{
    lo &= ~(page - 1);
    hi = (hi + page - 1) & ~(page - 1);
    if (lo >= hi || !madvise((void *)lo, hi - lo, write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ))
        return;
    for (uintptr_t p = lo; p < hi; p += page) {
        if (write)
            __atomic_fetch_add((unsigned char *)p, 0, __ATOMIC_RELAXED);
        else
            (void)*(volatile const unsigned char *)p;
    }
}

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    const uintptr_t self = (uintptr_t)arg;
    const ElfW(Phdr) *ph = info->dlpi_phdr;
    int mine = 0;
    struct range relro = { 0, 0 };
    for (int i = 0; i < info->dlpi_phnum; i++) {
        uintptr_t lo = info->dlpi_addr + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
        if (ph[i].p_type == PT_LOAD && self >= lo && self < hi)
            mine = 1;
        if (ph[i].p_type == PT_GNU_RELRO)
            relro = (struct range){ lo, hi };
    }
    if (!mine)
        return 0;
    const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
        if (!(ph[i].p_flags & PF_W)) {
            populate(lo, hi, 0, page);
            continue;
        }
        /* the relocated part at the start of the writable segment is read-only by now */
        uintptr_t ro_end = relro.lo <= lo && relro.hi > lo ? ((relro.hi + page - 1) & ~(page - 1)) : lo;
        if (ro_end > lo)
            populate(lo, ro_end < hi ? ro_end : hi, 0, page);
        if (ro_end < hi)
            populate(ro_end, hi, 1, page);
    }
    return 1;
}

void ag_image_warm(void)
{
    dl_iterate_phdr(each_object, (void *)(uintptr_t)&ag_image_warm);
}
