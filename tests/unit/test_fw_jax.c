// link: build/analyzer/model/cp_fw_jax.o build/analyzer/model/cp_fw.o
/*
 * test_fw_jax.c - the companion's JAX records as the analyzer reads them
 * (analyzer/model/cp_fw_jax.c): the request and device in XLA's
 * out-of-memory texts as jaxlib 0.4-0.7 words them, a jax.oom record's
 * fields, which device's pool failed, and where a sample was taken.
 */
#define CP_UNIT_COUNT
#include <string.h>

#include "cp_unit.h"
#include "cp_fw_jax.h"

static const struct {
    const char *msg;
    uint64_t request;
    int64_t ordinal;
} texts[] = {
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 4770354232 bytes.\\n"
      "BufferAssignment OOM Debugging.", 4770354232ull, -1 },
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 6291456 bytes.", 6291456, -1 },
    { "RESOURCE_EXHAUSTED: Failed to allocate request for 2.99GiB (3206250496B) on device "
      "ordinal 0", 3206250496ull, 0 },
    { "RESOURCE_EXHAUSTED: Failed to allocate request for 176.00MiB (184549376B) on device "
      "ordinal 3", 184549376, 3 },
    { "INTERNAL: Failed call: CUDA_ERROR_INVALID_DEVICE", 0, -1 },
    /* jaxlib 0.7's BFC allocator on an H200: XLA's rounded size */
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 26.21GiB with allocator "
      "GPU_0_bfc on device 0. [executable_name='jit_broadcast_in_dim'] "
      "[tf-allocator-allocation-error='']", 28142773207ull, 0 },
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 512.0KiB with allocator "
      "GPU_1_bfc on device 1.", 524288, 1 },
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 100B.", 100, -1 },
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate 3.5XiB.", 0, -1 },
    { "RESOURCE_EXHAUSTED: Out of memory while trying to allocate bytes.", 0, -1 },
};

static const char oom_rec[] =
    "{\"v\":1,\"jax_version\":\"0.7.1\",\"hook\":\"exit\",\"oom_index\":1,"
    "\"type\":\"jaxlib.xla_extension.XlaRuntimeError\","
    "\"message\":\"RESOURCE_EXHAUSTED: Out of memory while trying to allocate 209715200 "
    "bytes.\\nBufferAssignment OOM Debugging.\","
    "\"frames\":[{\"file\":\"/w/train.py\",\"line\":40,\"func\":\"<module>\",\"user\":true},"
    "{\"file\":\"/w/train.py\",\"line\":12,\"func\":\"step\",\"user\":true},"
    "{\"file\":\"/sp/jax/_src/api.py\",\"line\":9,\"func\":\"f\",\"user\":false}],"
    "\"user_frame\":1,\"env\":{\"XLA_PYTHON_CLIENT_MEM_FRACTION\":\".8\","
    "\"XLA_PYTHON_CLIENT_PREALLOCATE\":\"true\"},"
    "\"devices\":[{\"backend\":\"cuda\",\"id\":0,\"local_hardware_id\":2,"
    "\"bytes_in_use\":1000,\"peak_bytes_in_use\":2000,\"bytes_limit\":5000,"
    "\"largest_free_block_bytes\":300,\"pool_bytes\":5000,\"num_allocs\":7},"
    "{\"backend\":\"cuda\",\"id\":1,\"local_hardware_id\":3,\"bytes_in_use\":4900,"
    "\"bytes_limit\":5000}]}";

/* A jax.periodic sample's place: a frame without a line is left out. */
static const char at_rec[] =
    "{\"v\":1,\"tick\":0,\"at\":{\"thread\":\"MainThread\",\"frames\":["
    "{\"file\":\"/w/flax_train.py\",\"line\":51,\"func\":\"<module>\"},"
    "{\"file\":\"/w/x.py\",\"func\":\"f\"},"
    "{\"file\":\"/w/run.py\",\"line\":7,\"func\":\"main\"}]},"
    "\"devices\":[{\"id\":0,\"bytes_in_use\":100}]}";

static void test_at(void)
{
    cp_jax_at at;
    cp_jv v = { at_rec, sizeof at_rec - 1 };
    CHECK(cp_jax_at_parse(v, &at) == 2);
    CHECK(strcmp(at.file[0], "/w/flax_train.py") == 0 && at.line[0] == 51);
    CHECK(strcmp(at.func[0], "<module>") == 0);
    CHECK(strcmp(at.file[1], "/w/run.py") == 0 && at.line[1] == 7);
    cp_jv none = { "{\"v\":1,\"devices\":[]}", 20 };
    CHECK(cp_jax_at_parse(none, &at) == 0 && at.n == 0);
}

int main(void)
{
    test_at();
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        int64_t ord = 42;
        CHECK(cp_jax_request(texts[i].msg, &ord) == texts[i].request);
        CHECK(ord == texts[i].ordinal);
    }
    cp_jax_oom o;
    CHECK(cp_jax_oom_parse(oom_rec, sizeof oom_rec - 1, &o) == 0);
    CHECK(o.request == 209715200 && o.ordinal == -1);
    CHECK(strcmp(o.line, "RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
                         "209715200 bytes.") == 0);
    CHECK(strcmp(o.hook, "exit") == 0 && strcmp(o.version, "0.7.1") == 0);
    CHECK(strcmp(o.user_file, "/w/train.py") == 0 && o.user_line == 12);
    CHECK(strcmp(o.user_func, "step") == 0);
    CHECK(strcmp(o.fraction, ".8") == 0);
    CHECK(strcmp(o.fraction_var, "XLA_PYTHON_CLIENT_MEM_FRACTION") == 0);
    CHECK(strcmp(o.preallocate, "true") == 0 && o.allocator[0] == 0);
    CHECK(o.n_dev == 2 && o.dev[0].hw == 2 && o.dev[0].limit == 5000);
    CHECK(o.dev[0].have_free && o.dev[0].largest_free == 300 && o.dev[0].have_pool);
    CHECK(!o.dev[1].have_free && !o.dev[1].have_pool && o.dev[1].have_limit);
    /* No ordinal named: the device with the least room under its limit. */
    CHECK(cp_jax_oom_device(&o) == 1);
    o.ordinal = 2;              /* named by the message: its CUDA ordinal */
    CHECK(cp_jax_oom_device(&o) == 0);
    CHECK(cp_jax_oom_parse("{\"v\":1}", 7, &o) == -1);
    return g_fail ? 1 : 0;
}
