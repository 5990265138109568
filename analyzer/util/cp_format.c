/*
 * cp_format.c - formatting shared by the analyzer: sizes, durations and
 * CUresult names (see cp_format.h).
 */
#include <stdio.h>
#include <string.h>

#include "cp_curesult.h"
#include "cp_format.h"

const char *cp_fmt_bytes(uint64_t b, char *buf, size_t cap)
{
    static const char *const unit[] = { "KiB", "MiB", "GiB", "TiB" };
    if (b < 1024) {
        snprintf(buf, cap, "%llu B", (unsigned long long)b);
        return buf;
    }
    double v = (double)b / 1024;
    int u = 0;
    while (v >= 1024 && u < 3) {
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, "%.2f %s", v, unit[u]);
    return buf;
}

const char *cp_fmt_ns(uint64_t ns, char *buf, size_t cap)
{
    if (ns < 1000)
        snprintf(buf, cap, "%llu ns", (unsigned long long)ns);
    else if (ns < 1000000)
        snprintf(buf, cap, "%.1f us", ns / 1e3);
    else if (ns < 1000000000)
        snprintf(buf, cap, "%.1f ms", ns / 1e6);
    else
        snprintf(buf, cap, "%.2f s", ns / 1e9);
    return buf;
}

const char *cp_result_name(uint64_t code)
{
    return cp_curesult_name(code);
}

const char *cp_result_meaning(uint64_t code)
{
    return cp_curesult_meaning(code);
}
