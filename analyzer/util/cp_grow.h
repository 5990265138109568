/*
 * cp_grow.h - the analyzer's one growable-array helper.
 */
#ifndef CP_GROW_H
#define CP_GROW_H

#include <stdlib.h>

/*! cp_grow() : make *arr (of *cap items of `item` bytes) hold at least n
 *  items, doubling from `first`.  @return : 0, or -1 when out of memory
 *  (*arr and *cap are then unchanged). */
static inline int cp_grow(void **arr, size_t *cap, size_t n, size_t item, size_t first)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap ? *cap : first;
    while (c < n)
        c *= 2;
    void *a = realloc(*arr, c * item);
    if (!a)
        return -1;
    *arr = a;
    *cap = c;
    return 0;
}

#endif /* CP_GROW_H */
