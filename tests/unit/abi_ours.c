/* abi_ours.c - abi_list.h expanded against include/cp_cuda.h. */
#include <stddef.h>
#include "cp_cuda.h"

extern const long abi_ours[];
extern const char *const abi_names[];
extern const int abi_count;

#define ABI_SIZE(t) (long)sizeof(t),
#define ABI_OFF(t, f) (long)offsetof(t, f),
#define ABI_VAL(v) (long)(v),
const long abi_ours[] = {
#include "abi_list.h"
};
#undef ABI_SIZE
#undef ABI_OFF
#undef ABI_VAL
#define ABI_SIZE(t) "sizeof(" #t ")",
#define ABI_OFF(t, f) "offsetof(" #t ", " #f ")",
#define ABI_VAL(v) #v,
const char *const abi_names[] = {
#include "abi_list.h"
};
const int abi_count = sizeof(abi_ours) / sizeof(abi_ours[0]);
