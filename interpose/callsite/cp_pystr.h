/*
 * cp_pystr.h - reading CPython str objects and code line tables from raw
 * memory, without the GIL and without the C API (cp_pystr.c).  The caller
 * guarantees the objects are alive (see cp_pystack.c's safety argument).
 */
#ifndef CP_PYSTR_H
#define CP_PYSTR_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cp_pylayout.h"

#define CP_PYSTR_MAX 1024       /* code points kept of a name; longer: "..." */
#define CP_PYSTR_BUF (4 * CP_PYSTR_MAX + 4)

/* Raw reads of the interpreter's memory, shared by the frame walker and the
 * string readers: a plausible user-space, 8-aligned pointer, and unaligned-safe
 * loads (the caller has checked the address is readable). */
static inline int ptr_ok(uintptr_t p)
{
    return p >= 4096 && p < ((uintptr_t)1 << 47) && !(p & 7);
}

static inline uintptr_t rd_ptr(uintptr_t a)
{
    uintptr_t v;
    memcpy(&v, (const void *)a, sizeof(v));
    return v;
}

static inline int64_t rd_i64(uintptr_t a)
{
    int64_t v;
    memcpy(&v, (const void *)a, sizeof(v));
    return v;
}

static inline int32_t rd_i32(uintptr_t a)
{
    int32_t v;
    memcpy(&v, (const void *)a, sizeof(v));
    return v;
}

/*! cp_pystr_utf8() : copy str object o (layout L, type unicode_type) as
 *  UTF-8 into buf (CP_PYSTR_BUF bytes) and its cached hash into *hash.  Only
 *  compact strings (all names the compiler makes) are read.
 *  @return : the length, or -1 when o is not a readable str. */
long cp_pystr_utf8(const struct cp_pylayout *L, uintptr_t unicode_type, uintptr_t o, char *buf,
                   int64_t *hash);

/*! cp_pystr_addr2line() : the line of instruction lasti (code units) from
 *  a 3.11+ co_linetable of size bytes, as PyCode_Addr2Line() computes it.
 *  @return : the line, or -1 for none. */
int cp_pystr_addr2line(const uint8_t *p, size_t size, int firstlineno, int lasti);

#endif /* CP_PYSTR_H */
