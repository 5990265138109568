/*
 * cp_dev.c - a device's identity as the report names it: its ordinal, UUID
 * and PCI address from the DEVICE record (declared in cp_model.h).
 */
#include <stdio.h>

#include "cp_model.h"

const char *cp_dev_uuid(const cp_proc *p, int dev, char *buf, size_t cap)
{
    buf[0] = 0;
    if (dev < 0 || dev >= CP_MAX_DEV || !p->dev[dev].seen)
        return buf;
    const uint8_t *u = p->dev[dev].uuid;
    snprintf(buf, cap,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
    return buf;
}

const char *cp_dev_pci(const cp_proc *p, int dev, char *buf, size_t cap)
{
    buf[0] = 0;
    if (dev < 0 || dev >= CP_MAX_DEV || !p->dev[dev].seen)
        return buf;
    const cp_devinfo *d = &p->dev[dev];
    snprintf(buf, cap, "%04llx:%02llx:%02llx.0", (unsigned long long)d->pci_domain,
             (unsigned long long)d->pci_bus, (unsigned long long)d->pci_device);
    return buf;
}

const char *cp_dev_name(const cp_proc *p, int dev, char *buf, size_t cap)
{
    char u[64], pci[32];
    if (dev < 0) {
        snprintf(buf, cap, "an unknown GPU");
        return buf;
    }
    cp_dev_uuid(p, dev, u, sizeof u);
    cp_dev_pci(p, dev, pci, sizeof pci);
    if (u[0])
        snprintf(buf, cap, "GPU %d (%s, PCI %s)", dev, u, pci);
    else
        snprintf(buf, cap, "GPU %d", dev);
    return buf;
}
