// link: build/interpose/callsite/cp_pystack.o build/interpose/callsite/cp_pyintern.o build/interpose/callsite/cp_pysite.o build/interpose/callsite/cp_pystr.o build/interpose/callsite/cp_pylayout.o build/interpose/callsite/cp_itab.o build/interpose/callsite/cp_modules.o build/interpose/callsite/cp_stack.o build/interpose/callsite/cp_scache.o
/*
 * test_pystack_walk.c - the GIL-free Python frame walker against a real
 * interpreter.  The binary loads libpython at run time (dlopen, so the build
 * needs no Python), runs tests/py/walk_cases.py, and that script calls back
 * into C through ctypes - which releases the GIL during the call, exactly
 * like PyTorch - where cp_pystack_walk() runs.  The script compares each
 * walk with CPython's own view of its frames (sys._getframe: file,
 * qualname, f_lineno) and exits non-zero on any difference.
 *
 * On 3.12+ the script registers the code watcher as the companion does
 * (with this binary's cuprobe_py_code_event), so the walks also exercise
 * the call-site memo: it must be hit, give CPython's frames while code
 * objects die and are made at reused addresses, stop when a second
 * interpreter appears, and be off after finalisation.
 *
 * Which Python: $CUPROBE_TEST_PYTHON (an interpreter path), else python3.
 * With CUPROBE_TEST_EXPECT_OFF=1 the interpreter is one the walker must
 * refuse (e.g. 3.10): one log line, no frames, no crash.
 * `test_pystack_walk bench` prints ns per walk / capture at depths 8 and 32.
 * Exit 77 when the interpreter, its shared libpython or ROOT is missing.
 */
#include <dlfcn.h>
#include <limits.h>
#include <unistd.h>

#define CP_UNIT_COUNT
#include "cp_unit.h"
#include "test_stack_fakerec.h"
#include "cp_modules.h"
#include "cp_pysite.h"
#include "cp_pystack.h"
#include "cp_stack.h"

/* Sanitizer builds: CPython itself leaks at exit by design; only our
 * errors matter here. */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

static int g_walks, g_marks, g_with_gil, g_gil_unchecked;
static int (*g_gil_check)(void);    /* PyGILState_Check */
static __thread char t_out[1 << 17];

/* Python: CFUNCTYPE(c_char_p, c_int).  The frames as "file\x1f func\x1f
 * line\x1e" records, innermost first. */
static const char *walk_for_python(int max)
{
    static __thread cp_pyframe_raw f[256];
    int n = cp_pystack_walk(f, max > 256 ? 256 : max);
    size_t o = 0;
    __atomic_add_fetch(&g_walks, 1, __ATOMIC_RELAXED);
    /* The point of it all: ctypes released the GIL for this call. */
    if (g_gil_check && !__atomic_load_n(&g_gil_unchecked, __ATOMIC_RELAXED) && g_gil_check())
        __atomic_add_fetch(&g_with_gil, 1, __ATOMIC_RELAXED);
    t_out[0] = 0;
    for (int i = 0; i < n; i++) {
        int w = snprintf(t_out + o, sizeof(t_out) - o, "%.*s\x1f%.*s\x1f%d\x1e",
                         (int)f[i].file_len, f[i].file, (int)f[i].func_len, f[i].func,
                         f[i].line);
        if (w < 0 || (size_t)w >= sizeof(t_out) - o)
            break;
        o += (size_t)w;
    }
    return t_out;
}

static void *walk_thread(void *arg)
{
    cp_pyframe_raw f[16];
    *(int *)arg = cp_pystack_walk(f, 16);
    return NULL;
}

/* Python: CFUNCTYPE(c_int).  Frames seen by a thread that never ran Python
 * (must be 0, while the calling thread is deep in Python). */
static int walk_in_c_thread(void)
{
    pthread_t t;
    int n = -1;
    pthread_create(&t, NULL, walk_thread, &n);
    pthread_join(t, NULL);
    return n;
}

static void *callback_thread(void *arg)
{
    ((void (*)(void))arg)();
    return NULL;
}

/* Python: CFUNCTYPE(c_int, c_void_p).  Run a Python callback on a thread
 * started by C (ctypes gives it a thread state for the call). */
static int run_in_c_thread(void *fn)
{
    pthread_t t;
    if (pthread_create(&t, NULL, callback_thread, fn))
        return -1;
    pthread_join(t, NULL);
    return 0;
}

/* Python: CFUNCTYPE(None, c_int).  1: end of the script, 2: the atexit
 * case; 3: a second interpreter comes, after which PyGILState_Check()
 * answers 1 whoever holds what (CPython turns its check off). */
static void mark(int what)
{
    if (what == 3) {
        __atomic_store_n(&g_gil_unchecked, 1, __ATOMIC_RELAXED);
        return;
    }
    __atomic_add_fetch(&g_marks, 1, __ATOMIC_RELAXED);
}

/* Python: CFUNCTYPE(c_double, c_int, c_int).  ns per walk (mode 0), per
 * interned capture (mode 1) of the calling thread's frames, per full
 * cp_stack_capture (mode 2: native + Python + stack interning), or per raw
 * snapshot of the 6 innermost frames (mode 3: what a launch costs). */
static double bench(int iters, int mode)
{
    cp_pyframe_raw f[64];
    uint64_t ids[64];
    cp_pyraw raw[6];
    uint64_t t0 = cp_now_ns();
    for (int i = 0; i < iters; i++) {
        if (mode == 0)
            cp_pystack_walk(f, 64);
        else if (mode == 1)
            cp_pystack_capture(ids, 64, NULL, NULL);
        else if (mode == 3)
            cp_pystack_raw(raw, 6);
        else
            cp_stack_capture(0, 1);
    }
    return (double)(cp_now_ns() - t0) / iters;
}

/* Python: CFUNCTYPE(c_int).  1 while the call-site memo is on. */
static int memo_on(void)
{
    return cp_pysite_memo_on();
}

/* Ask the interpreter where its shared library and home are. */
static int python_paths(const char *py, char *lib, char *home)
{
    char cmd[PATH_MAX + 400];
    FILE *f;
    int ok;
    snprintf(cmd, sizeof(cmd),
             "'%s' -c 'import os,sys,sysconfig as s;v=s.get_config_var;"
             "d=v(\"LIBDIR\") or \"\";"
             "c=[os.path.join(d,n) for n in (v(\"INSTSONAME\"),v(\"LDLIBRARY\")) if n];"
             "c=[p for p in c if p.endswith((\".so\",\".so.1.0\",\".so.1\")) and os.path.exists(p)];"
             "print(c[0] if c else \"-\");print(sys.base_prefix)' 2>/dev/null",
             py);
    f = popen(cmd, "r");
    if (!f)
        return -1;
    ok = fgets(lib, PATH_MAX, f) && fgets(home, PATH_MAX, f);
    pclose(f);
    if (!ok)
        return -1;
    lib[strcspn(lib, "\n")] = 0;
    home[strcspn(home, "\n")] = 0;
    return strcmp(lib, "-") ? 0 : -1;
}

/* An interpreter the walker refuses: exactly one log line, and a walk from
 * inside running Python code returns nothing. */
static int expect_off(void *h, const char *home)
{
    void (*init)(int) = (void (*)(int))dlsym(h, "Py_InitializeEx");
    int (*run)(const char *) = (int (*)(const char *))dlsym(h, "PyRun_SimpleString");
    char code[512];
    if (!init || !run)
        return 77;
    CHECK(cp_pystack_status() == -1 && g_fr_logs == 1);
    setenv("PYTHONHOME", home, 1);
    init(0);
    snprintf(code, sizeof(code),
             "import ctypes\n"
             "def f():\n"
             "    return ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int)(%lu)(16)\n"
             "assert f() == b'', f()\n",
             (unsigned long)(uintptr_t)walk_for_python);
    CHECK(run(code) == 0);
    CHECK(g_walks == 1 && g_fr_logs == 1);
    if (g_fail)
        return 1;
    printf("unsupported interpreter refused cleanly\n");
    return 0;
}

int main(int argc, char **argv)
{
    const char *py = getenv("CUPROBE_TEST_PYTHON") ? getenv("CUPROBE_TEST_PYTHON") : "python3";
    const char *root = getenv("ROOT") ? getenv("ROOT") : ".";
    int do_bench = argc > 1 && strcmp(argv[1], "bench") == 0;
    char lib[PATH_MAX], home[PATH_MAX], script[PATH_MAX], code[4 * PATH_MAX];
    cp_pyframe_raw f[4];
    struct cp_pysite_stats st;
    void *h;
    void (*init)(int);
    int (*run)(const char *);
    int (*fin)(void);

    snprintf(script, sizeof(script), "%s/tests/py/walk_cases.py", root);
    if (access(script, R_OK) != 0) {
        printf("%s not found (set ROOT)\n", script);
        return 77;
    }
    if (python_paths(py, lib, home) != 0) {
        printf("no shared libpython for %s\n", py);
        return 77;
    }
    /* No interpreter in the process yet: nothing, and no crash. */
    CHECK(cp_pystack_walk(f, 4) == 0 && cp_pystack_status() == 0);
    h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
    if (!h) {
        printf("dlopen %s: %s\n", lib, dlerror());
        return 77;
    }
    /* A real capture syncs the module map after a load; that is what tells
     * the walker to look for the interpreter again. */
    cp_modules_sync();
    /* Loaded, not initialised: the layout is chosen, but no frames. */
    CHECK(cp_pystack_walk(f, 4) == 0);
    printf("%s: %s, status %d, version %#lx\n", py, lib, cp_pystack_status(),
           cp_pystack_version());
    if (getenv("CUPROBE_TEST_EXPECT_OFF"))
        return expect_off(h, home);
    if (cp_pystack_status() != 1) {
        printf("FAIL: this CPython is not supported by the walker\n");
        return 1;
    }
    init = (void (*)(int))dlsym(h, "Py_InitializeEx");
    run = (int (*)(const char *))dlsym(h, "PyRun_SimpleString");
    fin = (int (*)(void))dlsym(h, "Py_FinalizeEx");
    if (!init || !run || !fin)
        return 77;
    g_gil_check = (int (*)(void))dlsym(h, "PyGILState_Check");
    setenv("PYTHONHOME", home, 1);
    setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
    init(0);
    snprintf(code, sizeof(code),
             "import builtins, runpy\n"
             "builtins.CP_ADDR = dict(walk=%lu, walk_c_thread=%lu, run_c_thread=%lu, "
             "mark=%lu, bench=%lu, code_event=%lu, code_watch=%lu, memo=%lu)\n"
             "builtins.CP_BENCH = %d\n"
             "builtins.CP_ROOT = '%s'\n"
             "runpy.run_path('%s', run_name='__main__')\n",
             (unsigned long)(uintptr_t)walk_for_python, (unsigned long)(uintptr_t)walk_in_c_thread,
             (unsigned long)(uintptr_t)run_in_c_thread, (unsigned long)(uintptr_t)mark,
             (unsigned long)(uintptr_t)bench, (unsigned long)(uintptr_t)cuprobe_py_code_event,
             (unsigned long)(uintptr_t)cuprobe_py_code_watch, (unsigned long)(uintptr_t)memo_on,
             do_bench, root, script);
    CHECK(run(code) == 0);
    /* Finalisation runs the atexit case (it must still see its frames). */
    CHECK(fin() == 0);
    CHECK(cp_pystack_walk(f, 4) == 0);  /* after Py_FinalizeEx: nothing */
    CHECK(!cp_pysite_memo_on());        /* stopped at exit, for good */
    cp_pysite_stats(&st);
    printf("call sites: %llu hits without validation, %llu validations\n",
           (unsigned long long)st.memo_hits, (unsigned long long)st.validations);
    CHECK((st.memo_hits > 0) == (cp_pystack_version() >= 0x030c0000));
    if (!do_bench) {
        printf("%d walks, %d marks\n", g_walks, g_marks);
        CHECK(g_walks >= 20);
        CHECK(g_marks == 2);    /* end of the script, and the atexit case */
        CHECK(g_gil_check && g_with_gil == 0);
    }
    if (g_fail) {
        printf("%d checks failed\n", g_fail);
        return 1;
    }
    printf("python walker tests passed\n");
    return 0;
}
