/*
 * cp_format.h - how the analyzer writes numbers and codes for people:
 * sizes, durations and CUresult names and meanings.
 */
#ifndef CP_FORMAT_H
#define CP_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/*! cp_fmt_bytes() : "1.50 GiB" into buf.  @return : buf. */
const char *cp_fmt_bytes(uint64_t b, char *buf, size_t cap);

/*! cp_fmt_ns() : "12.3 ms" into buf.  @return : buf. */
const char *cp_fmt_ns(uint64_t ns, char *buf, size_t cap);

/*! cp_result_name() : "CUDA_ERROR_OUT_OF_MEMORY" for a CUresult, or NULL
 *  when unknown. */
const char *cp_result_name(uint64_t code);

/*! cp_result_meaning() : what a CUresult means in a sentence (the shared
 *  table, include/cp_curesult.h), or NULL for codes programs do not meet in
 *  practice (the codes of docs/report.md's cuda-errors list all have one). */
const char *cp_result_meaning(uint64_t code);

#endif /* CP_FORMAT_H */
