/*
 * hangcuda.c - a libcuda.so.1 whose cuInit misbehaves, for the doctor
 * timeout test (tests/sh/doctor_timeout.sh builds it; not part of `make`).
 * HANGCUDA_MODE=hang (default): cuInit never returns; =crash: it segfaults.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cuInit(unsigned int flags);
int cuDriverGetVersion(int *v);
int cuDeviceGetCount(int *n);
int cuDeviceGet(int *d, int ord);
int cuDeviceGetName(char *name, int len, int dev);
int cuDeviceTotalMem_v2(size_t *bytes, int dev);
int cuDeviceGetAttribute(int *v, int attr, int dev);

int cuInit(unsigned int flags)
{
    const char *mode = getenv("HANGCUDA_MODE");

    (void)flags;
    if (mode && strcmp(mode, "crash") == 0)
        raise(SIGSEGV);
    for (;;)
        pause();
}

int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 0; return 0; }
int cuDeviceGet(int *d, int ord) { *d = ord; return 0; }
int cuDeviceGetName(char *name, int len, int dev) { (void)dev; strncpy(name, "hang", (size_t)len); return 0; }
int cuDeviceTotalMem_v2(size_t *bytes, int dev) { (void)dev; *bytes = 0; return 0; }
int cuDeviceGetAttribute(int *v, int attr, int dev) { (void)attr; (void)dev; *v = 0; return 0; }
