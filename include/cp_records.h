/*
 * cp_records.h - THE record table of the trace format: every record's id,
 * name and typed fields, declared once (as Linux's TRACE_EVENT tables are).  Everything that knows a record's fields is expanded from here:
 *
 *   enum cp_rec_type, cp_enc_<rec>() and CP_REC_BOUND()  (this file)
 *   cp_rec_put_<rec>() / cp_ev_put_<rec>(): the shim's emitters
 *                                (interpose/record/cp_rec.h, hooks/cp_evt.h)
 *   the decoded struct cp_record (analyzer/decode/cp_decode.h)
 *   the field parser            (analyzer/decode/cp_decode_fields.c)
 *   the type names              (analyzer/decode/cp_names.c)
 *   `cuprobe-analyze dump`      (analyzer/cp_dump.c)
 *   the record table of docs/trace-format.md (generated and checked by
 *   tests/unit/test_records_doc.c: `make docs` rewrites it)
 *
 * Wire format of a record (unchanged by the table): u8 type, varint len,
 * payload = varint ts_delta, varint tid, then the fields below in order.
 *
 * ---- How to add a FIELD ---------------------------------------------------
 * Append one F(...) line at the END of the record's CP_F_<NAME> list (fields
 * are only ever appended: older readers skip trailing bytes), then fill it
 * in the hook that calls cp_rec_put_<rec>() / cp_ev_put_<rec>() (the
 * compiler lists every caller: the emitter gains a parameter).  A field that
 * older traces lack is UOPT (decoded as CP_FIELD_ABSENT there).  Run
 * `make docs` to regenerate the table in docs/trace-format.md.
 *
 * ---- How to add a RECORD --------------------------------------------------
 * 1. Take a free id (127 is END) and add one R(...) line to CP_RECORDS: R(NAME, id, lname,
 *    shape, "what it means").  shape is EV (starts with the EV prefix;
 *    emitter cp_ev_put_<lname>), REC (emitter cp_rec_put_<lname>) or BARE
 *    (no fields, no emitter).
 * 2. Define CP_F_<NAME>(F) with its fields, one F(kind, name, arg, fmt) a
 *    line (kinds and dump formats below).
 * 3. Call the emitter from the hook; read r->u.<lname>.<field> in the
 *    analyzer; `make docs`.
 *
 * ---- Field kinds: F(kind, name, arg, fmt) ----------------------------------
 *   U       u varint                          decoded uint64_t name
 *   S       zigzag varint                     int64_t name
 *   STR     str (varint length + bytes)       cp_str name
 *   BYTES   bytes[arg]                        uint8_t name[arg]
 *   UOPT    u, appended after version 1: absent in older traces
 *                                             uint64_t name (CP_FIELD_ABSENT)
 *   UARR    u arg, u name[arg]                uint64_t arg; const uint64_t *name
 *   PAIRS   u arg, (u a, u b)[arg]            uint64_t arg; const CP_PAIR_<fmt>_T *name
 *   STRARR  u arg, str name[arg]              uint64_t arg; const cp_str *name
 *   KVARR   u arg, (str k, str v)[arg]        uint64_t arg; const cp_str *name_name, *name_value
 * STRARR and KVARR are encoded by hand (the HEADER's argv and environment,
 * cp_header.c): the emitter takes their bytes already encoded, count first.
 * arg is `_` where a kind takes none.
 *
 * ---- Dump formats (fmt): how `dump` prints the value -----------------------
 *   DEC HEX STR UUID API (api name) MEMKIND MEMCLASS COPYFLAGS OP ROUTE ROUTES
 *   LIBKIND REASON; lists: NATIVE (" native=[0x..]"), PY (" py=[..]"),
 *   PROCS (" proc[i]=pid:used"), ARGV (" argv[i]=..."), ENV (" env.K=...").
 */
#ifndef CP_RECORDS_H
#define CP_RECORDS_H

#include <stddef.h>
#include <stdint.h>

#include "cp_varint.h"

/* The value of a UOPT field in a trace written before it existed. */
#define CP_FIELD_ABSENT UINT64_MAX

/* One entry of OOM's process list (a PAIRS field). */
typedef struct cp_oom_proc {
    uint64_t pid, used_bytes;
} cp_oom_proc;
#define CP_PAIR_PROCS_T cp_oom_proc
#define CP_PAIR_PROCS_A pid
#define CP_PAIR_PROCS_B used_bytes

/* ---- the EV prefix of call records --------------------------------------- */
/* api: id announced by API; result: the CUresult returned to the program;
 * ctx, stream: handles (0 when none); dev: -1 when unknown; dur_ns: time in
 * the real driver call; stack: 0 or an id announced by STACK. */
#define CP_EV_FIELDS(F) \
    F(U, api, _, API) \
    F(U, result, _, DEC) \
    F(U, ctx, _, HEX) \
    F(S, dev, _, DEC) \
    F(U, stream, _, HEX) \
    F(U, dur_ns, _, DEC) \
    F(U, stack, _, DEC)

/* ---- the records ----------------------------------------------------------- */
#define CP_RECORDS(R) \
    R(HEADER, 1, header, REC, "wall_ns: CLOCK_REALTIME at file start; root: 1 when this process is the one `cuprobe run` started; exe: /proc/self/exe; argv: /proc/self/cmdline; env: the CUDA/framework/launcher variables that matter; forked: 1 in a forked child that has not exec'd (its image is a copy of the parent's), 0 in an image started by exec; run_id: the run this process belongs to (CUPROBE_RUN_ID, set by `cuprobe run`), 0 outside one") \
    R(THREAD, 2, thread, REC, "announces tid before its first other record") \
    R(MODULE, 3, module, REC, "a mapped ELF file; build_id in hex") \
    R(MODULE_RESET, 4, module_reset, BARE, "forget all modules: a fresh map follows") \
    R(STRING, 5, string, REC, "an interned string") \
    R(STACK, 6, stack, REC, "a call site: native ips and Python frames, both innermost first") \
    R(API, 7, api, REC, "routes: bit 1 << route for each route by which the program obtained this function so far (0 symbol, 1 dlsym, 2 cuGetProcAddress, 3 cuGetProcAddress_v2)") \
    R(DLOPEN, 8, dlopen, REC, "a dlopen of libcuda; lib_kind: 0 not found, 1 driver, 2 toolkit stub, 3 other") \
    R(DRIVER, 9, driver, REC, "driver_version is 0 when cuDriverGetVersion failed; cuDriverGetVersion records an answer only when it differs from the last one it recorded in this file") \
    R(DEVICE, 10, device, REC, "one GPU as the driver reported it") \
    R(CALL, 11, call, EV, "a call with nothing more to say (init, failures of other calls)") \
    R(ALLOC, 12, alloc, EV, "EV's dev is the device holding the memory (for cuMemCreate the requested location's device); for VMM kinds ptr is the physical allocation handle; launches: kernel launches this thread made so far (memory taken while the program works, not at set-up)") \
    R(FREE, 13, free, EV, "size 0 if not known. Written before the driver frees, so a thread handed the same address next is always later in the trace; result is then 0 and a failed free is followed by a CALL with the driver's error. EV's stack: only for a free of an unknown range and of a cuMemAlloc or device cuMemCreate block of 2 MiB or more (cp_free_site_kind), else 0") \
    R(COPY, 14, copy, EV, "launches: kernel launches by this thread since its previous COPY or SYNC") \
    R(MEMSET, 15, memset, EV, "a memset of device memory. EV's stack: only for a failed memset, one into another GPU's memory than the context's, or one on a stream other than the default ones (0, 1, 2), else 0") \
    R(CTX, 16, ctx, EV, "a context created, destroyed, retained, released, reset, made current, pushed or popped") \
    R(STREAM, 17, stream, EV, "a stream created or destroyed, a capture begun or ended") \
    R(VMM, 18, vmm, EV, "an address range reserved or freed, a physical allocation mapped or unmapped, access set") \
    R(POOL, 19, pool, EV, "a memory pool created, destroyed or trimmed, an attribute set, or read at a failed allocation") \
    R(LAUNCH_COUNT, 20, launch_count, REC, "count: launches of func by one thread since that thread's previous LAUNCH_COUNT of func (written by that thread every 4096 of its launches, by any thread before a FRAMEWORK record and at flush points); name: the function's name in the first LAUNCH_COUNT of func from each thread in a file, empty in later ones (and when unknown)") \
    R(XDEV, 21, xdev, EV, "a kernel parameter pointing at memory of another device") \
    R(OOM, 22, oom, EV, "EV of the failed call; procs: the processes on the device (NVML)") \
    R(SYNC, 23, sync, EV, "launches as in COPY") \
    R(FORK, 24, fork, REC, "the parent's side of a fork") \
    R(EXEC, 25, exec, REC, "errno_after: 0 while the exec is attempted; the errno when it failed") \
    R(SIGNAL, 26, signal, REC, "code: si_code; addr: fault address for SEGV/BUS/ILL/FPE, else 0") \
    R(LOST, 27, lost, REC, "records the recorder had to drop, and why") \
    R(LOG, 28, log, REC, "level: 0 error, 1 warning, 2 info, 3 debug") \
    R(FRAMEWORK, 29, framework, REC, "framework companion data (PyTorch, CuPy, JAX)") \
    R(PYFRAME, 30, pyframe, REC, "a Python frame; line 0: no line for that instruction") \
    R(RESOLVE, 31, resolve, REC, "a lookup through cuGetProcAddress or dlsym that failed, asked for the resolver itself, asked for a higher version than any before it (the last such record gives the newest CUDA version a runtime in the process was built for), or a dlsym that handed out a wrapper") \
    R(NOSPACE, 32, nospace, REC, "the file system was full at this record's time (err: 28 ENOSPC, 122 EDQUOT): writing stopped and the program went on untraced; records_dropped records (bytes_dropped bytes before compression) made since the last flush were lost; file_bytes: the trace's length up to that flush. Written into space reserved ahead; only END can follow it, at exit") \
    R(HOSTMEM, 33, hostmem, REC, "the process's host memory, sampled by the writer thread (never a hook) at most every 50 ms and written when a value moved by at least 1 MiB and 1 %, pinned changed, or 1 s passed; tid 0. rss, rss_shared: /proc/self/statm resident and shared pages in bytes; pinned: page-locked host bytes held (cuMemAllocHost, cuMemHostAlloc, cuMemHostRegister, host cuMemCreate), counted from the ALLOC and FREE records written; mem_available: MemAvailable of /proc/meminfo; cg_usage: memory.current (v1 memory.usage_in_bytes) of HOSTINFO's cgroup. A value that could not be read is 0") \
    R(HOSTINFO, 34, hostinfo, REC, "the host's memory limits, after the HEADER and again when one changes; tid 0. mem_total, swap_total: MemTotal, SwapTotal of /proc/meminfo in bytes; cg_limit: the lowest memory.max (v1 memory.limit_in_bytes) of the process's cgroup and its ancestors, 0 when none; cg_path: that cgroup (the process's own when none has a limit), empty when no memory cgroup was found") \
    R(ASYNC_ERROR, 35, async_error, EV, "the first call of the process that returned a sticky error (700, 710, 714-719, 999); EV's stack is where it surfaced; overflow: 1 when launches older than the per-thread rings were in flight too; n_inflight INFLIGHT records follow") \
    R(INFLIGHT, 36, inflight, REC, "a launch issued on the failing context since its last successful context or stream synchronisation, oldest first; launch_tid: the launching thread; stack: the launch's innermost Python frames (taken raw at launch, resolved only now) and its caller, 0 when neither") \
    R(KMSG, 39, kmsg, REC, "the kernel log's lines about the NVIDIA driver (NVRM: Xid events) and PCIe AER errors stamped since the process started, read without blocking when a call first returned a sticky error (700, 710, 714-719, 999) or 214 (CUDA_ERROR_ECC_UNCORRECTABLE), and again, for newer lines, when the trace is flushed or closed after it. trigger: that call's result, 0 for the later reads; source: 1 /dev/kmsg, 2 the file CUPROBE_KMSG names; err: 0, or the errno that kept the log from being read; mono_ns, wall_ns: CLOCK_MONOTONIC and CLOCK_REALTIME at the read; kclock_us: the kernel log's clock at the read (printk's, from the scheduler's statistics), -1 when unknown; text: one line as read (a /dev/kmsg record or a dmesg line); empty in the record that opens a read (always the one at the error, with err set when the log could not be opened; a later read's only when it found lines) and in one that closes a read that failed midway (err) or found more than the 256 lines it writes (lines: how many it found; else 0)") \
    R(FD_LOST, 40, fd_lost, REC, "the program closed the trace file's descriptor (how 1) or put another file at its number (how 2), found at the writer's next write (this record's time, at most a flush interval later): nothing was written to that number, the trace was opened again by its name (new_fd) and goes on without a gap") \
    R(END, 127, end, REC, "records: records of the file before END; dropped: records the recorder had to drop (also announced by LOST)")

#define CP_F_HEADER(F) \
    F(U, pid, _, DEC) \
    F(U, ppid, _, DEC) \
    F(U, wall_ns, _, DEC) \
    F(U, root, _, DEC) \
    F(STR, host, _, STR) \
    F(STR, exe, _, STR) \
    F(STR, shim_version, _, STR) \
    F(STRARR, argv, argc, ARGV) \
    F(KVARR, env, nenv, ENV) \
    F(U, page_size, _, DEC) \
    F(UOPT, forked, _, DEC) \
    F(UOPT, run_id, _, HEX)
#define CP_F_THREAD(F) \
    F(U, os_tid, _, DEC) \
    F(STR, name, _, STR)
#define CP_F_MODULE(F) \
    F(U, base, _, HEX) \
    F(U, size, _, DEC) \
    F(U, file_offset, _, HEX) \
    F(STR, path, _, STR) \
    F(STR, build_id, _, STR)
#define CP_F_MODULE_RESET(F)
#define CP_F_STRING(F) \
    F(U, id, _, DEC) \
    F(STR, text, _, STR)
#define CP_F_STACK(F) \
    F(U, id, _, DEC) \
    F(UARR, ip, n_native, NATIVE) \
    F(UARR, pyframe, n_py, PY)
#define CP_F_API(F) \
    F(U, api_id, _, DEC) \
    F(STR, elf_name, _, STR) \
    F(U, routes, _, ROUTES)
#define CP_F_DLOPEN(F) \
    F(STR, requested, _, STR) \
    F(U, flags, _, HEX) \
    F(U, ok, _, DEC) \
    F(STR, found_path, _, STR) \
    F(STR, error, _, STR) \
    F(U, lib_kind, _, LIBKIND)
#define CP_F_DRIVER(F) \
    F(S, driver_version, _, DEC) \
    F(U, result, _, DEC)
#define CP_F_DEVICE(F) \
    F(U, ordinal, _, DEC) \
    F(STR, name, _, STR) \
    F(BYTES, uuid, 16, UUID) \
    F(U, pci_domain, _, DEC) \
    F(U, pci_bus, _, DEC) \
    F(U, pci_device, _, DEC) \
    F(U, cc_major, _, DEC) \
    F(U, cc_minor, _, DEC) \
    F(U, total_mem, _, DEC) \
    F(U, pageable_access, _, DEC) \
    F(U, uses_host_page_tables, _, DEC) \
    F(U, sm_count, _, DEC)
#define CP_F_CALL(F)
#define CP_F_ALLOC(F) \
    F(U, kind, _, MEMKIND) \
    F(U, ptr, _, HEX) \
    F(U, size, _, DEC) \
    F(U, flags, _, HEX) \
    F(U, pool, _, HEX) \
    F(UOPT, launches, _, DEC)
#define CP_F_FREE(F) \
    F(U, kind, _, MEMKIND) \
    F(U, ptr, _, HEX) \
    F(U, size, _, DEC)
#define CP_F_COPY(F) \
    F(U, bytes, _, DEC) \
    F(U, dst_class, _, MEMCLASS) \
    F(S, dst_dev, _, DEC) \
    F(U, src_class, _, MEMCLASS) \
    F(S, src_dev, _, DEC) \
    F(U, dst_ptr, _, HEX) \
    F(U, src_ptr, _, HEX) \
    F(U, flags, _, COPYFLAGS) \
    F(U, n_batch, _, DEC) \
    F(UOPT, launches, _, DEC)
#define CP_F_MEMSET(F) \
    F(U, dst_ptr, _, HEX) \
    F(U, bytes, _, DEC) \
    F(U, dst_class, _, MEMCLASS) \
    F(S, dst_dev, _, DEC)
#define CP_F_CTX(F) \
    F(U, op, _, OP) \
    F(U, target_ctx, _, HEX) \
    F(S, target_dev, _, DEC) \
    F(U, flags, _, HEX)
#define CP_F_STREAM(F) \
    F(U, op, _, OP) \
    F(U, target_stream, _, HEX) \
    F(U, flags, _, HEX) \
    F(S, priority, _, DEC)
#define CP_F_VMM(F) \
    F(U, op, _, OP) \
    F(U, va, _, HEX) \
    F(U, size, _, DEC) \
    F(U, handle, _, HEX) \
    F(U, loc_type, _, DEC) \
    F(S, loc_id, _, DEC) \
    F(U, offset, _, DEC) \
    F(U, flags, _, HEX)
#define CP_F_POOL(F) \
    F(U, op, _, OP) \
    F(U, pool, _, HEX) \
    F(S, pool_dev, _, DEC) \
    F(U, attr, _, DEC) \
    F(U, value, _, DEC)
#define CP_F_LAUNCH_COUNT(F) \
    F(U, api, _, API) \
    F(U, func, _, HEX) \
    F(U, count, _, DEC) \
    F(STR, name, _, STR)
#define CP_F_XDEV(F) \
    F(U, func, _, HEX) \
    F(U, param_index, _, DEC) \
    F(U, ptr, _, HEX) \
    F(S, ptr_dev, _, DEC) \
    F(U, alloc_base, _, HEX) \
    F(U, alloc_size, _, DEC) \
    F(STR, func_name, _, STR)
#define CP_F_OOM(F) \
    F(U, requested, _, DEC) \
    F(U, free, _, DEC) \
    F(U, total, _, DEC) \
    F(PAIRS, procs, n_procs, PROCS)
#define CP_F_SYNC(F) \
    F(U, op, _, OP) \
    F(UOPT, launches, _, DEC)
#define CP_F_FORK(F) \
    F(U, child_pid, _, DEC)
#define CP_F_EXEC(F) \
    F(STR, path, _, STR) \
    F(S, errno_after, _, DEC)
#define CP_F_SIGNAL(F) \
    F(U, signo, _, DEC) \
    F(S, code, _, DEC) \
    F(U, addr, _, HEX)
#define CP_F_LOST(F) \
    F(U, records_lost, _, DEC) \
    F(STR, why, _, STR)
#define CP_F_LOG(F) \
    F(U, level, _, DEC) \
    F(STR, text, _, STR)
#define CP_F_FRAMEWORK(F) \
    F(STR, kind, _, STR) \
    F(STR, json, _, STR)
#define CP_F_PYFRAME(F) \
    F(U, id, _, DEC) \
    F(U, file_str, _, DEC) \
    F(U, func_str, _, DEC) \
    F(U, line, _, DEC)
#define CP_F_RESOLVE(F) \
    F(STR, symbol, _, STR) \
    F(S, cuda_version, _, DEC) \
    F(U, flags, _, HEX) \
    F(U, result, _, DEC) \
    F(U, status, _, DEC) \
    F(U, route, _, ROUTE) \
    F(U, handed_out, _, DEC)
#define CP_F_NOSPACE(F) \
    F(U, err, _, DEC) \
    F(U, records_dropped, _, DEC) \
    F(U, bytes_dropped, _, DEC) \
    F(U, file_bytes, _, DEC)
#define CP_F_HOSTMEM(F) \
    F(U, rss, _, DEC) \
    F(U, rss_shared, _, DEC) \
    F(U, pinned, _, DEC) \
    F(U, mem_available, _, DEC) \
    F(U, cg_usage, _, DEC)
#define CP_F_HOSTINFO(F) \
    F(U, mem_total, _, DEC) \
    F(U, swap_total, _, DEC) \
    F(U, cg_limit, _, DEC) \
    F(STR, cg_path, _, STR)
#define CP_F_ASYNC_ERROR(F) \
    F(U, n_inflight, _, DEC) \
    F(U, overflow, _, DEC)
#define CP_F_INFLIGHT(F) \
    F(U, launch_tid, _, DEC) \
    F(U, api, _, API) \
    F(U, func, _, HEX) \
    F(STR, name, _, STR) \
    F(U, grid_x, _, DEC) \
    F(U, grid_y, _, DEC) \
    F(U, grid_z, _, DEC) \
    F(U, block_x, _, DEC) \
    F(U, block_y, _, DEC) \
    F(U, block_z, _, DEC) \
    F(U, shmem, _, DEC) \
    F(U, stream, _, HEX) \
    F(U, ctx, _, HEX) \
    F(U, stack, _, DEC)
#define CP_F_KMSG(F) \
    F(U, trigger, _, DEC) \
    F(U, source, _, DEC) \
    F(S, err, _, DEC) \
    F(U, mono_ns, _, DEC) \
    F(U, wall_ns, _, DEC) \
    F(S, kclock_us, _, DEC) \
    F(U, lines, _, DEC) \
    F(STR, text, _, STR)
#define CP_F_FD_LOST(F) \
    F(U, how, _, DEC) \
    F(U, old_fd, _, DEC) \
    F(U, new_fd, _, DEC)
#define CP_F_END(F) \
    F(U, reason, _, REASON) \
    F(S, status, _, DEC) \
    F(U, records, _, DEC) \
    F(U, dropped, _, DEC)

/* ======================== expansions shared by both sides ================= */

/* enum cp_rec_type: CP_REC_HEADER = 1, ... */
#define CP_REC_ENUM_(N, id, l, shape, doc) CP_REC_##N = id,
enum cp_rec_type { CP_RECORDS(CP_REC_ENUM_) };

/* Drop the leading comma of a parameter list built by the F expansions. */
#define CP_DROP1(...) CP_DROP1_(__VA_ARGS__)
#define CP_DROP1_(x, ...) __VA_ARGS__

/* Encoder parameters, one or more per field (leading comma). */
#define CP_ENC_PARAM(k, n, a, fmt) CP_ENC_PARAM_##k(n, a, fmt)
#define CP_ENC_PARAM_U(n, a, fmt) , uint64_t n
#define CP_ENC_PARAM_UOPT(n, a, fmt) , uint64_t n
#define CP_ENC_PARAM_S(n, a, fmt) , int64_t n
#define CP_ENC_PARAM_STR(n, a, fmt) , const char *n, size_t n##_len
#define CP_ENC_PARAM_BYTES(n, a, fmt) , const uint8_t *n
#define CP_ENC_PARAM_UARR(n, a, fmt) , const uint64_t *n, uint64_t a
#define CP_ENC_PARAM_PAIRS(n, a, fmt) , const CP_PAIR_##fmt##_T *n, uint64_t a
#define CP_ENC_PARAM_STRARR(n, a, fmt) , const uint8_t *n##_enc, size_t n##_enc_len
#define CP_ENC_PARAM_KVARR(n, a, fmt) , const uint8_t *n##_enc, size_t n##_enc_len

/* The same names as arguments (to forward them). */
#define CP_ENC_ARG(k, n, a, fmt) CP_ENC_ARG_##k(n, a)
#define CP_ENC_ARG_U(n, a) , n
#define CP_ENC_ARG_UOPT(n, a) , n
#define CP_ENC_ARG_S(n, a) , n
#define CP_ENC_ARG_STR(n, a) , n, n##_len
#define CP_ENC_ARG_BYTES(n, a) , n
#define CP_ENC_ARG_UARR(n, a) , n, a
#define CP_ENC_ARG_PAIRS(n, a) , n, a
#define CP_ENC_ARG_STRARR(n, a) , n##_enc, n##_enc_len
#define CP_ENC_ARG_KVARR(n, a) , n##_enc, n##_enc_len

/* Upper bound of the encoded bytes, as an expression of the parameters. */
#define CP_BOUND_TERM(k, n, a, fmt) CP_BOUND_##k(n, a)
#define CP_BOUND_U(n, a) + CP_VARINT_MAX
#define CP_BOUND_UOPT(n, a) + CP_VARINT_MAX
#define CP_BOUND_S(n, a) + CP_VARINT_MAX
#define CP_BOUND_STR(n, a) + CP_VARINT_MAX + n##_len
#define CP_BOUND_BYTES(n, a) + (a)
#define CP_BOUND_UARR(n, a) + CP_VARINT_MAX * (1 + (size_t)(a))
#define CP_BOUND_PAIRS(n, a) + CP_VARINT_MAX * (1 + 2 * (size_t)(a))
#define CP_BOUND_STRARR(n, a) + n##_enc_len
#define CP_BOUND_KVARR(n, a) + n##_enc_len

/*! CP_REC_BOUND(NAME) : the most bytes record NAME's fields can take (after
 *  ts/tid and, for EV records, the EV prefix), as an expression of the
 *  emitter's parameters (string lengths, counts). */
#define CP_REC_BOUND(N) ((size_t)0 CP_F_##N(CP_BOUND_TERM))

/*! CP_EV_MAX : the most bytes the EV prefix can take. */
#define CP_EV_MAX ((size_t)0 CP_EV_FIELDS(CP_BOUND_TERM))

/* Field writers. */
#define CP_ENC_PUT(k, n, a, fmt) CP_ENC_PUT_##k(n, a, fmt)
#define CP_ENC_PUT_U(n, a, fmt) p = cp_put_u(p, n);
#define CP_ENC_PUT_UOPT(n, a, fmt) p = cp_put_u(p, n);
#define CP_ENC_PUT_S(n, a, fmt) p = cp_put_s(p, n);
#define CP_ENC_PUT_STR(n, a, fmt) p = cp_put_str(p, n, n##_len);
#define CP_ENC_PUT_BYTES(n, a, fmt) memcpy(p, n, a), p += (a);
#define CP_ENC_PUT_UARR(n, a, fmt)              \
    p = cp_put_u(p, a);                         \
    for (uint64_t i_ = 0; i_ < (a); i_++)       \
        p = cp_put_u(p, n[i_]);
#define CP_ENC_PUT_PAIRS(n, a, fmt)                     \
    p = cp_put_u(p, a);                                 \
    for (uint64_t i_ = 0; i_ < (a); i_++) {             \
        p = cp_put_u(p, n[i_].CP_PAIR_##fmt##_A);       \
        p = cp_put_u(p, n[i_].CP_PAIR_##fmt##_B);       \
    }
#define CP_ENC_PUT_STRARR(n, a, fmt) memcpy(p, n##_enc, n##_enc_len), p += n##_enc_len;
#define CP_ENC_PUT_KVARR(n, a, fmt) memcpy(p, n##_enc, n##_enc_len), p += n##_enc_len;

/*! cp_enc_<rec>(p, fields...) : write record <rec>'s fields at p (which has
 *  room for CP_REC_BOUND(NAME) bytes).  @return : the byte after them.
 *  cp_enc_ev(p, api, result, ctx, dev, stream, dur_ns, stack) writes the EV
 *  prefix.  Inline: a hook's record compiles to the cp_put_* calls it used
 *  to spell out by hand. */
#define CP_ENC_FN_(N, id, l, shape, doc)                                     \
    static inline __attribute__((always_inline, unused)) uint8_t *          \
        cp_enc_##l(uint8_t *p CP_F_##N(CP_ENC_PARAM))                       \
    {                                                                       \
        CP_F_##N(CP_ENC_PUT) return p;                                      \
    }
CP_RECORDS(CP_ENC_FN_)

static inline __attribute__((always_inline, unused)) uint8_t *
    cp_enc_ev(uint8_t *p CP_EV_FIELDS(CP_ENC_PARAM))
{
    CP_EV_FIELDS(CP_ENC_PUT) return p;
}

/*! cp_rec_has_ev() : non-zero for the records that start with EV. */
#define CP_HAS_EV_ROW_(N, id, l, shape, doc) CP_HAS_EV_##shape(N)
#define CP_HAS_EV_EV(N) case CP_REC_##N:
#define CP_HAS_EV_REC(N)
#define CP_HAS_EV_BARE(N)
static inline __attribute__((unused)) int cp_rec_has_ev(unsigned type)
{
    switch (type) {
    CP_RECORDS(CP_HAS_EV_ROW_)
        return 1;
    default:
        return 0;
    }
}

#endif /* CP_RECORDS_H */
