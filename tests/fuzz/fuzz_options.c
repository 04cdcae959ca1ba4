/* libFuzzer target: the AUTOGRAPH_* option parser (policy/options.c, ag_opt_parse), and
 * through AUTOGRAPH_FAULT the fault-spec parser (policy/faultspec.c, ag_fault_spec_valid). These
 * parse whatever is in the environment of a program the library is preloaded into.
 *
 * Input: one byte choosing the option (modulo AG_OPT_COUNT), then the value's text (cut at the
 * first NUL, as an environment value would be). Besides the sanitizers' checks, an accepted
 * value must satisfy the table: a boolean is 0 or 1, a number lies within [min, max], an enum
 * is an index of a word equal (ignoring case) to the text, a string comes back as the text;
 * and for FAULT, ag_opt_parse and ag_fault_spec_valid agree. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy/faultspec.h"
#include "policy/options.h"

#define CHECK(cond)                                                                            \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "fuzz_options: %s=\"%s\": check failed: %s\n",                      \
                    ag_opt_table[id].name, text, #cond);                                       \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    ag_opt_id id = (ag_opt_id)(data[0] % AG_OPT_COUNT);
    /* an exact-size copy: a read past the value's NUL is an ASan report */
    size_t n = strnlen((const char *)data + 1, size - 1);
    char *text = malloc(n + 1);
    if (!text)
        return 0;
    memcpy(text, data + 1, n);
    text[n] = 0;

    const ag_opt_desc *d = &ag_opt_table[id];
    long long num = -12345;
    const char *str = NULL;
    int rc = ag_opt_parse(id, text, &num, &str);
    CHECK(rc == 0 || rc == -1);
    CHECK(str == text); /* set whatever the outcome */
    if (rc == 0) {
        switch (d->type) {
        case AG_T_BOOL:
            CHECK(num == 0 || num == 1);
            break;
        case AG_T_INT:
        case AG_T_SIZE:
            CHECK(num >= d->min && num <= d->max);
            break;
        case AG_T_ENUM: {
            long long k = 0;
            while (d->names[k])
                k++;
            CHECK(num >= 0 && num < k);
            CHECK(!strcasecmp(d->names[num], text));
            break;
        }
        case AG_T_STR:
            CHECK(!d->valid || d->valid(text));
            break;
        }
    }
    if (id == AG_OPT_FAULT)
        CHECK((rc == 0) == (ag_fault_spec_valid(text) != 0));
    free(text);
    return 0;
}
