// link: build/analyzer/checks/check_fatal_exc.o build/analyzer/model/cp_fw.o
/*
 * test_fatal_classify.c - fatal-error's reading of an exception message:
 * the CUresult it names (the runtime's text after "CUDA error: ", else a
 * driver name) and the kind that code gives, whatever advice the framework
 * appended: PyTorch ends every CUDA error with words about asynchronous
 * errors and device-side assertions.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cp_curesult.h"
#include "check_fatal_exc.h"
#define CP_UNIT_COUNT
#include "cp_unit.h"

/* What PyTorch 2.8+ appends to every CUDA error (C10_CUDA_CHECK). */
#define TORCH_TAIL "\nCUDA kernel errors might be asynchronously reported at some other API " \
                   "call, so the stacktrace below might be incorrect.\nFor debugging consider " \
                   "passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to " \
                   "enable device-side assertions.\n"

static const struct {
    const char *type, *msg;
    uint64_t code;
    int kind;
} cases[] = {
    { "torch.AcceleratorError", "CUDA error: invalid device ordinal" TORCH_TAIL, 101, CP_EXC_SYNC },
    { "RuntimeError", "CUDA error: no CUDA-capable device is detected" TORCH_TAIL, 100, CP_EXC_SYNC },
    { "RuntimeError", "CUDA error: an illegal memory access was encountered" TORCH_TAIL, 700,
      CP_EXC_ASYNC },
    { "RuntimeError", "CUDA error: device-side assert triggered" TORCH_TAIL, 710, CP_EXC_ASYNC },
    { "RuntimeError", "CUDA error: unspecified launch failure" TORCH_TAIL, 719, CP_EXC_ASYNC },
    { "RuntimeError", "CUDA error: uncorrectable ECC error encountered" TORCH_TAIL, 214,
      CP_EXC_ASYNC },
    { "RuntimeError", "CUDA error: out of memory" TORCH_TAIL, 2, CP_EXC_OOM },
    { "RuntimeError", "CUDA error: CUDA driver version is insufficient for CUDA runtime version"
      TORCH_TAIL, 35, CP_EXC_INIT },
    { "RuntimeError", "CUDA driver error: invalid device ordinal", 101, CP_EXC_SYNC },
    { "CudaAPIError", "[222] Call to cuModuleLoadDataEx results in "
      "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 222, CP_EXC_INIT },
    { "XlaRuntimeError", "INTERNAL: Failed call: CUDA_ERROR_INVALID_DEVICE: invalid device "
      "ordinal", 101, CP_EXC_SYNC },
    { "CUDADriverError", "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
      700, CP_EXC_ASYNC },
    { "RuntimeError", "Caught RuntimeError in DataLoader worker process 0.\nOriginal Traceback "
      "(most recent call last):\n  File \"/w/d.py\", line 9, in __getitem__\n    x = 1\n"
      "RuntimeError: CUDA error: initialization error\n", 3, CP_EXC_WORKER },
    { "RuntimeError", "Expected all tensors to be on the same device, but found at least two "
      "devices, cuda:0 and cpu!", 0, CP_EXC_DEVICE_MISMATCH },
    { "ValueError", "a device-side assert is not what this is", 0, CP_EXC_ASYNC },
    { "ValueError", "bad input", 0, CP_EXC_OTHER },
};

int main(void)
{
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t code = cp_exc_cuda_code(cases[i].msg);
        int kind = cp_exc_classify(cases[i].type, cases[i].msg);
        CHECK(code == cases[i].code);
        CHECK(kind == cases[i].kind);
        if (code != cases[i].code || kind != cases[i].kind)
            printf("  case %zu: code %llu kind %d\n", i, (unsigned long long)code, kind);
    }
    /* The longest text wins; a text must start where the message's does. */
    CHECK(cp_cuerr_of_text("an illegal instruction was encountered") == 715);
    CHECK(cp_cuerr_of_text("an illegal memory access was encountered") == 700);
    CHECK(cp_cuerr_of_text("(an illegal memory access)") == 0);
    CHECK(cp_curesult_of_name("CUDA_ERROR_INVALID_DEVICE: x") == 101);
    CHECK(cp_curesult_of_name("CUDA_ERROR_INVALID_VALUE") == 1);
    CHECK(cp_curesult_of_name("CUDA_SUCCESS") == 0);
    /* Each class holds the codes it is named for, and the sticky ones. */
    CHECK(cp_cuerr_class(101) == CP_CUERR_SYNC_DEVICE);
    CHECK(cp_cuerr_class(222) == CP_CUERR_SYNC_OLD);
    CHECK(cp_cuerr_class(999) == CP_CUERR_ASYNC);
    CHECK(cp_cuerr_class(500) == CP_CUERR_NONE);
    CHECK(cp_cuerr_detail(101) == NULL && cp_cuerr_detail(700) != NULL);
    if (g_fail)
        return 1;
    printf("%zu messages classified: ok\n", sizeof cases / sizeof *cases);
    return 0;
}
