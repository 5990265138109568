/*
 * fk_ids.h - who the fake GPUs are: the UUID and PCI bus of physical device
 * phys, shared by the fake driver (fk_device.c) and the fake NVML
 * (fakenvml.c) so that both name the same cards.
 */
#ifndef FK_IDS_H
#define FK_IDS_H

#include <stdio.h>

/* PCI bus of physical device phys (domain 0, device 0, function 0). */
#define FK_PCI_BUS(phys) (0x18 + 0x10 * (phys))

/* Deterministic UUID bytes of physical device phys; byte 0 alone tells
 * devices apart. */
static inline void fk_uuid_bytes(int phys, unsigned char b[16])
{
    for (int k = 0; k < 16; k++)
        b[k] = (unsigned char)((k * 37 + phys * 101 + 0x5c) & 0xff);
    b[0] = (unsigned char)(0xa0 + phys);
}

/* "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" of physical device phys. */
static inline void fk_uuid_text(int phys, char *buf, size_t len)
{
    unsigned char b[16];

    fk_uuid_bytes(phys, b);
    snprintf(buf, len, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

#endif /* FK_IDS_H */
