/*
 * doctor_hw.c - layer 1 of `cuprobe doctor`: the hardware as the kernel sees
 * it, read from sysfs and procfs only (no driver call, no root).
 *
 * Checks: NVIDIA display/3D controllers on the PCI bus (vendor 0x10de, class
 * 0x03xxxx), their PCIe link (current against maximum width and speed), the
 * kernel driver each is bound to, the nvidia/nvidia_uvm modules, the kernel
 * module version (/proc/driver/nvidia/version) and the /dev/nvidia* nodes.
 * Roots are injectable (CUPROBE_SYSFS_ROOT, CUPROBE_PROCFS_ROOT,
 * CUPROBE_DEV_ROOT) so tests run on fake trees.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor_int.h"

int cp_dr_read_file(const char *path, char *buf, size_t n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t got;

    buf[0] = '\0';
    if (fd < 0)
        return -errno;
    got = read(fd, buf, n - 1);
    close(fd);
    if (got < 0)
        return -EIO;
    buf[got] = '\0';
    while (got > 0 && (buf[got - 1] == '\n' || buf[got - 1] == ' '))
        buf[--got] = '\0';
    return 0;
}

static unsigned long read_hex(const char *dir, const char *name, int *ok)
{
    char path[PATH_MAX], buf[64];

    cp_dr_fmt(path, sizeof(path), "%s/%s", dir, name);
    *ok = cp_dr_read_file(path, buf, sizeof(buf)) == 0;
    return *ok ? strtoul(buf, NULL, 16) : 0;
}

static void read_link_info(struct cp_dr_pci *p, const char *dir)
{
    char path[PATH_MAX], buf[64];

    cp_dr_fmt(path, sizeof(path), "%s/current_link_width", dir);
    if (cp_dr_read_file(path, buf, sizeof(buf)) == 0)
        p->cur_width = atoi(buf);
    cp_dr_fmt(path, sizeof(path), "%s/max_link_width", dir);
    if (cp_dr_read_file(path, buf, sizeof(buf)) == 0)
        p->max_width = atoi(buf);
    /* "16.0 GT/s PCIe" on recent kernels, "8 GT/s" on older ones. */
    cp_dr_fmt(path, sizeof(path), "%s/current_link_speed", dir);
    if (cp_dr_read_file(path, buf, sizeof(buf)) == 0)
        p->cur_speed = strtod(buf, NULL);
    cp_dr_fmt(path, sizeof(path), "%s/max_link_speed", dir);
    if (cp_dr_read_file(path, buf, sizeof(buf)) == 0)
        p->max_speed = strtod(buf, NULL);
}

static int pci_cmp(const void *a, const void *b)
{
    return strcmp(((const struct cp_dr_pci *)a)->bdf, ((const struct cp_dr_pci *)b)->bdf);
}

/* Fills ctx->pci with the NVIDIA display controllers, in bus id order (the
 * order CUDA_DEVICE_ORDER=PCI_BUS_ID and nvidia-smi use).  @return : the
 * number of PCI devices scanned, or -errno when sysfs is unreadable. */
static int scan_pci(struct cp_dr_ctx *ctx)
{
    char dir[PATH_MAX], path[PATH_MAX], link[PATH_MAX];
    struct dirent *de;
    int scanned = 0;
    DIR *d;

    cp_dr_fmt(dir, sizeof(dir), "%s/bus/pci/devices", ctx->sysfs);
    d = opendir(dir);
    if (!d)
        return -errno;
    while ((de = readdir(d)) && ctx->npci < CP_DR_MAX_PCI) {
        struct cp_dr_pci *p = &ctx->pci[ctx->npci];
        unsigned long vendor, cls;
        ssize_t len;
        int ok;

        if (de->d_name[0] == '.')
            continue;
        scanned++;
        cp_dr_fmt(path, sizeof(path), "%s/%s", dir, de->d_name);
        vendor = read_hex(path, "vendor", &ok);
        if (!ok || vendor != 0x10de)
            continue;
        cls = read_hex(path, "class", &ok);
        /* 0x03: display controllers (VGA 0x0300, 3D 0x0302).  NVIDIA's
         * audio functions and NVSwitches have other classes. */
        if (!ok || (cls >> 16) != 0x03)
            continue;
        memset(p, 0, sizeof(*p));
        p->cuda = -1;
        p->pci_class = (unsigned)cls;
        p->device_id = (unsigned)read_hex(path, "device", &ok);
        if (sscanf(de->d_name, "%x:%x:%x.%x", &p->dom, &p->bus, &p->dev, &p->fn) != 4)
            continue;
        cp_dr_fmt(p->bdf, sizeof(p->bdf), "%04x:%02x:%02x.%x", p->dom, p->bus, p->dev, p->fn);
        cp_dr_fmt(link, sizeof(link), "%s/driver", path);
        len = readlink(link, path, sizeof(path) - 1);
        if (len > 0) {
            path[len] = '\0';
            cp_dr_fmt(p->driver, sizeof(p->driver), "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
        }
        cp_dr_fmt(path, sizeof(path), "%s/%s", dir, de->d_name);
        read_link_info(p, path);
        ctx->npci++;
    }
    closedir(d);
    qsort(ctx->pci, (size_t)ctx->npci, sizeof(ctx->pci[0]), pci_cmp);
    return scanned;
}

int cp_dr_pci_find_bdf(const struct cp_dr_ctx *ctx, unsigned dom, unsigned bus, unsigned dev, unsigned fn)
{
    for (int i = 0; i < ctx->npci; i++)
        if (ctx->pci[i].dom == dom && ctx->pci[i].bus == bus && ctx->pci[i].dev == dev &&
            ctx->pci[i].fn == fn)
            return i;
    return -1;
}

int cp_dr_pci_find(const struct cp_dr_ctx *ctx, const char *busid)
{
    unsigned dom, bus, dev, fn = 0;

    if (sscanf(busid, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) < 3)
        return -1;
    return cp_dr_pci_find_bdf(ctx, dom, bus, dev, fn);
}

void cp_dr_gpu_set(struct cp_dr_ctx *ctx, const char *pci, const char *uuid, int ordinal)
{
    int i = cp_dr_pci_find(ctx, pci);

    if (ordinal >= 0)
        ctx->cuda_probed = true;
    if (i < 0)
        return;
    if (uuid[0] && uuid[0] != '?')
        snprintf(ctx->pci[i].uuid, sizeof(ctx->pci[i].uuid), "%s", uuid);
    if (ordinal >= 0)
        ctx->pci[i].cuda = ordinal;
}

/* The CUDA ordinal of GPU i without the driver's word (layer 3 did not
 * run): CUDA numbers GPUs in bus order when CUDA_DEVICE_ORDER=PCI_BUS_ID
 * (or there is one), then keeps those CUDA_VISIBLE_DEVICES lists, by
 * index or UUID prefix, up to the first entry it cannot resolve.
 * @return : the ordinal, -1 when the mask hides it, -2 when unknown. */
static int cuda_by_order(const struct cp_dr_ctx *ctx, int i)
{
    const char *order = getenv("CUDA_DEVICE_ORDER"), *cvd = getenv("CUDA_VISIBLE_DEVICES");
    char list[256], *tok, *save = NULL;
    int ord = 0;

    if (ctx->npci > 1 && (!order || strcmp(order, "PCI_BUS_ID") != 0))
        return -2;
    if (!cvd)
        return i;
    cp_dr_fmt(list, sizeof(list), "%s", cvd);
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save), ord++) {
        char *end;
        long v = strtol(tok, &end, 10);
        int phys = -1;

        if (end != tok && !*end && v >= 0 && v < ctx->npci)
            phys = (int)v;
        for (int k = 0; phys < 0 && k < ctx->npci && strncmp(tok, "GPU-", 4) == 0; k++)
            if (ctx->pci[k].uuid[0] && strncmp(ctx->pci[k].uuid, tok, strlen(tok)) == 0)
                phys = k;
        if (phys < 0)
            return -1; /* CUDA stops at the first entry it cannot resolve */
        if (phys == i)
            return ord;
    }
    return -1;
}

const char *cp_dr_gpu_name(const struct cp_dr_ctx *ctx, unsigned dom, unsigned bus, unsigned dev, unsigned fn,
                           bool full, char *buf, size_t n)
{
    int i = ctx->log.foreign ? -1 : cp_dr_pci_find_bdf(ctx, dom, bus, dev, fn);
    const char *uuid = i >= 0 ? ctx->pci[i].uuid : "";
    size_t len;

    for (int k = 0; k < ctx->log.nuuid && !uuid[0]; k++)
        if (ctx->log.uuid[k].dom == dom && ctx->log.uuid[k].bus == bus && ctx->log.uuid[k].dev == dev)
            uuid = ctx->log.uuid[k].uuid;
    if (i >= 0)
        snprintf(buf, n, "physical GPU %d (PCI %s", i, ctx->pci[i].bdf);
    else
        snprintf(buf, n, "GPU at PCI %04x:%02x:%02x.%x%s", dom, bus, dev, fn, full ? " (" : "");
    len = strlen(buf);
    if (full && uuid[0])
        len += (size_t)snprintf(buf + len, n - len, "%s%s", i >= 0 ? ", " : "", uuid);
    if (full && i >= 0 && ctx->pci[i].cuda >= 0)
        snprintf(buf + len, n - len, ", CUDA device %d in this process", ctx->pci[i].cuda);
    else if (full && i >= 0 && ctx->cuda_probed)
        snprintf(buf + len, n - len, ", not visible to CUDA in this process");
    else if (full && i >= 0 && cuda_by_order(ctx, i) >= 0)
        snprintf(buf + len, n - len, ", CUDA device %d in this process (by bus order and CUDA_VISIBLE_DEVICES)",
                 cuda_by_order(ctx, i));
    else if (full && i >= 0 && cuda_by_order(ctx, i) == -1)
        snprintf(buf + len, n - len, ", hidden by CUDA_VISIBLE_DEVICES");
    else if (full && i >= 0)
        snprintf(buf + len, n - len, ", CUDA index not probed");
    else if (full && i < 0 && ctx->log.foreign && !uuid[0])
        snprintf(buf + len, n - len, "on the machine that wrote the log");
    else if (full && i < 0 && !ctx->log.foreign)
        /* this machine's log names it, sysfs no longer does: a GPU that
         * fell off the bus leaves the PCI tree */
        snprintf(buf + len, n - len, "%snot on the PCI bus now", uuid[0] ? ", " : "");
    len = strlen(buf);
    if (i >= 0 || full)
        snprintf(buf + len, n - len, ")");
    return buf;
}

static void check_devices(struct cp_dr_ctx *ctx, int scanned)
{
    struct cp_dr_check *c;
    char list[512] = "";

    if (scanned < 0) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_WARN, "pci.devices", "cannot read the PCI bus from sysfs");
        cp_dr_ev(c, "%s/bus/pci/devices: %s; hardware checks skipped, continuing with the driver",
                 ctx->sysfs, strerror(-scanned));
        return;
    }
    ctx->sysfs_ok = true;
    if (ctx->npci == 0) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_FAIL, "pci.devices", "no NVIDIA GPU on the PCI bus");
        cp_dr_ev(c, "%d PCI devices in %s/bus/pci/devices, none with vendor 0x10de and a display class",
                 scanned, ctx->sysfs);
        cp_dr_fix(c, "run on a machine with an NVIDIA GPU (check `lspci -d 10de:`); in a VM or cloud "
                     "instance, choose a GPU instance type or attach the GPU (PCI passthrough)");
        cp_dr_kv_int(c, "count", 0);
        cp_dr_kv_int(c, "pci_scanned", scanned);
        return;
    }
    for (int i = 0; i < ctx->npci; i++) {
        size_t len = strlen(list);

        cp_dr_fmt(list + len, sizeof(list) - len, "%s%s (10de:%04x)", i ? ", " : "", ctx->pci[i].bdf,
                 ctx->pci[i].device_id);
    }
    c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "pci.devices", "%d NVIDIA GPU%s on the PCI bus", ctx->npci,
                  ctx->npci == 1 ? "" : "s");
    cp_dr_ev(c, "%s", list);
    cp_dr_kv_int(c, "count", ctx->npci);
}

static void check_links(struct cp_dr_ctx *ctx)
{
    for (int i = 0; i < ctx->npci; i++) {
        const struct cp_dr_pci *p = &ctx->pci[i];
        enum cp_dr_mark m = CP_DR_OK;
        struct cp_dr_check *c;

        if (!p->max_width || p->max_speed <= 0)
            continue; /* no link attributes: virtual or integrated device */
        if (p->cur_width < p->max_width)
            m = CP_DR_WARN;
        else if (p->cur_speed < p->max_speed)
            m = CP_DR_NOTE;
        if (m == CP_DR_WARN)
            c = cp_dr_add(&ctx->rep, 1, m, "pci.link", "PCIe link of %s degraded to x%d of x%d", p->bdf,
                          p->cur_width, p->max_width);
        else
            c = cp_dr_add(&ctx->rep, 1, m, "pci.link", "PCIe link of %s", p->bdf);
        cp_dr_ev(c, "x%d at %.1f GT/s, max x%d at %.1f GT/s", p->cur_width, p->cur_speed, p->max_width,
                 p->max_speed);
        if (m == CP_DR_WARN)
            cp_dr_fix(c, "host-device copies get at most %d%% of the bandwidth: reseat the card, move it "
                         "to a full x%d slot, or check the riser and BIOS lane bifurcation",
                      100 * p->cur_width / p->max_width, p->max_width);
        else if (m == CP_DR_NOTE)
            cp_dr_ev(c, " (GPUs lower the link speed when idle; this matters only if it stays low under load)");
        cp_dr_kv_str(c, "pci", p->bdf);
        cp_dr_kv_int(c, "cur_width", p->cur_width);
        cp_dr_kv_int(c, "max_width", p->max_width);
        cp_dr_kv_num(c, "cur_speed_gts", p->cur_speed);
        cp_dr_kv_num(c, "max_speed_gts", p->max_speed);
    }
}

static void check_binding(struct cp_dr_ctx *ctx)
{
    int bound = 0;
    struct cp_dr_check *c;
    char other[512] = "";

    for (int i = 0; i < ctx->npci; i++) {
        size_t len = strlen(other);

        if (strcmp(ctx->pci[i].driver, "nvidia") == 0) {
            bound++;
            continue;
        }
        cp_dr_fmt(other + len, sizeof(other) - len, "%s%s %s", len ? ", " : "", ctx->pci[i].bdf,
                 ctx->pci[i].driver[0] ? ctx->pci[i].driver : "has no driver");
        if (ctx->pci[i].driver[0] && len + 1 < sizeof(other))
            strncat(other, " bound", sizeof(other) - strlen(other) - 1);
    }
    if (bound == ctx->npci) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "pci.driver", "%s bound to the nvidia kernel driver",
                      bound == 1 ? "GPU" : "all GPUs");
        cp_dr_ev(c, "%s/bus/pci/devices/*/driver -> nvidia", ctx->sysfs);
        return;
    }
    if (ctx->npci == 1)
        c = cp_dr_add(&ctx->rep, 1, CP_DR_FAIL, "pci.driver", "GPU not bound to the nvidia kernel driver");
    else
        c = cp_dr_add(&ctx->rep, 1, bound ? CP_DR_WARN : CP_DR_FAIL, "pci.driver",
                      "%d of %d GPUs not bound to the nvidia kernel driver", ctx->npci - bound, ctx->npci);
    cp_dr_ev(c, "%s", other);
    if (strstr(other, "nouveau"))
        cp_dr_fix(c, "nouveau (the open-source driver) cannot run CUDA: install the NVIDIA driver, "
                     "blacklist nouveau and reboot");
    else if (strstr(other, "vfio"))
        cp_dr_fix(c, "the GPU is reserved for passthrough to a VM (vfio-pci); unbind it or use it from the VM");
    else
        cp_dr_fix(c, "load the NVIDIA driver (`sudo modprobe nvidia`) or install it; `dmesg | grep -i nvrm` "
                     "shows why it did not bind");
    cp_dr_kv_int(c, "bound", bound);
}

static void read_modules(struct cp_dr_ctx *ctx)
{
    char path[PATH_MAX], line[512];
    FILE *f;

    cp_dr_fmt(path, sizeof(path), "%s/modules", ctx->procfs);
    f = fopen(path, "re");
    if (f) {
        while (fgets(line, sizeof(line), f)) {
            char *sp = strchr(line, ' ');

            if (sp)
                *sp = '\0';
            ctx->mod_nvidia |= strcmp(line, "nvidia") == 0;
            ctx->mod_uvm |= strcmp(line, "nvidia_uvm") == 0;
        }
        fclose(f);
    }
    /* Built-in drivers are not in the modules list but have /sys/module. */
    cp_dr_fmt(path, sizeof(path), "%s/module/nvidia", ctx->sysfs);
    ctx->mod_nvidia |= access(path, F_OK) == 0;
    cp_dr_fmt(path, sizeof(path), "%s/module/nvidia_uvm", ctx->sysfs);
    ctx->mod_uvm |= access(path, F_OK) == 0;
}

/* "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.65.06  Sun ..." or
 * "... Open Kernel Module for x86_64  580.65.06  Release Build ..." */
static void parse_kmod_version(struct cp_dr_ctx *ctx, const char *text)
{
    const char *p = strstr(text, "Kernel Module");

    if (!p)
        return;
    for (p += strlen("Kernel Module"); *p && *p != '\n'; p++) {
        if (*p >= '0' && *p <= '9' && p[-1] == ' ') {
            size_t n = strspn(p, "0123456789.");

            if (n >= sizeof(ctx->kmod_version))
                n = sizeof(ctx->kmod_version) - 1;
            memcpy(ctx->kmod_version, p, n);
            ctx->kmod_version[n] = '\0';
            return;
        }
    }
}

static void check_modules(struct cp_dr_ctx *ctx)
{
    char path[PATH_MAX], text[1024];
    struct cp_dr_check *c;

    read_modules(ctx);
    cp_dr_fmt(path, sizeof(path), "%s/driver/nvidia/version", ctx->procfs);
    if (cp_dr_read_file(path, text, sizeof(text)) == 0)
        parse_kmod_version(ctx, text);
    if (!ctx->mod_nvidia && !ctx->kmod_version[0]) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_FAIL, "kmod.nvidia", "no NVIDIA kernel driver loaded");
        cp_dr_ev(c, "no nvidia module in %s/modules, no %s", ctx->procfs, path);
        cp_dr_fix(c, "install the NVIDIA driver (e.g. `apt install nvidia-driver-580` or the .run "
                     "installer) and `sudo modprobe nvidia`; in a container, start it with the NVIDIA "
                     "container toolkit (`docker run --gpus all`)");
        return;
    }
    c = cp_dr_add(&ctx->rep, 1, ctx->kmod_version[0] ? CP_DR_OK : CP_DR_WARN, "kmod.nvidia",
                  ctx->kmod_version[0] ? "NVIDIA kernel module %s loaded" : "NVIDIA kernel module loaded%s",
                  ctx->kmod_version[0] ? ctx->kmod_version : " but its version is unreadable");
    cp_dr_ev(c, "%s/modules: nvidia%s; %s", ctx->procfs, ctx->mod_uvm ? ", nvidia_uvm" : "", path);
    cp_dr_kv_str(c, "version", ctx->kmod_version);
    cp_dr_kv_raw(c, "nvidia_uvm", ctx->mod_uvm ? "true" : "false");
    if (!ctx->mod_uvm) {
        /* nvidia-modprobe loads it on the first CUDA call, so only warn. */
        c = cp_dr_add(&ctx->rep, 1, CP_DR_WARN, "kmod.nvidia_uvm", "nvidia_uvm module not loaded");
        cp_dr_ev(c, "not in %s/modules; CUDA needs it and loads it on first use through nvidia-modprobe", ctx->procfs);
        cp_dr_fix(c, "`sudo modprobe nvidia_uvm` if cuInit fails with 999 (CUDA_ERROR_UNKNOWN)");
    }
}

static void check_dev_nodes(struct cp_dr_ctx *ctx)
{
    static const char *const nodes[] = {"nvidiactl", "nvidia-uvm", "nvidia0"};
    char path[PATH_MAX], missing[256] = "", denied[256] = "";
    struct cp_dr_check *c;

    if (!ctx->mod_nvidia && !ctx->kmod_version[0])
        return;
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]); i++) {
        char *list = missing;

        cp_dr_fmt(path, sizeof(path), "%s/%s", ctx->devfs, nodes[i]);
        if (access(path, F_OK) == 0) {
            if (access(path, R_OK | W_OK) == 0)
                continue;
            list = denied;
        }
        cp_dr_fmt(list + strlen(list), 256 - strlen(list), "%s%s", list[0] ? ", " : "", path);
    }
    if (!missing[0] && !denied[0]) {
        c = cp_dr_add(&ctx->rep, 1, CP_DR_OK, "dev.nodes", "device nodes present and accessible");
        cp_dr_ev(c, "%s/nvidiactl, %s/nvidia-uvm, %s/nvidia0", ctx->devfs, ctx->devfs, ctx->devfs);
        return;
    }
    c = cp_dr_add(&ctx->rep, 1, CP_DR_WARN, "dev.nodes", "device nodes %s",
                  denied[0] ? "not accessible" : "missing");
    if (missing[0])
        cp_dr_ev(c, "missing: %s%s", missing, denied[0] ? "; " : "");
    if (denied[0])
        cp_dr_ev(c, "no read/write permission: %s", denied);
    cp_dr_fix(c, "%s", denied[0] ? "add the user to the group owning the nodes (often `video`)"
                                 : "the driver creates them on first use (nvidia-modprobe); in a container, "
                                   "pass the GPUs in (`--gpus all`)");
}

/* WSL2 exposes the GPU through /dev/dxg, with no PCI device and no nvidia
 * module inside the VM; the layer 1 checks do not apply there. */
static bool wsl2(struct cp_dr_ctx *ctx)
{
    char path[PATH_MAX];
    struct cp_dr_check *c;

    cp_dr_fmt(path, sizeof(path), "%s/dxg", ctx->devfs);
    if (access(path, F_OK) != 0)
        return false;
    c = cp_dr_add(&ctx->rep, 1, CP_DR_NOTE, "wsl2", "WSL2 GPU paravirtualization");
    cp_dr_ev(c, "%s exists: the GPU and its kernel driver live in the Windows host; hardware checks skipped", path);
    return true;
}

void cp_dr_hw(struct cp_dr_ctx *ctx)
{
    int scanned = scan_pci(ctx);

    if (ctx->npci == 0 && wsl2(ctx))
        return;

    check_devices(ctx, scanned);
    check_links(ctx);
    if (ctx->npci)
        check_binding(ctx);
    check_modules(ctx);
    check_dev_nodes(ctx);
}
