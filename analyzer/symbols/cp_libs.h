/*
 * cp_libs.h - the libraries the analyzer knows by name, in one table
 * (cp_libs.c): which CUDA libraries and frameworks the environment section
 * names, whose caching allocator or library holds memory allocated from
 * inside it (the leak check, the timeline's holders), and which modules
 * are never a call site (the symbolizer's module classes).  Every use asks
 * cp_lib_find() with the role it cares about.
 */
#ifndef CP_LIBS_H
#define CP_LIBS_H

/* Frameworks with a caching allocator, recognised from the module map. */
enum cp_fw {
    CP_FW_TORCH = 1,
    CP_FW_JAX = 2,
    CP_FW_CUPY = 4,
};

/* What a known library is to the analyzer: bits of cp_known_lib.roles. */
enum cp_lib_role {
    CP_LIB_ENV = 1,         /* named in the environment section; with fw set,
                             * loading it means the process runs that
                             * framework on the GPU (cp_proc.fw) */
    CP_LIB_ALLOC = 2,       /* part of fw's caching allocator: memory allocated
                             * from inside it is held by the allocator */
    CP_LIB_HOLDS = 4,       /* a CUDA library: memory allocated from inside it
                             * is the library's (workspaces, buffers) */
    CP_LIB_INTERNAL = 8,    /* never a call site: the frames that name who
                             * made a call skip it */
};

typedef struct cp_known_lib {
    const char *needle;     /* the module's file name starts with it, or
                             * (in_path) its path contains it */
    const char *name;       /* short name for the report */
    int in_path;
    unsigned fw;            /* enum cp_fw it belongs to, 0 for none */
    unsigned roles;         /* enum cp_lib_role bits */
} cp_known_lib;

/*! cp_lib_find() : the first library of the table that has one of the role
 *  bits `roles` and that the module at `path` is.
 *  @return : its entry, or NULL when no such library matches path. */
const cp_known_lib *cp_lib_find(const char *path, unsigned roles);

#endif /* CP_LIBS_H */
