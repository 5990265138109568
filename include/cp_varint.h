/*
 * cp_varint.h - LEB128 varints and zigzag, shared by writer and reader.
 */
#ifndef CP_VARINT_H
#define CP_VARINT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define CP_VARINT_MAX 10

/*! cp_put_u() : append v as an unsigned LEB128 varint at p.
 *  @return : the byte after the varint.  p needs CP_VARINT_MAX bytes. */
static inline uint8_t *cp_put_u(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

/*! cp_put_s() : append a signed value, zigzag-encoded. */
static inline uint8_t *cp_put_s(uint8_t *p, int64_t v)
{
    return cp_put_u(p, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

/*! cp_put_str() : append varint length + bytes (s may be NULL: empty).
 *  p needs CP_VARINT_MAX + n bytes. */
static inline uint8_t *cp_put_str(uint8_t *p, const char *s, size_t n)
{
    p = cp_put_u(p, n);
    if (n)
        memcpy(p, s, n);
    return p + n;
}

/*! cp_get_u() : read a varint from [*p, end).
 *  @return : 0 and advances *p, or -1 when the varint is truncated or longer
 *  than 10 bytes (a corrupt stream). */
static inline int cp_get_u(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    uint64_t r = 0;
    unsigned shift = 0;
    const uint8_t *q = *p;
    while (q < end && shift < 64) {
        uint8_t b = *q++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *p = q;
            *v = r;
            return 0;
        }
        shift += 7;
    }
    return -1;
}

/*! cp_get_s() : read a zigzag varint.  @return : as cp_get_u(). */
static inline int cp_get_s(const uint8_t **p, const uint8_t *end, int64_t *v)
{
    uint64_t u;
    if (cp_get_u(p, end, &u))
        return -1;
    *v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
    return 0;
}

#endif /* CP_VARINT_H */
