/*
 * cp_real.h - the shim's one way to find a real function: the definition a
 * hooked name would have had without cuprobe.  Driver functions the wrappers
 * forward to (cp_real_fn() in cp_wrap.h, a table indexed by API id) fall
 * back to it; driver functions cuprobe calls itself (queries) and the libc
 * and loader functions it interposes (exit, fork, exec, sigaction, dlsym,
 * dlopen) use it directly.  It never calls a hook and never loads libcuda.
 */
#ifndef CP_REAL_H
#define CP_REAL_H

/* Where a real function is looked up. */
enum cp_real_from {
    CP_REAL_NEXT = 0,     /* the next object after the shim (RTLD_NEXT): libc */
    CP_REAL_DRIVER = 1,   /* the exact ELF symbol in the loaded libcuda */
};

/*! cp_real() : the real `name` from `from`, resolved once into *slot (a
 *  static void * of the caller, zero at start).  Thread-safe, lock-free.
 *  @return : the address, or NULL when it does not exist (yet: a driver
 *  function is looked up again while libcuda is not loaded). */
void *cp_real(void **slot, const char *name, enum cp_real_from from);

/*! cp_real_in_libcuda() : the address of the exact ELF symbol `name` in the
 *  loaded libcuda (found by soname, else the next object after the shim),
 *  uncached.  @return : NULL if absent. */
void *cp_real_in_libcuda(const char *name);

/*! cp_real_dlsym() / cp_real_dlopen() : glibc's dlsym and dlopen, bypassing
 *  cuprobe's own.  Relative lookups (RTLD_NEXT) are relative to the shim:
 *  callers use real handles. */
void *cp_real_dlsym(void *handle, const char *name);
void *cp_real_dlopen(const char *file, int flags);

/*! cp_real_init() : find glibc's dlsym and dlopen (idempotent; the dlsym and
 *  dlopen trampolines jump through cp_real_dlsym_ptr / cp_real_dlopen_ptr). */
void cp_real_init(void);

#endif /* CP_REAL_H */
