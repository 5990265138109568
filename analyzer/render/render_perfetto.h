/*
 * render_perfetto.h - the Trace Event Format export (render_perfetto.c),
 * written while the traces stream through the report and finished with
 * the counters and findings once they are known.
 */
#ifndef RENDER_PERFETTO_H
#define RENDER_PERFETTO_H

#include <stdio.h>

#include "render.h"

typedef struct cp_pf cp_pf;

/*! cp_pf_new() : an exporter that makes a slice of every call of at least
 *  slow_ns.  @return : it, or NULL out of memory. */
cp_pf *cp_pf_new(uint64_t slow_ns);

/*! cp_pf_rec() : the record hook (ctx is the cp_pf): note record r of p,
 *  after the model applied it.  Traces come one after another. */
void cp_pf_rec(void *ctx, cp_proc *p, const cp_record *r);

/*! cp_pf_write() : the whole JSON document on o, from what was noted and
 *  the prepared report.  @return : 0, or a negative errno (a spool file
 *  could not be made or written). */
int cp_pf_write(cp_pf *pf, FILE *o, cp_report *rep);

/*! cp_pf_free() : free pf and its spool files (NULL is fine). */
void cp_pf_free(cp_pf *pf);

#endif /* RENDER_PERFETTO_H */
