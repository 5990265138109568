// link: build/analyzer/checks/cp_advice.o
/*
 * test_advice.c - the framework advice table (analyzer/checks/cp_advice.c):
 * every topic has a fix for every framework, each framework's fix names
 * that framework's own knob, and the framework is chosen from the module
 * map's bits the way the report does.
 */
#define CP_UNIT_COUNT
#include <string.h>

#include "cp_unit.h"
#include "cp_advice.h"

/* cp_advice_fix() names the framework in the details; the JSON builder is
 * not under test here. */
void cp_jb_ks(cp_jb *b, const char *key, const char *v)
{
    (void)b;
    (void)key;
    (void)v;
}

static int has(int fwk, int topic, const char *word)
{
    return strstr(cp_advice(fwk, topic), word) != NULL;
}

int main(void)
{
    for (int t = 0; t < CP_ADV_N; t++)
        for (int k = 0; k < CP_FWK_N; k++)
            CHECK(cp_advice(k, t) && strlen(cp_advice(k, t)) > 20);
    CHECK(has(CP_FWK_TORCH, CP_ADV_DEVICE, "torch.cuda.set_device"));
    CHECK(has(CP_FWK_TORCH, CP_ADV_FRAG, "PYTORCH_CUDA_ALLOC_CONF"));
    CHECK(has(CP_FWK_JAX, CP_ADV_DEVICE, "CUDA_VISIBLE_DEVICES"));
    CHECK(!has(CP_FWK_JAX, CP_ADV_DEVICE, "torch"));
    CHECK(has(CP_FWK_JAX, CP_ADV_CAPACITY, "XLA_PYTHON_CLIENT_PREALLOCATE"));
    CHECK(has(CP_FWK_JAX, CP_ADV_CAPACITY, "XLA_PYTHON_CLIENT_MEM_FRACTION"));
    CHECK(has(CP_FWK_JAX, CP_ADV_ALL_GPUS, "CUDA_VISIBLE_DEVICES"));
    CHECK(has(CP_FWK_CUPY, CP_ADV_FRAG, "get_default_memory_pool"));
    CHECK(has(CP_FWK_CUPY, CP_ADV_CAPACITY, "set_limit"));
    CHECK(has(CP_FWK_CUDA, CP_ADV_PINNED, "cuMemHostAlloc"));
    for (int t = 0; t < CP_ADV_N; t++) {
        CHECK(!has(CP_FWK_CUDA, t, "torch"));
        CHECK(!has(CP_FWK_CUPY, t, "torch"));
        CHECK(!has(CP_FWK_TORCH, t, "XLA_"));
    }
    CHECK(strcmp(cp_advice(99, CP_ADV_FRAG), cp_advice(CP_FWK_CUDA, CP_ADV_FRAG)) == 0);
    CHECK(strcmp(cp_advice(CP_FWK_TORCH, 99), "") == 0);

    static cp_proc p;
    CHECK(cp_advice_fw(NULL) == CP_FWK_CUDA);
    CHECK(cp_advice_fw(&p) == CP_FWK_CUDA);
    p.fw = CP_FW_CUPY;
    CHECK(cp_advice_fw(&p) == CP_FWK_CUPY);
    p.fw = CP_FW_JAX | CP_FW_CUPY;
    CHECK(cp_advice_fw(&p) == CP_FWK_JAX);
    p.fw = CP_FW_JAX | CP_FW_TORCH;
    CHECK(cp_advice_fw(&p) == CP_FWK_TORCH);
    CHECK(strcmp(cp_advice_fw_name(CP_FWK_JAX), "JAX/XLA") == 0);

    static cp_finding f;
    p.fw = CP_FW_JAX;
    cp_advice_fix(&f, &p, CP_ADV_CAPACITY);
    CHECK(f.fix == cp_advice(CP_FWK_JAX, CP_ADV_CAPACITY));
    if (g_fail)
        return 1;
    puts("advice: ok");
    return 0;
}
