/*
 * cp_sym.h - call sites for the report: the module map and interned stacks
 * of one traced process (CP_REC_MODULE, CP_REC_STACK, CP_REC_PYFRAME), and
 * symbolization of native frames with elfutils' libdwfl (function, file,
 * line, demangled), done lazily and only for the sites a report prints.
 *
 * A stack's native frames are tied to the module map that was current when
 * the stack was recorded, so a later dlclose/dlopen at the same address
 * cannot change what an old stack means.  ELF files are opened once per
 * path for the whole run (several traces share libraries).
 */
#ifndef CP_SYM_H
#define CP_SYM_H

#include <stddef.h>
#include <stdint.h>

#include "cp_libs.h"
#include "cp_map.h"

/* Module classes: what a frame in it says about who made the call. */
enum cp_mod_class {
    CP_MODC_USER = 0,       /* the program or a library it chose */
    CP_MODC_INTERNAL = 1,   /* cuprobe, libcuda, libcudart, libtorch/c10, the
                             * Python interpreter, libc: never a call site
                             * (CP_LIB_INTERNAL in cp_libs.c) */
};

typedef struct cp_module {
    uint64_t base, size, file_offset;
    const char *path;       /* interned, never freed before cp_sym_shutdown */
    const char *build_id;   /* hex, "" if none */
    int mclass;             /* enum cp_mod_class */
    int elf;                /* index+1 into the global ELF cache, 0 = not opened */
} cp_module;

typedef struct cp_frame {
    uint32_t mod;           /* index+1 into cp_stacks.mods, 0 = no module */
    uint64_t ip;
} cp_frame;

typedef struct cp_pyframe {
    const char *file, *func;    /* interned */
    uint64_t line;
    int user;                   /* not site-packages / stdlib / cuprobe */
} cp_pyframe;

typedef struct cp_stack {
    uint32_t n_native, n_py;
    cp_frame *native;           /* innermost first */
    uint64_t *py;               /* pyframe ids, innermost first */
    const char *label;          /* cached site label (interned), or NULL */
    const char *label_all;      /* the same with --all-frames */
} cp_stack;

/* One process's tables. */
typedef struct cp_stacks {
    cp_module *mods;
    size_t n_mods, cap_mods;
    cp_map mod_index;           /* hash(path,base,off) -> index+1 */
    uint32_t *cur;              /* current map: module indices sorted by base */
    size_t n_cur, cap_cur;
    int cur_dirty;
    cp_map stacks;              /* id -> cp_stack */
    cp_map pyframes;            /* id -> cp_pyframe */
    cp_map *presym;             /* read back from a summary: cp_presym_key -> cp_symres
                                 * (no ELF file is opened); NULL otherwise */
} cp_stacks;

/* The key of a frame of module index+1 mod at file offset off in a presym
 * map (offsets of real modules stay far below 2^44). */
static inline uint64_t cp_presym_key(uint32_t mod, uint64_t off)
{
    return ((uint64_t)mod << 44) ^ off;
}

/* A symbolized native frame. */
typedef struct cp_symres {
    const char *func;           /* demangled function, or NULL */
    const char *file;           /* source file, or NULL */
    unsigned line;
    const char *module;         /* module path, or NULL */
    uint64_t offset;            /* file offset of ip inside module */
} cp_symres;

/*! cp_sym_config() : symbolize (1, default) or show module+offset only (0,
 *  --no-symbolize: deterministic output, no file access).  all_frames keeps
 *  library and internal Python frames in site labels (--all-frames). */
void cp_sym_config(int symbolize, int all_frames);

/*! cp_sym_intern() : a copy of s[0..n) that lives until cp_sym_shutdown().
 *  @return : the string, or NULL when out of memory. */
const char *cp_sym_intern(const char *s, size_t n);

/*! cp_sym_shutdown() : close every ELF and free interned strings. */
void cp_sym_shutdown(void);

/*! cp_stacks_init() / cp_stacks_free() : one process's tables. */
void cp_stacks_init(cp_stacks *s);
void cp_stacks_free(cp_stacks *s);

/*! cp_stacks_module() : a CP_REC_MODULE record joins the current map.
 *  @return : 0 or -ENOMEM. */
int cp_stacks_module(cp_stacks *s, uint64_t base, uint64_t size, uint64_t file_offset,
                     const char *path, size_t path_len, const char *bid, size_t bid_len);

/*! cp_stacks_module_reset() : CP_REC_MODULE_RESET: the current map is
 *  emptied (stacks already recorded keep their modules). */
void cp_stacks_module_reset(cp_stacks *s);

/*! cp_stacks_pyframe() : CP_REC_PYFRAME with its strings resolved.
 *  @return : 0 or -ENOMEM. */
int cp_stacks_pyframe(cp_stacks *s, uint64_t id, const char *file, const char *func,
                      uint64_t line);

/*! cp_stacks_add() : CP_REC_STACK: resolve each ip against the current
 *  module map and keep the stack under id.  @return : 0 or -ENOMEM. */
int cp_stacks_add(cp_stacks *s, uint64_t id, uint64_t n_native, const uint64_t *ip,
                  uint64_t n_py, const uint64_t *py);

/*! cp_stacks_get() : @return : stack id, or NULL (id 0 or never announced). */
const cp_stack *cp_stacks_get(const cp_stacks *s, uint64_t id);

/*! cp_stacks_has_lib() : non-zero when any frame of stack id lies in a
 *  known library (cp_libs.h) with one of the role bits `roles`. */
int cp_stacks_has_lib(const cp_stacks *s, uint64_t id, unsigned roles);

/*! cp_sym_native() : symbolize frame f of process s into *out (strings stay
 *  valid until cp_sym_shutdown). */
void cp_sym_native(const cp_stacks *s, const cp_frame *f, cp_symres *out);

/*! cp_site_label() : the one-line call site of stack id used to group
 *  findings: the innermost Python frame of the user's own code, else the
 *  innermost Python frame, else the innermost native frame outside
 *  internal modules, else the innermost native frame.  "file:line (func)"
 *  or "func (file:line)" or "module+0xoff".
 *  @return : an interned string, "(no call site recorded)" when none. */
const char *cp_site_label(cp_stacks *s, uint64_t id);

/*! cp_site_label_as() : cp_site_label() with all_frames given, whatever
 *  cp_sym_config() said (a summary keeps both labels). */
const char *cp_site_label_as(cp_stacks *s, uint64_t id, int all_frames);

/*! cp_py_user() : 1 when a Python source file is the program's own: not
 *  an installed package (site-packages, dist-packages), not the standard
 *  library, not cuprobe's companion, not "<...>" code. */
int cp_py_user(const char *file);

/*! cp_module_class_of() : enum cp_mod_class for a path. */
int cp_module_class_of(const char *path);

#endif /* CP_SYM_H */
