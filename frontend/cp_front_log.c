/*
 * cp_front_log.c - the front end's own messages: "cuprobe: ..." on stderr,
 * warnings silenced by CUPROBE_LOG=0 as the shim's are.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cp_front.h"

int cp_front_log(void)
{
    const char *s = getenv("CUPROBE_LOG");
    return s && *s >= '0' && *s <= '3' && !s[1] ? *s - '0' : 1;
}

void cp_front_warn(const char *fmt, ...)
{
    if (cp_front_log() < 1)
        return;
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    fprintf(stderr, "cuprobe: %s\n", buf);
}
