/*
 * cp_tid.c - the calling thread's kernel id (see cp_tid.h).
 */
#include "cp_tid.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The descriptor's tid offset, or -1: ask the kernel; 0: not looked up. */
static _Atomic long g_off;

static pid_t tid_syscall(void)
{
    return (pid_t)syscall(SYS_gettid);
}

int cp_tid_init(void)
{
    long off = atomic_load_explicit(&g_off, memory_order_acquire);
    if (off)
        return off > 0;
    off = -1;
    /* libthread_db's description of the field: its size in bits, the
     * number of elements, its offset in struct pthread.  (dlvsym: cuprobe
     * hooks dlsym, not dlvsym.) */
    const uint32_t *d = dlvsym(RTLD_DEFAULT, "_thread_db_pthread_tid", "GLIBC_PRIVATE");
    const uint32_t *size = dlvsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread", "GLIBC_PRIVATE");
    if (d && size && d[0] == 8 * sizeof(pid_t) && d[1] == 1 && d[2] > 0 &&
        d[2] % sizeof(pid_t) == 0 && d[2] + sizeof(pid_t) <= *size &&
        *(const pid_t *)((uintptr_t)pthread_self() + d[2]) == tid_syscall())
        off = (long)d[2];
    atomic_store_explicit(&g_off, off, memory_order_release);
    return off > 0;
}

pid_t cp_tid(void)
{
    long off = atomic_load_explicit(&g_off, memory_order_acquire);
    if (__builtin_expect(!off, 0)) {
        cp_tid_init();
        off = atomic_load_explicit(&g_off, memory_order_acquire);
    }
    if (off > 0) {
        pid_t tid = *(const volatile pid_t *)((uintptr_t)pthread_self() + (uintptr_t)off);
        /* Set by the kernel before the thread runs; checked all the same. */
        if (tid > 0)
            return tid;
    }
    return tid_syscall();
}
