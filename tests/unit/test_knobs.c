// link: build/analyzer/checks/cp_knobs.o build/analyzer/checks/cp_advice.o
/*
 * test_knobs.c - every framework setting the analyzer can suggest is one
 * the framework accepts (analyzer/checks/cp_knobs.c): the settings named in
 * the advice table's text, the ones the OOM verdict names verbatim, and
 * max_split_size_mb and XLA's memory fraction for every request size the
 * verdicts may meet.  The rules
 * themselves are held against a table of values PyTorch and JAX accept and
 * refuse.
 */
#define CP_UNIT_COUNT
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cp_unit.h"
#include "cp_advice.h"
#include "cp_knobs.h"

void cp_jb_ks(cp_jb *b, const char *key, const char *v)
{
    (void)b;
    (void)key;
    (void)v;
}

static const struct {
    const char *setting;
    int valid;
} cp_rules_cases[] = {
    { "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:3", 0 },  /* "too small, must be > 20" */
    { "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:20", 0 }, /* older releases: > 20 */
    { "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:21", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:N", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0.6", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:1", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=garbage_collection_threshold:0", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:4", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=roundup_power2_divisions:3", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=backend:native,max_split_size_mb:64", 1 },
    { "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,max_split_size_mb:64", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync,expandable_segments:True", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=backend:malloc", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64,max_split_size_mb:64", 0 },
    { "PYTORCH_CUDA_ALLOC_CONF=split_size:64", 0 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=.5", 1 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=1", 1 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=0", 0 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=1.5", 0 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=.90", 1 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=-.5", 0 },
    { "XLA_PYTHON_CLIENT_MEM_FRACTION=0.75+", 0 },   /* newest XLA only: not suggested */
    { "XLA_CLIENT_MEM_FRACTION=.90", 1 },
    { "XLA_CLIENT_MEM_FRACTION=2", 0 },
    { "XLA_PYTHON_CLIENT_PREALLOCATE=true", 1 },
    { "XLA_PYTHON_CLIENT_PREALLOCATE=false", 1 },
    { "XLA_PYTHON_CLIENT_PREALLOCATE=no", 0 },
    { "XLA_PYTHON_CLIENT_ALLOCATOR=platform", 1 },
    { "XLA_PYTHON_CLIENT_ALLOCATOR=bfc", 1 },
    { "XLA_PYTHON_CLIENT_ALLOCATOR=arena", 0 },
};

static void check_valid(const char *s)
{
    char why[160] = "";
    int rc = cp_knob_check(s, why, sizeof why);
    if (rc != 0)
        printf("suggested but refused: %s (%s)\n", s, why);
    CHECK(rc == 0);
}

int main(void)
{
    char why[160];
    for (size_t i = 0; i < sizeof cp_rules_cases / sizeof cp_rules_cases[0]; i++) {
        int rc = cp_knob_check(cp_rules_cases[i].setting, why, sizeof why);
        if ((rc == 0) != cp_rules_cases[i].valid)
            printf("rule wrong for %s: %d (%s)\n", cp_rules_cases[i].setting, rc, why);
        CHECK((rc == 0) == cp_rules_cases[i].valid);
    }
    CHECK(cp_knob_check("CUDA_VISIBLE_DEVICES=0", why, sizeof why) == -ENOENT);

    /* Every VAR=VALUE in every fix of the advice table. */
    int scanned = 0;
    char s[256];
    for (int t = 0; t < CP_ADV_N; t++)
        for (int k = 0; k < CP_FWK_N; k++) {
            size_t pos = 0;
            while (cp_knob_scan(cp_advice(k, t), &pos, s, sizeof s)) {
                check_valid(s);
                scanned++;
            }
        }
    CHECK(scanned >= 3);
    size_t n;
    const char *const *fixed = cp_knob_fixed(&n);
    for (size_t i = 0; i < n; i++)
        check_valid(fixed[i]);

    /* max_split_size_mb for every OOM request from 1 byte to 64 GiB: a
     * value PyTorch accepts, or none (other advice). */
    for (uint64_t r = 1; r <= (64ull << 30); r = r * 5 / 4 + 1) {
        uint64_t mb = cp_knob_max_split_mb(r);
        if (!mb)
            continue;
        snprintf(s, sizeof s, "PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:%llu",
                 (unsigned long long)mb);
        check_valid(s);
    }
    CHECK(cp_knob_max_split_mb(10ull << 20) == 0);     /* 10 MiB: nothing valid helps */
    CHECK(cp_knob_max_split_mb(41ull << 20) == 0);
    CHECK(cp_knob_max_split_mb(1ull << 30) == 512);

    /* XLA's fraction for every pool need on cards of 1 GiB to 192 GiB:
     * one XLA takes, never above the largest suggested, and one that
     * holds the need. */
    for (uint64_t card = 1ull << 30; card <= (192ull << 30); card += 7ull << 30)
        for (uint64_t need = 1; need <= card; need = need * 9 / 8 + 1) {
            unsigned f = cp_knob_xla_fraction(need, card);
            if (!f)
                continue;
            snprintf(s, sizeof s, "XLA_PYTHON_CLIENT_MEM_FRACTION=.%02u", f);
            check_valid(s);
            CHECK(f <= CP_KNOB_XLA_FRACTION_MAX && f % 5 == 0);
            CHECK((double)f / 100 * (double)card >= (double)need);
        }
    CHECK(cp_knob_xla_fraction(900ull << 20, 1ull << 30) == 90);     /* 88% + 2 */
    CHECK(cp_knob_xla_fraction(1000ull << 20, 1ull << 30) == 0);     /* 98%: none */
    CHECK(cp_knob_xla_fraction(1, 0) == 0);
    return g_fail ? 1 : 0;
}
