/*
 * pylayout_probe.c - compiled by tests/unit/test_pystack_layout.c against
 * one CPython's internal headers (cc -I<include/python3.X>); prints
 * "key value" lines with the real offsets, which the test compares with
 * interpose/callsite/cp_pylayout.c.  Not part of any build: it needs Python headers.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define OFF(key, type, field) printf("%s %zu\n", key, offsetof(type, field))

int main(void)
{
    PyASCIIObject a;
    unsigned int raw;

    printf("version %lu\n", (unsigned long)PY_VERSION_HEX);
#if PY_VERSION_HEX >= 0x030b0000
#if PY_VERSION_HEX < 0x030d0000
    OFF("ts_cframe", PyThreadState, cframe);
    OFF("cframe_current_frame", _PyCFrame, current_frame);
    OFF("fr_code", _PyInterpreterFrame, f_code);
    OFF("fr_instr", _PyInterpreterFrame, prev_instr);
#else
    OFF("ts_current_frame", PyThreadState, current_frame);
    OFF("fr_code", _PyInterpreterFrame, f_executable);
    OFF("fr_instr", _PyInterpreterFrame, instr_ptr);
#endif
    OFF("ts_thread_id", PyThreadState, thread_id);
    OFF("fr_previous", _PyInterpreterFrame, previous);
    OFF("fr_owner", _PyInterpreterFrame, owner);
    printf("owner_generator %d\n", (int)FRAME_OWNED_BY_GENERATOR);
#if PY_VERSION_HEX >= 0x030c0000
    printf("owner_cstack %d\n", (int)FRAME_OWNED_BY_CSTACK);
#else
    printf("owner_cstack -1\n");
#endif
    OFF("co_size", PyVarObject, ob_size);
    OFF("co_filename", PyCodeObject, co_filename);
    OFF("co_qualname", PyCodeObject, co_qualname);
    OFF("co_firstlineno", PyCodeObject, co_firstlineno);
    OFF("co_linetable", PyCodeObject, co_linetable);
    OFF("co_firsttraceable", PyCodeObject, _co_firsttraceable);
    OFF("co_code", PyCodeObject, co_code_adaptive);
    printf("codeunit_size %zu\n", sizeof(_Py_CODEUNIT));
    OFF("ob_type", PyObject, ob_type);
    OFF("bytes_size", PyVarObject, ob_size);
    OFF("bytes_data", PyBytesObject, ob_sval);
    OFF("uni_length", PyASCIIObject, length);
    OFF("uni_hash", PyASCIIObject, hash);
    OFF("uni_state", PyASCIIObject, state);
    printf("uni_ascii_data %zu\n", sizeof(PyASCIIObject));
    printf("uni_compact_data %zu\n", sizeof(PyCompactUnicodeObject));
    /* The bit-field positions, read back from a raw word. */
    memset(&a, 0, sizeof(a));
    a.state.kind = 7;
    memcpy(&raw, &a.state, sizeof(raw));
    printf("state_kind_bits %u\n", raw);
    memset(&a, 0, sizeof(a));
    a.state.compact = 1;
    memcpy(&raw, &a.state, sizeof(raw));
    printf("state_compact_bit %u\n", raw);
    memset(&a, 0, sizeof(a));
    a.state.ascii = 1;
    memcpy(&raw, &a.state, sizeof(raw));
    printf("state_ascii_bit %u\n", raw);
#endif
#if PY_VERSION_HEX >= 0x030d0000
    OFF("dbg_cookie", _Py_DebugOffsets, cookie);
    OFF("dbg_version", _Py_DebugOffsets, version);
    OFF("dbg_free_threaded", _Py_DebugOffsets, free_threaded);
    OFF("dbg_ts_current_frame", _Py_DebugOffsets, thread_state.current_frame);
    OFF("dbg_ts_thread_id", _Py_DebugOffsets, thread_state.thread_id);
    OFF("dbg_fr_size", _Py_DebugOffsets, interpreter_frame.size);
    OFF("dbg_fr_previous", _Py_DebugOffsets, interpreter_frame.previous);
    OFF("dbg_fr_executable", _Py_DebugOffsets, interpreter_frame.executable);
    OFF("dbg_fr_instr_ptr", _Py_DebugOffsets, interpreter_frame.instr_ptr);
    OFF("dbg_fr_owner", _Py_DebugOffsets, interpreter_frame.owner);
    OFF("dbg_co_size", _Py_DebugOffsets, code_object.size);
    OFF("dbg_co_filename", _Py_DebugOffsets, code_object.filename);
    OFF("dbg_co_qualname", _Py_DebugOffsets, code_object.qualname);
    OFF("dbg_co_linetable", _Py_DebugOffsets, code_object.linetable);
    OFF("dbg_co_firstlineno", _Py_DebugOffsets, code_object.firstlineno);
    OFF("dbg_co_code_adaptive", _Py_DebugOffsets, code_object.co_code_adaptive);
    OFF("dbg_ob_type", _Py_DebugOffsets, pyobject.ob_type);
    OFF("dbg_tuple_ob_size", _Py_DebugOffsets, tuple_object.ob_size);
    OFF("dbg_bytes_ob_size", _Py_DebugOffsets, bytes_object.ob_size);
    OFF("dbg_bytes_ob_sval", _Py_DebugOffsets, bytes_object.ob_sval);
    OFF("dbg_uni_state", _Py_DebugOffsets, unicode_object.state);
    OFF("dbg_uni_length", _Py_DebugOffsets, unicode_object.length);
    OFF("dbg_uni_asciiobject_size", _Py_DebugOffsets, unicode_object.asciiobject_size);
    OFF("runtime_debug_offsets", _PyRuntimeState, debug_offsets);
    printf("fr_sizeof %zu\n", sizeof(_PyInterpreterFrame));
    printf("co_sizeof %zu\n", sizeof(PyCodeObject));
#endif
    return 0;
}
