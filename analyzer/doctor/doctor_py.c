/*
 * doctor_py.c - `cuprobe doctor --python [PY]`: which CUDA the framework was
 * built for and which GPU architectures it carries kernels for.
 *
 * The interpreter runs as a subprocess with a timeout (importing torch can
 * take seconds, and a broken install can hang); it prints "key value" lines:
 *   python <version>
 *   torch <version> | torch_missing <error>
 *   torch_cuda <version|none>
 *   torch_arch <sm_80 sm_90 compute_90 ...>
 *   jax <version> / jax_cuda <major>      (only when torch is missing)
 * The arch list comes from torch._C._cuda_getArchFlags() because
 * torch.cuda.get_arch_list() returns [] whenever CUDA is unusable, which is
 * exactly when doctor is needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor_int.h"

static const char py_script[] =
    "import sys\n"
    "print('python', sys.version.split()[0])\n"
    "try:\n"
    "    import torch\n"
    "except Exception as e:\n"
    "    print('torch_missing', (type(e).__name__ + ': ' + str(e)).splitlines()[0])\n"
    "    try:\n"
    "        import jax, importlib.util as u\n"
    "        print('jax', jax.__version__)\n"
    "        for m in ('jax_cuda13_plugin', 'jax_cuda12_plugin', 'jax_cuda11_plugin'):\n"
    "            if u.find_spec(m):\n"
    "                print('jax_cuda', m[8:10]); break\n"
    "    except Exception:\n"
    "        pass\n"
    "else:\n"
    "    print('torch', torch.__version__)\n"
    "    print('torch_cuda', torch.version.cuda or 'none')\n"
    "    a = ''\n"
    "    try:\n"
    "        a = torch._C._cuda_getArchFlags() or ''\n"
    "    except Exception:\n"
    "        try:\n"
    "            a = ' '.join(torch.cuda.get_arch_list())\n"
    "        except Exception:\n"
    "            pass\n"
    "    print('torch_arch', a)\n";

static void parse_line(struct cp_dr_py *py, char *line)
{
    static const struct { const char *key; size_t off, size; } keys[] = {
        {"python", offsetof(struct cp_dr_py, python), sizeof(((struct cp_dr_py *)0)->python)},
        {"torch", offsetof(struct cp_dr_py, torch), sizeof(((struct cp_dr_py *)0)->torch)},
        {"torch_missing", offsetof(struct cp_dr_py, torch_err), sizeof(((struct cp_dr_py *)0)->torch_err)},
        {"torch_cuda", offsetof(struct cp_dr_py, torch_cuda), sizeof(((struct cp_dr_py *)0)->torch_cuda)},
        {"torch_arch", offsetof(struct cp_dr_py, torch_arch), sizeof(((struct cp_dr_py *)0)->torch_arch)},
        {"jax", offsetof(struct cp_dr_py, jax), sizeof(((struct cp_dr_py *)0)->jax)},
        {"jax_cuda", offsetof(struct cp_dr_py, jax_cuda), sizeof(((struct cp_dr_py *)0)->jax_cuda)},
    };
    char *val = strchr(line, ' ');

    if (val)
        *val++ = '\0';
    else
        val = line + strlen(line);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (strcmp(line, keys[i].key) == 0)
            snprintf((char *)py + keys[i].off, keys[i].size, "%s", val);
}

/* What the interpreter printed: parsed as it comes, and its start kept
 * for the message when it did not answer. */
struct py_out {
    struct cp_dr_py *py;
    char head[256];
    bool answered;
};

static void py_line(void *arg, char *line)
{
    struct py_out *o = arg;
    size_t len = strlen(o->head);

    if (len + 2 < sizeof(o->head))
        snprintf(o->head + len, sizeof(o->head) - len, "%s%s", len ? " " : "", line);
    o->answered |= strncmp(line, "python ", 7) == 0;
    parse_line(o->py, line);
}

void cp_dr_py_probe(struct cp_dr_ctx *ctx)
{
    struct cp_dr_py *py = &ctx->py;
    const char *argv[] = {py->exe, "-c", py_script, NULL};
    struct py_out o = {py, "", false};
    char err[256];
    int rc = cp_dr_run_cmd(argv, ctx->timeout_s, true, py_line, &o, err, sizeof(err));

    if (rc == -ETIMEDOUT)
        snprintf(py->fail, sizeof(py->fail), "%s timed out after %d s", py->exe, ctx->timeout_s);
    else if (rc < 0 || !o.answered)
        snprintf(py->fail, sizeof(py->fail), "%s did not run: %.200s", py->exe, rc < 0 ? err : o.head);
    else
        py->ran = true;
}

/* "13.0" -> 13000, "12.4" -> 12040; 0 when not a version. */
static int cuda_num(const char *s)
{
    int maj = 0, min = 0;

    if (sscanf(s, "%d.%d", &maj, &min) < 1)
        return 0;
    return maj * 1000 + min * 10;
}

/* Does the arch list run on compute capability cc (e.g. 90)?  @return : 2
 * for a native cubin, 1 for PTX only (JIT at load time), 0 for nothing.
 * A cubin sm_XY runs on the same major with minor >= Y ("a"/"f" variants
 * only on the exact or the same family); PTX compute_XY JIT-compiles for
 * any cc >= XY. */
static int arch_support(const char *list, int cc)
{
    char buf[512], *tok, *save = NULL;
    int best = 0;

    snprintf(buf, sizeof(buf), "%s", list);
    for (tok = strtok_r(buf, " ,;", &save); tok; tok = strtok_r(NULL, " ,;", &save)) {
        int v = 0;
        char suffix = '\0';

        if (sscanf(tok, "sm_%d%c", &v, &suffix) >= 1) {
            if (suffix == 'a' ? v == cc : v / 10 == cc / 10 && v <= cc)
                best = 2;
        } else if (sscanf(tok, "compute_%d", &v) == 1 && v <= cc && best < 1) {
            best = 1;
        }
    }
    return best;
}

static void check_arch(struct cp_dr_ctx *ctx, const int *ccs, int n)
{
    struct cp_dr_py *py = &ctx->py;
    struct cp_dr_check *c;

    if (!py->torch_arch[0]) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_NOTE, "python.arch", "torch reports no architecture list");
        return;
    }
    for (int i = 0; i < n; i++) {
        int s = arch_support(py->torch_arch, ccs[i]);

        if (i > 0 && ccs[i] == ccs[i - 1])
            continue;
        if (s == 2)
            c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "python.arch", "torch has kernels for sm_%d", ccs[i]);
        else if (s == 1)
            c = cp_dr_add(&ctx->rep, 3, CP_DR_WARN, "python.arch", "torch has only PTX for sm_%d (JIT-compiled "
                          "at first use)", ccs[i]);
        else
            c = cp_dr_add(&ctx->rep, 3, CP_DR_FAIL, "python.arch", "this build has no kernels for sm_%d", ccs[i]);
        cp_dr_ev(c, "device compute capability %d.%d; torch arch list: %s", ccs[i] / 10, ccs[i] % 10, py->torch_arch);
        if (s == 0)
            cp_dr_fix(c, "install a PyTorch build compiled for sm_%d (a newer release or another CUDA "
                         "variant from https://pytorch.org/get-started/locally/)", ccs[i]);
        cp_dr_kv_int(c, "sm", ccs[i]);
        cp_dr_kv_str(c, "arch_list", py->torch_arch);
    }
}

static void check_cuda_version(struct cp_dr_ctx *ctx, const char *what, int need)
{
    int have = ctx->driver_version;
    struct cp_dr_check *c;

    if (need <= have) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "python.cuda", "%s built for CUDA %d.%d, driver supports %d.%d", what,
                      need / 1000, need % 1000 / 10, have / 1000, have % 1000 / 10);
        return;
    }
    /* Minor version compatibility: a 12.x runtime runs on any 12.y driver
     * except for PTX JIT and features newer than the driver. */
    if (need / 1000 == have / 1000) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_WARN, "python.cuda", "%s built for CUDA %d.%d, driver supports only %d.%d",
                      what, need / 1000, need % 1000 / 10, have / 1000, have % 1000 / 10);
        cp_dr_ev(c, "works through minor version compatibility, but PTX JIT and newer features fail");
        cp_dr_fix(c, "upgrade the driver to R%d or newer", need >= 13000 ? 580 : need >= 12080 ? 570 : 550);
        return;
    }
    c = cp_dr_add(&ctx->rep, 3, CP_DR_FAIL, "python.cuda", "driver too old: %s needs CUDA %d.%d, driver supports %d.%d",
                  what, need / 1000, need % 1000 / 10, have / 1000, have % 1000 / 10);
    cp_dr_ev(c, "cuDriverGetVersion = %d; the runtime reports \"driver version is insufficient\"", have);
    cp_dr_fix(c, "upgrade the NVIDIA driver to one supporting CUDA %d.%d, or install a build for CUDA %d.x "
                 "(e.g. pip install torch --index-url https://download.pytorch.org/whl/cu%d%d)", need / 1000,
              need % 1000 / 10, have / 1000, have / 1000, have % 1000 / 10);
    cp_dr_kv_int(c, "need", need);
    cp_dr_kv_int(c, "driver", have);
}

void cp_dr_py_check(struct cp_dr_ctx *ctx, const int *ccs, int n)
{
    struct cp_dr_py *py = &ctx->py;
    struct cp_dr_check *c;
    char what[128];

    if (!py->asked)
        return;
    if (!py->ran) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_WARN, "python", "python check did not run");
        cp_dr_ev(c, "%s", py->fail);
        return;
    }
    if (!py->torch[0]) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_NOTE, "python.torch", "torch is not installed in %s (python %s)",
                      py->exe, py->python);
        cp_dr_ev(c, "%s", py->torch_err);
        if (py->jax[0]) {
            c = cp_dr_add(&ctx->rep, 3, CP_DR_NOTE, "python.jax", "jax %s, CUDA plugin %s", py->jax,
                          py->jax_cuda[0] ? py->jax_cuda : "none (CPU only)");
            if (py->jax_cuda[0])
                check_cuda_version(ctx, "jax", atoi(py->jax_cuda) * 1000);
        }
        return;
    }
    c = cp_dr_add(&ctx->rep, 3, CP_DR_OK, "python.torch", "torch %s (python %s, %s)", py->torch, py->python, py->exe);
    cp_dr_ev(c, "torch.version.cuda = %s; arch list: %s", py->torch_cuda, py->torch_arch);
    cp_dr_kv_str(c, "torch", py->torch);
    cp_dr_kv_str(c, "cuda", py->torch_cuda);
    cp_dr_kv_str(c, "arch_list", py->torch_arch);
    if (!cuda_num(py->torch_cuda)) {
        c = cp_dr_add(&ctx->rep, 3, CP_DR_FAIL, "python.cuda", "torch %s is a CPU-only build", py->torch);
        cp_dr_ev(c, "torch.version.cuda = %s", py->torch_cuda);
        cp_dr_fix(c, "install a CUDA build of PyTorch (https://pytorch.org/get-started/locally/)");
        return;
    }
    snprintf(what, sizeof(what), "torch %s", py->torch);
    check_cuda_version(ctx, what, cuda_num(py->torch_cuda));
    check_arch(ctx, ccs, n);
}
