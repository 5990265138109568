// link: build/analyzer/model/cp_run.o build/analyzer/model/cp_model_meta.o build/analyzer/model/cp_series.o build/analyzer/model/cp_model.o build/analyzer/util/cp_zpool.o build/analyzer/model/cp_live.o build/analyzer/model/cp_model_end.o build/analyzer/model/cp_model_host.o build/analyzer/util/cp_format.o build/analyzer/util/cp_map.o build/analyzer/model/cp_fw.o build/analyzer/symbols/cp_sym.o build/analyzer/symbols/cp_debuginfo.o build/analyzer/symbols/cp_libs.o build/analyzer/decode/cp_names.o build/analyzer/decode/cp_decode.o build/analyzer/util/cp_file.o build/analyzer/decode/cp_decode_fields.o
// link: build/analyzer/decode/cp_decode_note.o build/analyzer/decode/cp_decode_ring.o build/analyzer/decode/cp_decode_defer.o build/analyzer/decode/cp_decode_window.o build/analyzer/model/cp_backward.o
/*
 * test_run_ranks.c - cp_run_ranks_str(): ranks sorted and joined into runs
 * ("0-3, 5, 7, 8"), also at the ends of long's range, where a run's test
 * once overflowed (v + 1 for LONG_MAX: the report fuzzer, under UBSan).
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "cp_run.h"

static void expect(long *v, size_t n, const char *want)
{
    char buf[256];
    const char *got = cp_run_ranks_str(v, n, buf, sizeof buf);
    if (strcmp(got, want) != 0)
        printf("  got \"%s\", want \"%s\"\n", got, want);
    CHECK(strcmp(got, want) == 0);
}

int main(void)
{
    long a[] = { 3, 0, 8, 1, 2, 5, 7 };
    expect(a, 7, "0-3, 5, 7, 8");
    long b[] = { LONG_MAX, LONG_MAX - 1, LONG_MAX };
    char w[96];
    snprintf(w, sizeof w, "%ld, %ld", LONG_MAX - 1, LONG_MAX);
    expect(b, 3, w);
    long c[] = { LONG_MIN, LONG_MAX, 0 };
    snprintf(w, sizeof w, "%ld, 0, %ld", LONG_MIN, LONG_MAX);
    expect(c, 3, w);
    long d[] = { 4 };
    expect(d, 1, "4");
    return g_fail ? 1 : 0;
}
