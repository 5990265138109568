/*
 * cp_items.h - lines of a finding that list its items one by one (a leak's
 * "Leaked 65536 bytes at 0x7f..." per address, then "... and N more"): the
 * text report and the page show them only with --verbose, after the call
 * sites, which say the same per site; JSON and summaries keep every line.
 * The check writes them with these formats, the renderers know them by the
 * same.
 */
#ifndef CP_ITEMS_H
#define CP_ITEMS_H

#include <stdio.h>

#define CP_ITEM_LEAKED_HEAD "Leaked %llu bytes at 0x%llx"
#define CP_ITEM_LEAKED CP_ITEM_LEAKED_HEAD " (%s%s%d)"
#define CP_ITEM_MORE "... and %llu more"

/*! cp_item_line() : whether line l is one of those (CP_ITEM_LEAKED or
 *  CP_ITEM_MORE). */
static inline int cp_item_line(const char *l)
{
    unsigned long long a, b;
    int n = 0;
    if (sscanf(l, CP_ITEM_LEAKED_HEAD "%n", &a, &b, &n) == 2 && n)
        return 1;
    n = 0;
    return sscanf(l, CP_ITEM_MORE "%n", &a, &n) == 1 && n && !l[n];
}

#endif /* CP_ITEMS_H */
