#!/bin/bash
# tests/gpu/host_clock.sh OUTDIR - what a clock read costs on this host, one
# thread in a loop (issue 16: the shim reads the counter twice per timed
# call): rdtsc, rdtscp, lfence+rdtsc, clock_gettime(CLOCK_MONOTONIC) and
# CLOCK_MONOTONIC_COARSE; the median of 9 batches of 2 M reads each, and
# the same with a second thread spinning on the next CPU (a busy neighbour,
# as the writer thread is).  Needs gcc on the host.
OUT=${1:-${OUT:-clock-out}}; mkdir -p "$OUT" || exit 1
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cat >"$T/c.c" <<'C'
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>
#define N 2000000
static volatile uint64_t sink;
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static uint64_t r_tsc(void) { return __rdtsc(); }
static uint64_t r_tscp(void) { unsigned a; return __rdtscp(&a); }
static uint64_t r_lf(void) { _mm_lfence(); return __rdtsc(); }
static uint64_t r_mono(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return (uint64_t)t.tv_nsec; }
static uint64_t r_coarse(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC_COARSE, &t); return (uint64_t)t.tv_nsec; }
static double one(uint64_t (*f)(void))
{
    double b[9];
    for (int k = 0; k < 9; k++) {
        double t0 = now(); uint64_t s = 0;
        for (int i = 0; i < N; i++) s += f();
        sink = s; b[k] = (now() - t0) / N;
    }
    qsort(b, 9, sizeof b[0], cmp);
    return b[4];
}
static volatile int stop;
static void *spin(void *a) { (void)a; while (!stop) sink++; return NULL; }
int main(int argc, char **argv)
{
    struct { const char *n; uint64_t (*f)(void); } m[] = {
        {"rdtsc", r_tsc}, {"rdtscp", r_tscp}, {"lfence_rdtsc", r_lf},
        {"clock_gettime_monotonic", r_mono}, {"clock_gettime_coarse", r_coarse}};
    pthread_t t;
    int busy = argc > 1;
    if (busy) pthread_create(&t, NULL, spin, NULL);
    for (unsigned i = 0; i < sizeof m / sizeof m[0]; i++)
        printf("%-26s %6.2f ns%s\n", m[i].n, one(m[i].f), busy ? " (a thread spinning beside)" : "");
    if (busy) { stop = 1; pthread_join(t, NULL); }
    return 0;
}
C
gcc -O2 -pthread -o "$T/c" "$T/c.c" || { echo "skip: no gcc here" | tee "$OUT/clock.txt"; exit 0; }
{ cat /sys/devices/system/clocksource/clocksource0/current_clocksource
  grep -m1 'model name' /proc/cpuinfo; grep -m1 -o 'constant_tsc\|tsc_known_freq' /proc/cpuinfo | sort -u | tr '\n' ' '; echo
  taskset -c 4 "$T/c"; taskset -c 4,5 "$T/c" busy; } >"$OUT/clock.txt" 2>&1
cat "$OUT/clock.txt"
