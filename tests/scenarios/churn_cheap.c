/*
 * churn_cheap.c - fragmentation.c's empty_cache() loop on a driver whose
 * allocations cost nothing measurable: the same churn, but it cost no
 * time, so fragmentation is info.
 */
#include "fragmentation.c"
