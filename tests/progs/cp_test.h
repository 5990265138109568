/*
 * cp_test.h - tiny helpers shared by the programs run under the shim.
 */
#ifndef CP_TEST_H
#define CP_TEST_H

#include <stdio.h>
#include <stdlib.h>

#define CK(call)                                                                       \
    do {                                                                               \
        CUresult r_ = (call);                                                          \
        if (r_ != CUDA_SUCCESS) {                                                      \
            fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #call, (int)r_);   \
            exit(10);                                                                  \
        }                                                                              \
    } while (0)

/* FNV-1a over a buffer: programs print it so that runs with and without
 * the shim can be compared byte for byte. */
static inline unsigned long cp_test_sum(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned long h = 1469598103934665603ul;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ul;
    return h;
}

#endif
