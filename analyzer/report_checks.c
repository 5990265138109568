/*
 * report_checks.c - the table of checks, in the order the report lists
 * them (see report_find.h: cp_checks()).
 */
#include <string.h>

#include "report_checks.h"

static const cp_check *const cp_all_checks[] = {
    &cp_check_nogpu, &cp_check_errors, &cp_check_oom, &cp_check_xdev, &cp_check_stray,
    &cp_check_fork, &cp_check_pageable, &cp_check_leak, &cp_check_growth, &cp_check_frag,
    &cp_check_blocking,
};

_Static_assert(sizeof cp_all_checks / sizeof *cp_all_checks == CP_N_CHECKS,
               "CP_N_CHECKS must match the check table");

const cp_check *const *cp_checks(size_t *n)
{
    *n = sizeof cp_all_checks / sizeof *cp_all_checks;
    return cp_all_checks;
}

const cp_check *cp_check_find(const char *id)
{
    for (size_t i = 0; i < sizeof cp_all_checks / sizeof *cp_all_checks; i++)
        if (strcmp(cp_all_checks[i]->id, id) == 0)
            return cp_all_checks[i];
    return NULL;
}
