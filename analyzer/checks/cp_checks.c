/*
 * cp_checks.c - the table of checks, in the order the report lists
 * them (see cp_findings.h: cp_checks()), and the setup and teardown of
 * their per-trace state.
 */
#include <stdlib.h>
#include <string.h>

#include "cp_checks.h"

static const cp_check *const cp_all_checks[] = {
    &cp_check_nogpu, &cp_check_killed, &cp_check_errors, &cp_check_oom, &cp_check_xdev, &cp_check_rank,
    &cp_check_stray, &cp_check_fork, &cp_check_pageable, &cp_check_leak, &cp_check_growth, &cp_check_frag,
    &cp_check_blocking, &cp_check_fatal,
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

/* The i-th map of entry m (a member or an array of them) of state st. */
static cp_map *cp_state_map_at(void *st, const cp_state_map *m, int i)
{
    return (cp_map *)((char *)st + m->off) + i;
}

int cp_check_start(const cp_check *c, cp_proc *p, void **st)
{
    *st = NULL;
    if (c->state_size) {
        *st = calloc(1, c->state_size);
        if (!*st)
            return -1;
        for (size_t k = 0; k < c->n_maps; k++)
            for (int i = 0; i < c->maps[k].n; i++)
                cp_map_init(cp_state_map_at(*st, &c->maps[k], i), c->maps[k].val_size);
    }
    if (c->init && c->init(p, *st) != 0) {
        cp_check_end(c, *st);
        *st = NULL;
        return -1;
    }
    return 0;
}

void cp_check_end(const cp_check *c, void *st)
{
    if (c->done)
        c->done(st);
    if (!st)
        return;
    /* Every listed map: freeing one that was never put to is harmless. */
    for (size_t k = 0; k < c->n_maps; k++)
        for (int i = 0; i < c->maps[k].n; i++)
            cp_map_free(cp_state_map_at(st, &c->maps[k], i));
    free(st);
}
