/*
 * cp_unit.h - the CHECK macro of the unit tests, in one of two forms:
 *
 *   CHECK(cond, fmt, ...)   stop at the first failure: "FILE:LINE: cond: "
 *                           and the printf-style message on stderr, exit 1.
 *   CHECK(cond)             with CP_UNIT_COUNT defined before the include:
 *                           "FAIL FILE:LINE: cond" on stdout, counted in
 *                           g_fail so one run reports every failure.
 *
 * and cp_unit_rand(), the tests' reproducible random numbers.
 */
#ifndef CP_UNIT_H
#define CP_UNIT_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* cp_unit_rand() : the next xorshift64 number of *state (which must not
 * be 0): reproducible random operations for the model tests. */
static inline uint64_t cp_unit_rand(uint64_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

#ifdef CP_UNIT_COUNT
static int g_fail;
#define CHECK(c)                                                                 \
    do {                                                                         \
        if (!(c)) {                                                              \
            printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #c);                  \
            g_fail++;                                                            \
        }                                                                        \
    } while (0)
#else
#define CHECK(c, ...)                                                            \
    do {                                                                         \
        if (!(c)) {                                                              \
            fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #c);              \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
            exit(1);                                                             \
        }                                                                        \
    } while (0)
#endif

#endif /* CP_UNIT_H */
