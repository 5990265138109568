/*
 * cp_doctor_stub.c - weak stand-in for cp_doctor_main() until the real
 * doctor (another file defining it) is linked in; the strong one wins.
 */
#include <stdio.h>

#include "cp_doctor.h"

__attribute__((weak)) int cp_doctor_main(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "doctor: not built yet\n");
    return 2;
}
