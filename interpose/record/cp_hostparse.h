/*
 * cp_hostparse.h - parsers of the /proc and cgroup files the writer samples
 * for HOSTMEM and HOSTINFO (cp_hostmem.c).  Pure functions of the bytes
 * read: no I/O, no allocation, no errno, so that they can run on the writer
 * thread every sample and be tested on fixture text (tests/unit/test_hostparse.c).
 */
#ifndef CP_HOSTPARSE_H
#define CP_HOSTPARSE_H

#include <stddef.h>
#include <stdint.h>

/*! cp_hp_meminfo() : MemTotal, MemAvailable and SwapTotal of /proc/meminfo
 *  text (lines "Name:   N kB"), in bytes; a line that is missing leaves 0.
 *  @return : 0 when MemTotal was found, else -EINVAL. */
int cp_hp_meminfo(const char *buf, size_t len, uint64_t *total, uint64_t *avail,
                  uint64_t *swap);

/*! cp_hp_statm() : resident and shared bytes of /proc/self/statm text
 *  ("size resident shared text lib data dt", in pages).
 *  @return : 0, or -EINVAL when the text has fewer than three numbers. */
int cp_hp_statm(const char *buf, size_t len, uint64_t page_size, uint64_t *rss,
                uint64_t *shared);

/*! cp_hp_cgroup() : the memory cgroup of /proc/self/cgroup text: the path of
 *  a cgroup v1 line naming the memory controller ("4:memory:/a/b") when
 *  there is one (*v1 = 1: the memory controller is not on the unified
 *  hierarchy then), else the path of the v2 line ("0::/a/b", *v1 = 0).  The
 *  path is copied NUL-terminated into path[cap].
 *  @return : its length, or -ENOENT when no line fits, -ENAMETOOLONG. */
int cp_hp_cgroup(const char *buf, size_t len, int *v1, char *path, size_t cap);

/*! cp_hp_limit() : a cgroup memory value (memory.max, memory.current,
 *  memory.limit_in_bytes, memory.usage_in_bytes): "max", and v1's
 *  unlimited (a value of 2^60 and more), are 0, meaning no limit.
 *  @return : 0, or -EINVAL when the text is not a number. */
int cp_hp_limit(const char *buf, size_t len, uint64_t *v);

#endif /* CP_HOSTPARSE_H */
