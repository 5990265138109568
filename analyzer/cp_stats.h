/*
 * cp_stats.h - `cuprobe-analyze stats TRACE|DIR...` (cp_stats.c): the
 * tables nsys and heaptrack users reach for, from the processes' ledgers
 * (cp_ledger.h): driver calls per API, memory and copies per device, and
 * device memory by call site (held at the peak, allocations, temporary
 * allocations, held at each OOM).  Text, --json (schema "cuprobe-stats",
 * integers only, which `cuprobe diff` also reads) or --csv.
 *
 * cp_stats_data.c gathers what the tables and the JSON share,
 * cp_stats_tables.c builds the tables, cp_stats_json.c the document.
 */
#ifndef CP_STATS_H
#define CP_STATS_H

#include <stddef.h>
#include <stdint.h>

#include "cp_findings.h"
#include "cp_ledger.h"
#include "render_table.h"

#define CP_STATS_VERSION 1

/*! cp_stats_main() : run `stats` (argv[0] is "stats").  @return : the exit
 *  status: 0 ok, 2 usage error or a trace that could not be read to its
 *  end (after printing what decoded). */
int cp_stats_main(int argc, char **argv);

/* --- cp_stats_data.c -------------------------------------------------------------------- */

/* One API over every process. */
typedef struct cp_st_api {
    const char *name;
    uint64_t calls, errors, timed, total_ns, min_ns, max_ns, median_ns, avg_ns;
} cp_st_api;

/*! cp_stats_apis() : the APIs of rep's processes merged by name, the most
 *  time in the driver first, then the most calls.  @return : the number,
 *  with *out (free it), or 0 with *out NULL (none, or out of memory). */
size_t cp_stats_apis(const cp_report *rep, cp_st_api **out);

/* A JSON member from a struct: the uint64_t at offset off. */
typedef struct cp_jfield {
    const char *key;
    size_t off;
} cp_jfield;
#define CP_JF(T, key, member) { key, offsetof(T, member) }

/*! cp_stats_fields() : "key": value into b for each of f[0..n), read from
 *  the struct at base. */
void cp_stats_fields(cp_jb *b, const void *base, const cp_jfield *f, size_t n);

/*! cp_stats_proc_key() : the name that matches p across two runs of the
 *  same job: "rank N" where a launcher set one, else the program's file name
 *  and its position among rep's processes of that name ("train.py#2").
 *  @return : buf. */
const char *cp_stats_proc_key(const cp_report *rep, const cp_proc *p, char *buf, size_t cap);

/*! cp_stats_label() : site's label in p ("file:line (function)"). */
const char *cp_stats_label(cp_proc *p, uint64_t stack);

/*! cp_stats_devices() : whether device d of p has anything to show (memory
 *  held or copies). */
int cp_stats_device_used(const cp_proc *p, int d);

/* --- cp_stats_tables.c ------------------------------------------------------------------ */

enum cp_st_table {
    CP_ST_API = 0, CP_ST_DEVICES, CP_ST_COPIES, CP_ST_PEAK, CP_ST_ALLOCS, CP_ST_TEMP, CP_ST_OOM,
    CP_ST_N
};

/*! cp_stats_table_id() : "api", "devices", "copies", "peak", "allocations",
 *  "temporary", "oom". */
const char *cp_stats_table_id(int t);

/*! cp_stats_table() : table t (enum cp_st_table) of rep, top rows of each
 *  process's device for the site tables, into tab (cp_tab_free() it). */
void cp_stats_table(cp_tab *tab, int t, cp_report *rep, int top);

/* --- cp_stats_json.c -------------------------------------------------------------------- */

/*! cp_stats_doc() : the "cuprobe-stats" document of rep into b: top sites of
 *  each kind per process and device, and with findings the report's
 *  findings (check, severity, process, title, top site, bytes). */
void cp_stats_doc(cp_jb *b, cp_report *rep, int top, int findings);

#endif /* CP_STATS_H */
