/*
 * cp_real.c - real-function lookup (see cp_real.h).
 */
#include <dlfcn.h>
#include <stdatomic.h>

#include "cp_real.h"
#include "cp_wrap.h"

typedef void *(*cp_dlsym_fn)(void *, const char *);
typedef void *(*cp_dlopen_fn)(const char *, int);

/* Read by the assembly trampolines (cp_resolve.c): keep them plain,
 * non-static globals. */
__attribute__((visibility("hidden"), used)) void *cp_real_dlsym_ptr;
__attribute__((visibility("hidden"), used)) void *cp_real_dlopen_ptr;

CP_NO_SANITIZE static void *cp_glibc_sym(const char *name)
{
    /* glibc >= 2.34 names them @GLIBC_2.34; older ones and the x86-64
     * compatibility aliases are @GLIBC_2.2.5, aarch64 @GLIBC_2.17.  dlvsym is
     * not hooked, so this never comes back here. */
    static const char *const vers[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17" };
    for (unsigned i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
        void *p = dlvsym(RTLD_NEXT, name, vers[i]);
        if (p)
            return p;
    }
    return NULL;
}

CP_NO_SANITIZE void cp_real_init(void)
{
    if (!__atomic_load_n(&cp_real_dlsym_ptr, __ATOMIC_ACQUIRE))
        __atomic_store_n(&cp_real_dlsym_ptr, cp_glibc_sym("dlsym"), __ATOMIC_RELEASE);
    if (!__atomic_load_n(&cp_real_dlopen_ptr, __ATOMIC_ACQUIRE))
        __atomic_store_n(&cp_real_dlopen_ptr, cp_glibc_sym("dlopen"), __ATOMIC_RELEASE);
}

void *cp_real_dlsym(void *handle, const char *name)
{
    cp_real_init();
    return ((cp_dlsym_fn)cp_real_dlsym_ptr)(handle, name);
}

void *cp_real_dlopen(const char *file, int flags)
{
    cp_real_init();
    return ((cp_dlopen_fn)cp_real_dlopen_ptr)(file, flags);
}

void *cp_real_in_libcuda(const char *name)
{
    static _Atomic(void *) handle;
    void *h = atomic_load(&handle);
    if (!h) {
        h = cp_real_dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            atomic_store(&handle, h);
    }
    void *p = h ? cp_real_dlsym(h, name) : NULL;
    return p ? p : cp_real_dlsym(RTLD_NEXT, name);
}

void *cp_real(void **slot, const char *name, enum cp_real_from from)
{
    void *p = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (!p) {
        p = from == CP_REAL_DRIVER ? cp_real_in_libcuda(name)
                                   : cp_real_dlsym(RTLD_NEXT, name);
        __atomic_store_n(slot, p, __ATOMIC_RELEASE);
    }
    return p;
}
