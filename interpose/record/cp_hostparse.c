/*
 * cp_hostparse.c - the text of /proc/meminfo, /proc/self/statm,
 * /proc/self/cgroup and cgroup memory files, parsed without stdio or
 * allocation (cp_hostparse.h).
 */
#include <errno.h>
#include <string.h>

#include "cp_hostparse.h"

/* A decimal number at [*p, end), blanks before it skipped.  @return : 0 and
 * *p past it, or -1 when there are no digits (or it overflows). */
static int cp_hp_num(const char **p, const char *end, uint64_t *v)
{
    const char *q = *p;
    while (q < end && (*q == ' ' || *q == '\t'))
        q++;
    if (q == end || *q < '0' || *q > '9')
        return -1;
    uint64_t r = 0;
    for (; q < end && *q >= '0' && *q <= '9'; q++) {
        if (r > (UINT64_MAX - 9) / 10)
            return -1;
        r = r * 10 + (uint64_t)(*q - '0');
    }
    *p = q;
    *v = r;
    return 0;
}

/* The line after the one at p (end when it is the last). */
static const char *cp_hp_next_line(const char *p, const char *end)
{
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    return nl ? nl + 1 : end;
}

int cp_hp_meminfo(const char *buf, size_t len, uint64_t *total, uint64_t *avail,
                  uint64_t *swap)
{
    static const struct { const char *name; size_t n; } keys[] = {
        {"MemTotal:", 9}, {"MemAvailable:", 13}, {"SwapTotal:", 10},
    };
    uint64_t *out[] = {total, avail, swap};
    int found_total = 0;
    *total = *avail = *swap = 0;
    for (const char *p = buf, *end = buf + len; p < end; p = cp_hp_next_line(p, end)) {
        for (unsigned k = 0; k < 3; k++) {
            uint64_t v;
            const char *q = p + keys[k].n;
            if ((size_t)(end - p) < keys[k].n || memcmp(p, keys[k].name, keys[k].n) != 0 ||
                cp_hp_num(&q, end, &v) != 0)
                continue;
            /* The kernel prints kB (KiB) for every one of these. */
            *out[k] = v << 10;
            found_total |= k == 0;
        }
    }
    return found_total ? 0 : -EINVAL;
}

int cp_hp_statm(const char *buf, size_t len, uint64_t page_size, uint64_t *rss,
                uint64_t *shared)
{
    const char *p = buf, *end = buf + len;
    uint64_t size, res, shr;
    if (cp_hp_num(&p, end, &size) || cp_hp_num(&p, end, &res) || cp_hp_num(&p, end, &shr))
        return -EINVAL;
    *rss = res * page_size;
    *shared = shr * page_size;
    return 0;
}

/* Whether the comma-separated controller list [p, e) names "memory". */
static int cp_hp_has_memory(const char *p, const char *e)
{
    while (p < e) {
        const char *c = memchr(p, ',', (size_t)(e - p));
        const char *ce = c ? c : e;
        if (ce - p == 6 && memcmp(p, "memory", 6) == 0)
            return 1;
        p = ce + 1;
    }
    return 0;
}

int cp_hp_cgroup(const char *buf, size_t len, int *v1, char *path, size_t cap)
{
    const char *best = NULL, *best_end = NULL;
    int best_v1 = 0;
    for (const char *p = buf, *end = buf + len; p < end; p = cp_hp_next_line(p, end)) {
        const char *le = memchr(p, '\n', (size_t)(end - p));
        le = le ? le : end;
        /* "hierarchy-id:controllers:path" */
        const char *c1 = memchr(p, ':', (size_t)(le - p));
        const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(le - c1 - 1)) : NULL;
        if (!c2 || c2 + 1 >= le || c2[1] != '/')
            continue;
        if (cp_hp_has_memory(c1 + 1, c2)) {
            best = c2 + 1, best_end = le, best_v1 = 1;
            break;   /* a v1 memory hierarchy owns the controller */
        }
        if (c1 - p == 1 && p[0] == '0' && c2 == c1 + 1)
            best = c2 + 1, best_end = le, best_v1 = 0;
    }
    if (!best)
        return -ENOENT;
    size_t n = (size_t)(best_end - best);
    if (n >= cap)
        return -ENAMETOOLONG;
    memcpy(path, best, n);
    path[n] = 0;
    *v1 = best_v1;
    return (int)n;
}

int cp_hp_limit(const char *buf, size_t len, uint64_t *v)
{
    const char *p = buf, *end = buf + len;
    if (len >= 3 && memcmp(buf, "max", 3) == 0) {
        *v = 0;
        return 0;
    }
    if (cp_hp_num(&p, end, v) != 0)
        return -EINVAL;
    /* v1 says "unlimited" with the largest page-aligned signed value. */
    if (*v >= (1ull << 60))
        *v = 0;
    return 0;
}
