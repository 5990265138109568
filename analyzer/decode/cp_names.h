/*
 * cp_names.h - printable names of the trace format's enums (cp_trace.h),
 * never NULL.
 */
#ifndef CP_NAMES_H
#define CP_NAMES_H

#include <stddef.h>
#include <stdint.h>

/*! cp_rec_type_name() : "HEADER", "ALLOC", ...; "UNKNOWN" otherwise. */
const char *cp_rec_type_name(unsigned type);
/*! cp_mem_class_name() : "device", "pinned", ... ; "?" when unknown. */
const char *cp_mem_class_name(uint64_t c);
/*! cp_mem_kind_name() : "device", "async", "pool", ... */
const char *cp_mem_kind_name(uint64_t k);
/*! cp_op_name() : the op enum of record `type` (CTX, STREAM, VMM, POOL, SYNC). */
const char *cp_op_name(unsigned type, uint64_t op);
/*! cp_route_name(), cp_libkind_name(), cp_end_reason_name() : enum names. */
const char *cp_route_name(uint64_t r);
const char *cp_libkind_name(uint64_t k);
const char *cp_end_reason_name(uint64_t r);
/*! cp_copy_flags_str() : "async|2d|..." for enum cp_copy_flags, "0" if none. */
const char *cp_copy_flags_str(uint64_t f, char *buf, size_t cap);

#endif /* CP_NAMES_H */
