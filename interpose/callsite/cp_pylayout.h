/*
 * cp_pylayout.h - where CPython keeps the fields the frame walker reads, per
 * supported version.  Internal to cp_pystack.c; exposed so that
 * tests/unit/test_pystack_layout.c can check every number against offsetof()
 * on the real headers of each version (the shim itself needs no Python
 * headers to build).
 */
#ifndef CP_PYLAYOUT_H
#define CP_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* Byte offsets; -1 = not present in this version. */
struct cp_pylayout {
    const char *name;               /* "3.11" */
    unsigned long version;          /* 0x030b0000: major.minor it is for */
    /* PyThreadState: 3.11/3.12 reach the frame through tstate->cframe (a
     * _PyCFrame on the C stack), 3.13 holds it directly. */
    int ts_cframe;
    int cframe_current_frame;
    int ts_current_frame;
    int ts_thread_id;               /* unsigned long: pthread_self() of its thread */
    /* _PyInterpreterFrame */
    int fr_code;                    /* f_code (3.11, 3.12) / f_executable (3.13) */
    int fr_previous;
    int fr_instr;                   /* prev_instr (3.11, 3.12) / instr_ptr (3.13) */
    int fr_owner;                   /* char */
    int owner_generator;            /* FRAME_OWNED_BY_GENERATOR */
    int owner_cstack;               /* FRAME_OWNED_BY_CSTACK, -1 before 3.12 */
    /* PyCodeObject (a PyVarObject: ob_size counts 2-byte code units) */
    int co_size;
    int co_filename;
    int co_qualname;
    int co_firstlineno;             /* int */
    int co_linetable;               /* bytes */
    int co_firsttraceable;          /* int, -1 when not published (3.13) */
    int co_code;                    /* co_code_adaptive */
    /* objects */
    int ob_type;
    int bytes_size;                 /* PyVarObject ob_size */
    int bytes_data;                 /* ob_sval */
    int uni_length;                 /* PyASCIIObject.length (code points) */
    int uni_hash;                   /* PyASCIIObject.hash, -1 = not computed */
    int uni_state;                  /* 32-bit bit field word */
    int uni_ascii_data;             /* sizeof(PyASCIIObject) */
    int uni_compact_data;           /* sizeof(PyCompactUnicodeObject) */
};

/* PyASCIIObject.state bits, the same in 3.11-3.13 (checked by the test):
 * interned:2, kind:3, compact:1, ascii:1. */
#define CP_PY_STATE_KIND_SHIFT 2
#define CP_PY_STATE_KIND_MASK 7u
#define CP_PY_STATE_COMPACT (1u << 5)
#define CP_PY_STATE_ASCII (1u << 6)

extern const struct cp_pylayout cp_pylayout_311;
extern const struct cp_pylayout cp_pylayout_312;

/* Where 3.13's _Py_DebugOffsets (at the start of _PyRuntime) keeps the
 * offsets we need: byte positions of its uint64_t members.  The struct is
 * stable within a minor version only, so this table is for 3.13.x. */
struct cp_pydbg_fields {
    int cookie, version, free_threaded;
    int ts_current_frame, ts_thread_id;
    int fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_owner;
    int co_size, co_filename, co_qualname, co_linetable, co_firstlineno, co_code_adaptive;
    int ob_type;
    int tuple_ob_size;
    int bytes_ob_size, bytes_ob_sval;
    int uni_state, uni_length, uni_asciiobject_size;
};

extern const struct cp_pydbg_fields cp_pydbg_313;

/*! cp_pylayout_select() : the layout for the running interpreter.
 *  `py_version` is Py_Version (PY_VERSION_HEX); `runtime` is &_PyRuntime
 *  (only read for 3.13 and later, may be NULL otherwise).  For 3.13 the
 *  layout is built into *scratch from the interpreter's debug offsets.
 *  @return : the layout, or NULL with a one-line reason in why. */
const struct cp_pylayout *cp_pylayout_select(unsigned long py_version, const void *runtime,
                                             struct cp_pylayout *scratch, char *why,
                                             size_t why_len);

#endif /* CP_PYLAYOUT_H */
