/*
 * vmm_handle_denied.c - vmm_handle_retry.c when the program gives up after
 * the refused cuMemCreate: not recovered, so cuda-errors is an error.
 */
#include "vmm_handle_retry.c"
