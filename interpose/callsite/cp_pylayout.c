/*
 * cp_pylayout.c - CPython layouts for the frame walker (see cp_pylayout.h).
 *
 * 3.11 and 3.12: hard-coded from the internal headers (pycore_frame.h,
 * cpython/code.h, cpython/pystate.h, cpython/unicodeobject.h) and checked
 * field by field by tests/unit/test_pystack_layout.c against offsetof() on
 * Debian's 3.11.2 and pyenv's 3.11.7 / 3.12.1 headers (and on the GPU
 * machine's 3.12.3 when its headers are installed).  Patch releases do not
 * move these fields; pre-releases might, so only final releases are taken.
 *
 * 3.13: the interpreter publishes the offsets for debuggers in
 * _PyRuntime.debug_offsets; we only need to know where each offset sits in
 * that struct, which is fixed for a minor version.  The few facts it does
 * not publish (owner enum values, the hash field right after length, the
 * compact-unicode header size) are checked by the same test on 3.13 headers.
 */
#include "cp_pylayout.h"

#include <stdio.h>
#include <string.h>

const struct cp_pylayout cp_pylayout_311 = {
    .name = "3.11", .version = 0x030b0000,
    .ts_cframe = 56, .cframe_current_frame = 8, .ts_current_frame = -1, .ts_thread_id = 152,
    .fr_code = 32, .fr_previous = 48, .fr_instr = 56, .fr_owner = 69,
    .owner_generator = 1, .owner_cstack = -1,
    .co_size = 16, .co_filename = 112, .co_qualname = 128, .co_firstlineno = 72,
    .co_linetable = 136, .co_firsttraceable = 168, .co_code = 184,
    .ob_type = 8, .bytes_size = 16, .bytes_data = 32,
    .uni_length = 16, .uni_hash = 24, .uni_state = 32, .uni_ascii_data = 48,
    .uni_compact_data = 72,
};

const struct cp_pylayout cp_pylayout_312 = {
    .name = "3.12", .version = 0x030c0000,
    .ts_cframe = 56, .cframe_current_frame = 0, .ts_current_frame = -1, .ts_thread_id = 136,
    .fr_code = 0, .fr_previous = 8, .fr_instr = 56, .fr_owner = 70,
    .owner_generator = 1, .owner_cstack = 3,
    .co_size = 16, .co_filename = 112, .co_qualname = 128, .co_firstlineno = 68,
    .co_linetable = 136, .co_firsttraceable = 176, .co_code = 192,
    .ob_type = 8, .bytes_size = 16, .bytes_data = 32,
    .uni_length = 16, .uni_hash = 24, .uni_state = 32, .uni_ascii_data = 40,
    .uni_compact_data = 56,
};

/* Byte positions in 3.13's _Py_DebugOffsets (cookie[8], version,
 * free_threaded, then per-struct groups that each start with "size"). */
const struct cp_pydbg_fields cp_pydbg_313 = {
    .cookie = 0, .version = 8, .free_threaded = 16,
    .ts_current_frame = 184, .ts_thread_id = 192,
    .fr_size = 224, .fr_previous = 232, .fr_executable = 240, .fr_instr_ptr = 248,
    .fr_owner = 264,
    .co_size = 272, .co_filename = 280, .co_qualname = 296, .co_linetable = 304,
    .co_firstlineno = 312, .co_code_adaptive = 344,
    .ob_type = 360,
    .tuple_ob_size = 416,
    .bytes_ob_size = 520, .bytes_ob_sval = 528,
    .uni_state = 544, .uni_length = 552, .uni_asciiobject_size = 560,
};

static uint64_t dbg_u64(const void *runtime, int at)
{
    uint64_t v;
    memcpy(&v, (const char *)runtime + at, sizeof(v));
    return v;
}

/* One published offset, checked for sanity: a debugger struct that does not
 * look like 3.13's must not be trusted.  @return : 0, or -1. */
static int dbg_off(const void *runtime, int at, uint64_t limit, int *out)
{
    uint64_t v = dbg_u64(runtime, at);
    if (v >= limit)
        return -1;
    *out = (int)v;
    return 0;
}

static const struct cp_pylayout *layout_from_debug_offsets(unsigned long py_version,
                                                           const void *runtime,
                                                           struct cp_pylayout *l, char *why,
                                                           size_t why_len)
{
    const struct cp_pydbg_fields *d = &cp_pydbg_313;
    uint64_t fr_size, co_size;
    int bad = 0;

    if (!runtime) {
        snprintf(why, why_len, "_PyRuntime not found");
        return NULL;
    }
    if (memcmp((const char *)runtime + d->cookie, "xdebugpy", 8) != 0) {
        snprintf(why, why_len, "_PyRuntime has no debug offsets cookie");
        return NULL;
    }
    if (dbg_u64(runtime, d->version) != py_version) {
        snprintf(why, why_len, "debug offsets are for version %#llx",
                 (unsigned long long)dbg_u64(runtime, d->version));
        return NULL;
    }
    if (dbg_u64(runtime, d->free_threaded)) {
        snprintf(why, why_len, "free-threaded builds are not supported");
        return NULL;
    }
    memset(l, 0, sizeof(*l));
    l->name = "3.13";
    l->version = 0x030d0000;
    l->ts_cframe = -1;
    l->cframe_current_frame = -1;
    l->owner_generator = 1;
    l->owner_cstack = 3;
    l->co_firsttraceable = -1;
    fr_size = dbg_u64(runtime, d->fr_size);
    co_size = dbg_u64(runtime, d->co_size);
    bad |= fr_size > 4096 || co_size > 4096;
    bad |= dbg_off(runtime, d->ts_current_frame, 65536, &l->ts_current_frame);
    bad |= dbg_off(runtime, d->ts_thread_id, 65536, &l->ts_thread_id);
    bad |= dbg_off(runtime, d->fr_executable, fr_size, &l->fr_code);
    bad |= dbg_off(runtime, d->fr_previous, fr_size, &l->fr_previous);
    bad |= dbg_off(runtime, d->fr_instr_ptr, fr_size, &l->fr_instr);
    bad |= dbg_off(runtime, d->fr_owner, fr_size, &l->fr_owner);
    bad |= dbg_off(runtime, d->co_filename, co_size, &l->co_filename);
    bad |= dbg_off(runtime, d->co_qualname, co_size, &l->co_qualname);
    bad |= dbg_off(runtime, d->co_linetable, co_size, &l->co_linetable);
    bad |= dbg_off(runtime, d->co_firstlineno, co_size, &l->co_firstlineno);
    bad |= dbg_off(runtime, d->co_code_adaptive, co_size + 1, &l->co_code);
    bad |= dbg_off(runtime, d->ob_type, 64, &l->ob_type);
    bad |= dbg_off(runtime, d->tuple_ob_size, 64, &l->co_size);
    bad |= dbg_off(runtime, d->bytes_ob_size, 64, &l->bytes_size);
    bad |= dbg_off(runtime, d->bytes_ob_sval, 128, &l->bytes_data);
    bad |= dbg_off(runtime, d->uni_state, 128, &l->uni_state);
    bad |= dbg_off(runtime, d->uni_length, 128, &l->uni_length);
    bad |= dbg_off(runtime, d->uni_asciiobject_size, 128, &l->uni_ascii_data);
    if (bad || l->ob_type != 8) {
        snprintf(why, why_len, "debug offsets look wrong");
        return NULL;
    }
    /* Not published: the hash follows length, and PyCompactUnicodeObject
     * adds utf8_length and utf8 to PyASCIIObject (checked by the test). */
    l->uni_hash = l->uni_length + 8;
    l->uni_compact_data = l->uni_ascii_data + 16;
    return l;
}

const struct cp_pylayout *cp_pylayout_select(unsigned long py_version, const void *runtime,
                                             struct cp_pylayout *scratch, char *why,
                                             size_t why_len)
{
    unsigned long minor = py_version & 0xffff0000ul;
    unsigned level = (unsigned)(py_version >> 4) & 0xf;

    if (level != 0xf) {
        snprintf(why, why_len, "pre-release interpreters are not supported");
        return NULL;
    }
    switch (minor) {
    case 0x030b0000:
        return &cp_pylayout_311;
    case 0x030c0000:
        return &cp_pylayout_312;
    case 0x030d0000:
        return layout_from_debug_offsets(py_version, runtime, scratch, why, why_len);
    default:
        /* 3.14 changed f_executable into a tagged stack reference and the
         * debug offsets struct; add it together with a test that runs it. */
        snprintf(why, why_len, "only 3.11, 3.12 and 3.13 are supported");
        return NULL;
    }
}
