/* See faultspec.h. */
#include "faultspec.h"

#include <stdlib.h>
#include <string.h>

const char *const ag_fault_point_names[AG_FAULT_NPOINTS] = { "add_node", "instantiate", "upload",
                                                            "update",   "set_params",  "launch" };

int ag_fault_spec_parse(const char *s, long every[AG_FAULT_NPOINTS])
{
    while (*s) {
        size_t n = strcspn(s, ":,");
        int p;
        for (p = 0; p < AG_FAULT_NPOINTS && (strlen(ag_fault_point_names[p]) != n ||
                                             strncmp(ag_fault_point_names[p], s, n));
             p++)
            ;
        if (p == AG_FAULT_NPOINTS)
            return -1;
        s += n;
        long k = 1;
        if (*s == ':') {
            char *end;
            k = strtol(s + 1, &end, 10);
            if (end == s + 1 || k < 1)
                return -1;
            s = end;
        }
        if (every)
            every[p] = k;
        if (*s == ',' && s[1])
            s++;
        else if (*s)
            return -1;
    }
    return 0;
}

int ag_fault_spec_valid(const char *s)
{
    return ag_fault_spec_parse(s, NULL) == 0;
}
