/*
 * cp_pystr.c - CPython strings and line tables read from raw memory (see
 * cp_pystr.h), for the frame walker (cp_pystack.c).
 */
#include "cp_pystr.h"

#include <string.h>



static size_t utf8_put(char *o, uint32_t c)
{
    if (c < 0x80) {
        o[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (char)(0xc0 | (c >> 6));
        o[1] = (char)(0x80 | (c & 0x3f));
        return 2;
    }
    if (c >= 0xd800 && c < 0xe000) {
        o[0] = '?';     /* a lone surrogate (surrogateescape'd bytes) */
        return 1;
    }
    if (c < 0x10000) {
        o[0] = (char)(0xe0 | (c >> 12));
        o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
        o[2] = (char)(0x80 | (c & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (c >> 18));
    o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
    o[3] = (char)(0x80 | (c & 0x3f));
    return 4;
}

/* Copy a str object as UTF-8 into buf (PY_STR_BUF bytes).  Only
 * compact strings (all names the compiler makes) are read.
 * @return : the length, or -1 when o is not a readable str. */
long cp_pystr_utf8(const struct cp_pylayout *L, uintptr_t unicode_type, uintptr_t o, char *buf,
                   int64_t *hash)
{
    uint32_t state, kind;
    int64_t len;
    uintptr_t data;
    size_t n = 0;

    if (!ptr_ok(o) || rd_ptr(o + (uintptr_t)L->ob_type) != unicode_type)
        return -1;
    state = (uint32_t)rd_i32(o + (uintptr_t)L->uni_state);
    len = rd_i64(o + (uintptr_t)L->uni_length);
    kind = (state >> CP_PY_STATE_KIND_SHIFT) & CP_PY_STATE_KIND_MASK;
    if (!(state & CP_PY_STATE_COMPACT) || len < 0 || (kind != 1 && kind != 2 && kind != 4))
        return -1;
    *hash = rd_i64(o + (uintptr_t)L->uni_hash);
    data = o + (uintptr_t)((state & CP_PY_STATE_ASCII) ? L->uni_ascii_data : L->uni_compact_data);
    for (int64_t i = 0; i < len && i < CP_PYSTR_MAX; i++) {
        uint32_t c;
        if (kind == 1)
            c = ((const uint8_t *)data)[i];
        else if (kind == 2)
            c = ((const uint16_t *)data)[i];
        else
            c = ((const uint32_t *)data)[i];
        n += utf8_put(buf + n, c > 0x10ffff ? '?' : c);
    }
    if (len > CP_PYSTR_MAX) {
        memcpy(buf + n, "...", 3);
        n += 3;
    }
    return (long)n;
}

/* Varints of the 3.11+ location table: 6 bits per byte, bit 6 = more. */
static const uint8_t *lt_varint(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
    uint32_t r = 0;
    unsigned shift = 0;
    while (p < end && shift < 32) {
        uint8_t b = *p++;
        r |= (uint32_t)(b & 63) << shift;
        shift += 6;
        if (!(b & 64))
            break;
    }
    *v = r;
    return p;
}

/* The line of instruction `lasti` (code units), as PyCode_Addr2Line()
 * computes it from co_linetable (Objects/locations.md: each entry starts
 * with a byte 1cccclll, covering lll+1 code units; code 15 = no line, 14 =
 * long form and 13 = no columns carry a signed line delta, 10..12 a delta of
 * code-10, 0..9 the same line).  @return : the line, or -1 for none. */
int cp_pystr_addr2line(const uint8_t *p, size_t size, int firstlineno, int lasti)
{
    const uint8_t *end = p + size;
    int line = firstlineno, ar_line = -1;
    long ar_end = 0;

    while (ar_end <= lasti) {
        uint8_t b;
        int code, delta = 0;
        if (p >= end)
            return -1;
        b = *p;
        code = (b >> 3) & 15;
        if (code == 13 || code == 14) {
            uint32_t u;
            lt_varint(p + 1, end, &u);
            delta = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (code >= 10 && code <= 12) {
            delta = code - 10;
        }
        line += delta;
        ar_line = code == 15 ? -1 : line;
        ar_end += (b & 7) + 1;
        do
            p++;
        while (p < end && !(*p & 128));
    }
    return ar_line;
}

