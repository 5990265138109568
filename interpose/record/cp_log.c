/*
 * cp_log.c - cp_log(): the shim's log lines, on stderr and in the trace.
 *
 * The trace side is a sink the recorder registers (cp_log_set_trace), so
 * that the recorder, which logs its own troubles, and the log, which
 * records into the trace, do not call each other.
 */
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "cp_env.h"
#include "cp_io.h"
#include "cp_rec.h"

static int (*g_may_trace)(void);
static void (*g_put_trace)(int level, const char *msg, size_t len);

void cp_log_set_trace(int (*may)(void), void (*put)(int level, const char *msg, size_t len))
{
    g_put_trace = put;
    __atomic_store_n(&g_may_trace, may, __ATOMIC_RELEASE);
}

void cp_log(int level, const char *fmt, ...)
{
    static const char *const names[] = {"error", "warning", "info", "debug"};
    if (level < 0)
        level = 0;
    if (level > 3)
        level = 3;
    int to_stderr = level <= cp_config()->log_level;
    /* The trace keeps errors, warnings and info; debug only when asked. */
    int (*may)(void) = __atomic_load_n(&g_may_trace, __ATOMIC_ACQUIRE);
    int to_trace = (level <= 2 || to_stderr) && may && may();
    if (!to_stderr && !to_trace)
        return;

    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    size_t len = (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1;

    if (to_stderr) {
        char line[1100];
        int m = snprintf(line, sizeof line, "[cuprobe %d] %s: %.*s\n",
                         (int)getpid(), names[level], (int)len, msg);
        if (m > 0)
            cp__write_all(2, line, (size_t)m < sizeof line ? (size_t)m : sizeof line - 1);
    }
    if (to_trace)
        g_put_trace(level, msg, len);
}
