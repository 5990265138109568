// link: build/analyzer/util/cp_format.o
/*
 * test_result_meaning.c - every CUresult of the list below (the codes real
 * frameworks hit) has a name and a meaning in the CUresult table, and no
 * meaning sends the reader to the documentation.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *cp_result_name(uint64_t code);
const char *cp_result_meaning(uint64_t code);

int main(void)
{
    static const unsigned codes[] = { 1, 2, 3, 4, 34, 35, 46, 100, 101, 200, 209, 215, 217,
                                      218, 219, 222, 300, 400, 500, 700, 702, 709, 712, 719,
                                      800, 801, 802, 803, 804, 999 };
    int fails = 0;
    for (size_t i = 0; i < sizeof codes / sizeof *codes; i++) {
        const char *n = cp_result_name(codes[i]), *m = cp_result_meaning(codes[i]);
        if (!n || !m || strlen(m) < 20 || strstr(m, "documentation")) {
            fprintf(stderr, "FAIL code %u: name %s, meaning %s\n", codes[i], n ? n : "(none)",
                    m ? m : "(none)");
            fails++;
        }
    }
    if (fails)
        return 1;
    printf("%zu codes explained: ok\n", sizeof codes / sizeof *codes);
    return 0;
}
