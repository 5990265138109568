/*
 * test_varint.c - include/cp_varint.h: LEB128 and zigzag round trips at
 * every width, strings, and rejection of truncated or overlong input; the
 * analyzer's fast reader (cp__get_u_slack, analyzer/decode/cp_decode_int.h)
 * agrees with cp_get_u at every width, whatever bytes follow the varint,
 * and rejects the same overlong input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_decode_int.h"
#include "cp_unit.h"
#include "cp_varint.h"

#ifdef CP_DEC_HAVE_BMI2
static int g_bmi2;      /* the CPU has BMI2: test that reader too */

/* The BMI2 reader inlines only into code built for BMI2. */
static __attribute__((target("bmi,bmi2"), noinline)) const uint8_t *
bmi2_read(const uint8_t *p, uint64_t *v)
{
    return cp__get_u_slack_bmi2(p, v);
}
#endif

static void round_u(uint64_t v)
{
    uint8_t b[CP_VARINT_MAX + 1];
    uint8_t *e = cp_put_u(b, v);
    size_t n = (size_t)(e - b);
    size_t want = 1;
    for (uint64_t x = v >> 7; x; x >>= 7)
        want++;
    CHECK(n == want, "v=%llu: %zu bytes, expected %zu", (unsigned long long)v, n, want);
    const uint8_t *p = b;
    uint64_t got = ~v;
    CHECK(cp_get_u(&p, e, &got) == 0 && got == v && p == e, "v=%llu got %llu",
          (unsigned long long)v, (unsigned long long)got);
    /* Every strict prefix is truncated. */
    for (size_t cut = 0; cut < n; cut++) {
        p = b;
        CHECK(cp_get_u(&p, b + cut, &got) == -1 && p == b, "v=%llu cut %zu accepted",
              (unsigned long long)v, cut);
    }
    /* The fast reader, followed by zeroes (the window's slack), by bytes
     * that look like more of a varint (0xff) or like the next one (0x01). */
    for (int fill = 0; fill < 3; fill++) {
        uint8_t w[CP_VARINT_MAX + 16];
        memset(w, fill == 2 ? 0 : fill ? 0xff : 0x01, sizeof w);
        memcpy(w, b, n);
        got = ~v;
        CHECK(cp__get_u_slack(w, &got) == w + n && got == v,
              "fast, padded 0x%02x: v=%llu got %llu", w[sizeof w - 1],
              (unsigned long long)v, (unsigned long long)got);
#ifdef CP_DEC_HAVE_BMI2
        if (g_bmi2) {
            got = ~v;
            CHECK(bmi2_read(w, &got) == w + n && got == v,
                  "bmi2, padded 0x%02x: v=%llu got %llu", w[sizeof w - 1],
                  (unsigned long long)v, (unsigned long long)got);
        }
#endif
    }
}

static void round_s(int64_t v)
{
    uint8_t b[CP_VARINT_MAX];
    uint8_t *e = cp_put_s(b, v);
    const uint8_t *p = b;
    int64_t got = ~v;
    CHECK(cp_get_s(&p, e, &got) == 0 && got == v && p == e, "s=%lld got %lld",
          (long long)v, (long long)got);
}

int main(void)
{
    int n = 0;
#ifdef CP_DEC_HAVE_BMI2
    __builtin_cpu_init();
    g_bmi2 = __builtin_cpu_supports("bmi2");
    printf("varint: BMI2 reader %s\n", g_bmi2 ? "tested" : "not tested (no BMI2 on this CPU)");
#endif
    for (unsigned bit = 0; bit < 64; bit++) {
        uint64_t v = 1ull << bit;
        round_u(v - 1);
        round_u(v);
        round_u(v + 1);
        round_s((int64_t)v);
        round_s(-(int64_t)v);
        round_s((int64_t)(v - 1));
        round_s(-(int64_t)(v - 1));
        n += 7;
    }
    round_u(UINT64_MAX);
    round_s(INT64_MAX);
    round_s(INT64_MIN);
    /* Small zigzag values stay one byte: -1 -> 1, 1 -> 2, -64 -> 127. */
    uint8_t b[CP_VARINT_MAX * 4];
    CHECK(cp_put_s(b, -1) - b == 1 && b[0] == 1, "zigzag -1");
    CHECK(cp_put_s(b, 1) - b == 1 && b[0] == 2, "zigzag 1");
    CHECK(cp_put_s(b, -64) - b == 1 && b[0] == 127, "zigzag -64");

    /* Overlong: 11 continuation bytes never terminate within 64 bits. */
    uint8_t bad[12];
    memset(bad, 0x80, sizeof bad);
    bad[11] = 0;
    const uint8_t *p = bad;
    uint64_t v;
    CHECK(cp_get_u(&p, bad + sizeof bad, &v) == -1, "overlong varint accepted");
    uint8_t badw[CP_VARINT_MAX + 16];
    memset(badw, 0x80, sizeof badw);
    CHECK(cp__get_u_slack(badw, &v) == NULL, "fast: overlong varint accepted");
#ifdef CP_DEC_HAVE_BMI2
    CHECK(!g_bmi2 || bmi2_read(badw, &v) == NULL, "bmi2: overlong varint accepted");
#endif

    /* Strings, including empty and NULL. */
    uint8_t *e = cp_put_str(b, "hello", 5);
    e = cp_put_str(e, NULL, 0);
    p = b;
    CHECK(cp_get_u(&p, e, &v) == 0 && v == 5 && memcmp(p, "hello", 5) == 0, "str");
    p += 5;
    CHECK(cp_get_u(&p, e, &v) == 0 && v == 0 && p == e, "empty str");
    printf("varint: %d round trips ok\n", n + 3);
    return 0;
}
