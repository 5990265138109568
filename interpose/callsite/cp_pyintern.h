/*
 * cp_pyintern.h - resolved Python call sites (cp_pysite.h) into the trace's
 * frame ids (cp_pyintern.c).
 */
#ifndef CP_PYINTERN_H
#define CP_PYINTERN_H

#include <stdint.h>

#include "cp_pysite.h"

/*! cp_pyintern_sites() : the trace's PYFRAME id of each of sites[0..n), in
 *  order, announcing (STRING, PYFRAME records) what the current trace file
 *  does not have yet.  A site that cannot be interned (no memory, no
 *  recorder) is left out.  @return : ids written to ids[]. */
int cp_pyintern_sites(const struct cp_pysite *const *sites, int n, uint64_t *ids);

/*! cp_pyintern_atfork_child() : after fork, in the child: the tables'
 *  mutexes re-initialised (the parent's holder does not exist here) and a
 *  new file epoch started, as cp_itab_atfork_child() does. */
void cp_pyintern_atfork_child(void);

#endif /* CP_PYINTERN_H */
