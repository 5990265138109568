/*
 * render.h - rendering a prepared report (cp_report_prepare) as text
 * for people (render_text.c) or as JSON with the stable schema of
 * docs/report.md (render_json.c); the environment section of each process
 * (render_env.c).
 */
#ifndef RENDER_H
#define RENDER_H

#include <stdio.h>

#include "cp_findings.h"

typedef struct cp_out_opts {
    int color;              /* ANSI colours (stdout is a terminal, NO_COLOR unset) */
    int max_sites;          /* sites listed per finding in text */
    int verbose;            /* item lines (cp_items.h) in the text and the page */
    int brief;              /* no Why and Fix paragraphs */
} cp_out_opts;

/*! cp_out_text() : the human report on o. */
void cp_out_text(FILE *o, cp_report *rep, const cp_out_opts *opt);

/*! cp_out_json() : the JSON report on o (one object, newline-terminated). */
void cp_out_json(FILE *o, cp_report *rep, const cp_out_opts *opt);

/*! cp_out_html() : the self-contained HTML page (timelines, copy lanes,
 *  findings) on o.  @return : 0, or -ENOMEM. */
int cp_out_html(FILE *o, cp_report *rep, const cp_out_opts *opt);

/*! cp_window_json() : "window": {"since_ns", "until_ns" (null: the end),
 *  "from"} into b when rep covers only part of the run, else nothing. */
void cp_window_json(cp_jb *b, const cp_report *rep);

/*! cp_proc_label() : "rank 1 on node7 (pid 4242)" into buf: the process's
 *  rank (RANK, else SLURM_PROCID, else LOCAL_RANK) and host where known. */
const char *cp_proc_label(const cp_proc *p, char *buf, size_t cap);

/*! cp_env_text() : the environment section of p, as text lines. */
void cp_env_text(FILE *o, const cp_proc *p, const cp_out_opts *opt);

/*! cp_env_json() : the "environment" object members of p into b. */
void cp_env_json(cp_jb *b, const cp_proc *p);

/*! cp_version_str() : "12.4" for 12040 into buf ("" for 0). */
const char *cp_version_str(int64_t v, char *buf, size_t cap);

/*! cp_frames_json() : the "python" and "native" arrays of stack id of p. */
void cp_frames_json(cp_jb *b, cp_proc *p, uint64_t stack);

/*! cp_finding_when() : when f happened (trace clock, ns): its own range,
 *  else the first record of any of its call sites (from == to), from the
 *  processes' ledgers.  @return : 1 with *from and *to, 0 when not known. */
int cp_finding_when(const cp_finding *f, uint64_t *from, uint64_t *to);

#endif /* RENDER_H */
