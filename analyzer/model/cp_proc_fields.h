/*
 * cp_proc_fields.h - the one list of what a process's model keeps after its
 * trace was read (cp_model.h) and a report needs: the summary writer and
 * reader (cp_summary.h) both expand these tables, so a field added here is
 * written and read back, and one missing from here shows up as a merged
 * report that differs from the direct one (tests/sh/report_summary.sh).
 *
 * Each table is X(KIND, field[, n]) with KIND:
 *   U  unsigned integer      I  signed integer
 *   S  string the struct owns (malloc'd, may be NULL)
 *   K  interned string (cp_sym_intern, may be NULL)
 *   H  byte array shown as hex
 *   UA array of n unsigned integers
 * A struct is written as one JSON array of its fields in table order; change
 * a table and CP_SUMMARY_VERSION (cp_summary.h) goes up with it.
 */
#ifndef CP_PROC_FIELDS_H
#define CP_PROC_FIELDS_H

#define CP_PROC_FIELDS(X) \
    X(U, pid) X(U, ppid) X(U, t0) X(U, t_last) X(U, page_size) X(I, root) \
    X(I, forked_image) X(S, exe) X(S, cmdline) X(S, host) X(I, complete) X(U, end_reason) \
    X(I, end_status) X(S, error) X(I, truncated) X(I, killed) \
    X(U, nospace_ts) X(U, nospace_err) X(U, nospace_records) X(U, nospace_bytes) X(U, n_last) X(U, records) \
    X(U, fdlost_ts) X(U, fdlost_how) X(U, fdlost_n) \
    X(U, lost) X(U, dropped) X(U, signo) X(I, driver_seen) X(I, driver_version) \
    X(U, driver_result) X(I, runtime_version) X(I, dlopen_seen) X(I, dlopen_ok) \
    X(U, lib_kind) X(S, lib_path) X(S, lib_error) X(I, init_ok) X(U, init_ts) \
    X(U, init_calls) X(U, init_fail_result) X(U, device_count_zero) X(I, n_dev) \
    X(U, vmm_reserved) X(U, host_pinned) X(U, mem_seq) X(U, n_alloc_ok) X(U, n_launch) \
    X(U, n_copy) X(U, fw) X(U, fork_before_init) X(U, first_cuda_ts) \
    X(U, first_cuda_stack) X(K, first_cuda_api) \
    X(U, hm_mem_total) X(U, hm_swap_total) X(U, hm_cg_limit) X(S, hm_cg_path) X(U, hm_n) \
    X(U, hm_ts) X(U, hm_rss) X(U, hm_rss_shared) X(U, hm_pinned) X(U, hm_avail) \
    X(U, hm_cg_usage) X(U, hm_peak_rss) X(U, hm_peak_ts)

#define CP_DEVINFO_FIELDS(X) \
    X(I, seen) X(K, name) X(H, uuid) X(U, pci_domain) X(U, pci_bus) X(U, pci_device) \
    X(U, cc_major) X(U, cc_minor) X(U, total_mem) X(U, pageable_access) \
    X(U, host_page_tables) X(U, sm_count)

#define CP_DEVMEM_FIELDS(X) \
    X(UA, held, CP_HOLD_N) X(U, held_total) X(U, peak_total) X(U, peak_ts) \
    X(U, max_request) X(U, n_alloc) X(U, alloc_bytes) X(U, n_free) X(U, vmm_mapped) \
    X(U, pinned_like) X(I, has_ctx) X(U, ctx_stack) X(U, ctx_ts) X(U, first_alloc_stack) \
    X(U, launches)

#define CP_LAST_FIELDS(X) \
    X(U, ts) X(U, api_id) X(K, api) X(U, type) X(I, dev) X(U, bytes)

/* The timeline (cp_series.h): its scalars, one bucket of the process, one
 * bucket of a device (the largest live allocations follow it as triples),
 * one OOM mark. */
#define CP_SERIES_FIELDS(X) \
    X(U, t0) X(U, width) X(U, t_end) X(I, cur) X(I, n_dev) X(I, n_oom) X(U, n_oom_all)

#define CP_SER_BUCKET_FIELDS(X) \
    X(UA, copies, CP_CC_N) X(UA, copy_bytes, CP_CC_N) X(U, blocked_ns)

#define CP_SER_DEV_FIELDS(X) \
    X(U, max_held) X(U, min_held) X(U, max_ts) X(UA, hold, CP_HD_N) X(U, fw_alloc) \
    X(U, fw_res) X(U, used) X(U, n_top) X(U, fw_seen) X(U, oom)

#define CP_SER_ALLOC_FIELDS(X) X(U, size) X(U, stack) X(U, ts)

#define CP_SER_OOM_FIELDS(X) X(U, ts) X(U, request) X(I, dev)

/* What a finding carries besides its title, lines, details and sites. */
#define CP_FINDING_FIELDS(X) \
    X(I, sev) X(U, count) X(U, bytes) X(U, ns) X(I, sort) X(I, top) X(U, tag) \
    X(U, t_from) X(U, t_to)

#endif /* CP_PROC_FIELDS_H */
