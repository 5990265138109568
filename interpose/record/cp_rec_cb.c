/*
 * cp_rec_cb.c - the callbacks other parts of the shim register with the
 * recorder: those that run when a new trace file starts and those that run
 * before every flush (see cp_rec.h), and the consumer that stands in for the
 * writer until one is set.  cp_rec.c calls them.
 */
#include <errno.h>
#include <stdatomic.h>

#include "cp_rec.h"
#include "cp_rec_int.h"
#include "cp_writer.h"

#define CP_MAX_CALLBACKS 16
#define CP_MAX_FLUSH_HOOKS 8

static void (*g_callbacks[CP_MAX_CALLBACKS])(void);
static _Atomic int g_n_callbacks;
static void (*g_flush_hooks[CP_MAX_FLUSH_HOOKS])(void);
static atomic_int g_n_flush_hooks;
static __thread int t_in_flush_hooks;

void cp_rec_on_new_file(void (*fn)(void))
{
    int i = atomic_fetch_add(&g_n_callbacks, 1);
    if (i < CP_MAX_CALLBACKS)
        g_callbacks[i] = fn;
}

void cp__rec_run_new_file(void)
{
    int n = atomic_load(&g_n_callbacks);
    for (int i = 0; i < n && i < CP_MAX_CALLBACKS; i++)
        if (g_callbacks[i])
            g_callbacks[i]();
}

void cp_rec_on_flush(void (*fn)(void))
{
    int i = atomic_fetch_add(&g_n_flush_hooks, 1);
    if (i < CP_MAX_FLUSH_HOOKS)
        g_flush_hooks[i] = fn;
}

/* Hooks may record, and recording never flushes, but a hook's record could
 * fill a chunk while another flush is waiting: the flag keeps one thread
 * from running them inside themselves. */
void cp__rec_run_flush_hooks(int on)
{
    if (t_in_flush_hooks || !on)
        return;
    t_in_flush_hooks = 1;
    int n = atomic_load(&g_n_flush_hooks);
    for (int i = 0; i < n && i < CP_MAX_FLUSH_HOOKS; i++)
        if (g_flush_hooks[i])
            g_flush_hooks[i]();
    t_in_flush_hooks = 0;
}

/* The recorder's consumer until cp__rec_init() names the writer: nothing
 * starts, nothing is written. */
static int cp_none_start(uint64_t ts) { (void)ts; return -ENODEV; }
static int cp_none_stop(int r, int64_t s, unsigned ms) { (void)r, (void)s, (void)ms; return 0; }
static void cp_none_wait(unsigned ms) { (void)ms; }
static void cp_none_void(void) {}
static int cp_none_emergency(int s, int c, uint64_t a, uint32_t t)
{
    (void)s, (void)c, (void)a, (void)t;
    return -EBUSY;
}
static int cp_none_int(void) { return 0; }
const struct cp__rec_consumer cp__rec_none = {
    .start = cp_none_start,
    .stop = cp_none_stop,
    .flush = cp_none_wait,
    .kick = cp_none_void,
    .help = cp_none_void,
    .emergency = cp_none_emergency,
    .discard_if_empty = cp_none_int,
    .forget = cp_none_void,
    .is_self = cp_none_int,
};
