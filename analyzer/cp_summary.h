/*
 * cp_summary.h - report summaries: what analyzing some traces of a run gave
 * (each process's model and the findings its checks made on it, call sites
 * already symbolized), written where the traces lie by
 * `cuprobe report --summary FILE TRACE...` and merged anywhere by
 * `cuprobe report FILE...`.  Merging summaries of the parts of a run gives
 * the report of all its traces, byte for byte (tests/sh/report_summary.sh).
 *
 * The format is JSON, schema "cuprobe-summary", version CP_SUMMARY_VERSION
 * (docs/report.md); the reader checks it and names the file and byte offset
 * of anything it cannot use.
 */
#ifndef CP_SUMMARY_H
#define CP_SUMMARY_H

#include <stddef.h>

#include "cp_analyze.h"

#define CP_SUMMARY_VERSION 4

#ifndef CP_VERSION              /* the Makefile's VERSION (builds outside it: tests/fuzz) */
#define CP_VERSION "unknown"
#endif

/*! cp_summary_is() : whether path holds a summary rather than a trace (its
 *  first byte that is not blank is '{').  @return : 1 or 0 (0 also when it
 *  cannot be read: the trace reader then says why). */
int cp_summary_is(const char *path);

/*! cp_summary_is_head() : the same test on the first n bytes of a file
 *  (a stream, read once): whether its first byte that is not blank is '{'. */
int cp_summary_is_head(const void *head, size_t n);

/*! cp_summary_write() : write parts[0..n) (made with the checks selected[i]
 *  of cp_checks()) to path, through a temporary file renamed at the end.
 *  @return : 0, or -1 with the reason on stderr. */
int cp_summary_write(const char *path, const cp_part *parts, size_t n,
                     const unsigned char *selected);

/*! cp_summary_read() : append the processes of summary path to
 *  (*parts)[*n..] (*cap entries allocated, grown as needed); findings of
 *  checks not selected[] are left out, and so is each process's ledger
 *  unless ledger is set (the page, stats and diff read it; the report of a
 *  trace has none either).
 *  @return : 0; -EINVAL with "FILE: offset N: reason" in err when the file
 *  is not a summary this analyzer reads, is damaged or is truncated (no part
 *  of it is kept); -ENOMEM; or -errno when it cannot be read. */
int cp_summary_read(const char *path, const unsigned char *selected, int ledger,
                    cp_part **parts, size_t *n, size_t *cap, char *err, size_t errcap);

/*! cp_summary_read_text() : cp_summary_read() on the len bytes of text (a
 *  summary read from a stream); name is used in messages. */
int cp_summary_read_text(const char *name, const char *text, size_t len,
                         const unsigned char *selected, int ledger, cp_part **parts,
                         size_t *n, size_t *cap, char *err, size_t errcap);

/*! cp_summary_ledger_write() : the "ledger" member of pt's process into b
 *  (cp_summary_ledger.c; nothing when it has no ledger). */
void cp_summary_ledger_write(cp_jb *b, const cp_part *pt);

/*! cp_summary_ledger_read() : p's ledger from its process object o, when o
 *  has one (p->series read before it).  @return : 0; -EINVAL with *bad the
 *  node that is not what it should be; -ENOMEM. */
struct cp_jn;
int cp_summary_ledger_read(cp_proc *p, const struct cp_jn *o, const struct cp_jn **bad);

#endif /* CP_SUMMARY_H */
