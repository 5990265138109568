/*
 * cp_resolve.h - how callers reach the driver, and how cuprobe hands them
 * its wrappers: exported symbols, dlsym on libcuda's handle, and
 * cuGetProcAddress{,_v2}.  Also records the process's attempts to load
 * libcuda.
 */
#ifndef CP_RESOLVE_H
#define CP_RESOLVE_H

/*! cp_resolve_in_libcuda() : the address of the exact ELF symbol `name` in
 *  the loaded libcuda (found by soname, else the next object after the shim).
 *  Never loads libcuda, never calls a hook.  @return : NULL if absent. */
void *cp_resolve_in_libcuda(const char *name);

/*! cp_real_dlsym() : glibc's dlsym, bypassing cuprobe's own.  Relative
 *  lookups (RTLD_NEXT) are relative to the shim: callers use real handles. */
void *cp_real_dlsym(void *handle, const char *name);

/*! cp_api_routes() : the routes (bit 1 << enum cp_route) by which the
 *  wrapper of api id was handed out so far. */
unsigned cp_api_routes(unsigned id);

#endif /* CP_RESOLVE_H */
