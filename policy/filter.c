/* AUTOGRAPH_ALLOW / AUTOGRAPH_DENY: which kernels may go into graphs, by name glob. DENY wins;
 * an empty ALLOW allows all. Evaluated once per function handle (cache/params.c). */
#include <fnmatch.h>
#include <string.h>

#include "policy/filter.h"
#include "policy/options.h"

static int any_match(const char *list, const char *name)
{
    char pat[256];
    while (*list) {
        size_t n = strcspn(list, ",");
        if (n < sizeof pat) {
            memcpy(pat, list, n);
            pat[n] = 0;
            if (fnmatch(pat, name, 0) == 0)
                return 1;
        }
        list += n + (list[n] == ',');
    }
    return 0;
}

int ag_filter_allows(const char *name)
{
    const char *allow = ag_opt_str(AG_OPT_ALLOW), *deny = ag_opt_str(AG_OPT_DENY);
    if (*deny && any_match(deny, name))
        return 0;
    return !*allow || any_match(allow, name);
}
