/*
 * cp_modules.h - the module map: which file each executable mapping comes
 * from, so that raw instruction pointers in CP_REC_STACK can be symbolized
 * offline (CP_REC_MODULE_RESET + one CP_REC_MODULE per executable PT_LOAD).
 */
#ifndef CP_MODULES_H
#define CP_MODULES_H

#include <stdint.h>

/*! cp_modules_sync() : make sure the current trace file holds the current
 *  module map: writes it when none was written into this file yet, or when
 *  the loader's dlpi_adds/dlpi_subs counters moved since the last one.
 *  Call after unwinding and before writing a stack that uses the IPs.  Cost
 *  when nothing changed: one dl_iterate_phdr step.
 *  @return : 0, or -ENOMEM / -EIO when the map could not be written. */
int cp_modules_sync(void);

/*! cp_modules_adds() : the loader's dlpi_adds counter as of the last map
 *  written (0 before the first): a cheap "was a library loaded since"
 *  signal for code that looks symbols up lazily (the Python walker).  */
uint64_t cp_modules_adds(void);

/*! cp_modules_new_file() : a new trace file was started: write the map into
 *  it now (cp_rec_on_new_file callback; also forgets what was written). */
void cp_modules_new_file(void);

/*! cp_modules_atfork_child() : reset the module lock in a forked child. */
void cp_modules_atfork_child(void);

#endif /* CP_MODULES_H */
