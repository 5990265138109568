/*
 * test_kmsg.c - the kernel-log parsers of include/cp_kmsg.h on the line
 * shapes of the log sources (/dev/kmsg, dmesg with -T, -r or -x, journalctl,
 * syslog) and on the Xid and AER lines of several driver and kernel
 * versions; and the Xid table of include/cp_xid.h.
 */
#define CP_UNIT_COUNT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cp_kmsg.h"
#include "cp_unit.h"
#include "cp_xid.h"

/* A line and what splitting it gives: the clock (-1 none), whether a wall
 * prefix was found, and the message. */
static const struct {
    const char *line;
    int64_t ts_us;
    int wall;
    const char *text;
} splits[] = {
    {"6,1234,5678901,-;NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.", 5678901, 0,
     "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."},
    {"4,77,123,c,caller=T12;pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0", 123, 0,
     "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0"},
    {"[ 5678.901234] NVRM: Xid (0000:18:00): 13, Graphics Exception", 5678901234, 0,
     "NVRM: Xid (0000:18:00): 13, Graphics Exception"},
    {"[12.5] short", 12500000, 0, "short"},
    {"[  123.456789] gpu-node-3 kernel: NVRM: Xid (PCI:0000:18:00): 48, pid=1, DBE", 123456789, 0,
     "NVRM: Xid (PCI:0000:18:00): 48, pid=1, DBE"},
    {"[Tue Mar  4 14:02:11 2025] NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.", -1, 1,
     "NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus."},
    {"Mar  4 14:02:11 gpu-node-3 kernel: [ 5678.901234] NVRM: Xid (PCI:0000:18:00): 94, x", 5678901234, 1,
     "NVRM: Xid (PCI:0000:18:00): 94, x"},
    {"Mar 04 14:02:11 gpu-node-3 kernel: NVRM: Xid (PCI:0000:18:00): 94, x", -1, 1,
     "NVRM: Xid (PCI:0000:18:00): 94, x"},
    {"2025-03-04T14:02:11.123456+00:00 gpu-node-3 kernel: NVRM: x", -1, 1, "NVRM: x"},
    /* dmesg -r (the raw priority), dmesg -x (facility and level) */
    {"<3>[  914.412350] NVRM: Xid (PCI:0000:1b:00): 13, x", 914412350, 0, "NVRM: Xid (PCI:0000:1b:00): 13, x"},
    {"kern  :err   : [  914.412350] NVRM: x", 914412350, 0, "NVRM: x"},
    {"kern  :warn  : [Tue Mar  4 14:02:11 2025] pcieport 0000:00:01.0: AER: x", -1, 1,
     "pcieport 0000:00:01.0: AER: x"},
    {"<4>Mar  4 14:02:11 host kernel: x", -1, 1, "x"},
    {"2025-03-04T14:02:11,123456+00:00 NVRM: x", -1, 1, "NVRM: x"},
    {"plain text", -1, 0, "plain text"},
    {"<html> :err : not a prefix", -1, 0, "<html> :err : not a prefix"},
    {"usb  :err   : not a level", -1, 0, "usb  :err   : not a level"},
};

/* An Xid line and its fields (-1: no pid). */
static const struct {
    const char *text;
    unsigned bus, fn;
    int code;
    int64_t pid;
    const char *name, *msg;
} xids[] = {
    {"NVRM: Xid (PCI:0000:18:00): 79, pid=1234, name=python3, GPU has fallen off the bus.", 0x18, 0, 79, 1234,
     "python3", "GPU has fallen off the bus."},
    {"NVRM: Xid (PCI:0000:28:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", 0x28, 0, 79,
     -1, "", "GPU has fallen off the bus."},
    {"NVRM: Xid (PCI:0000:28:00): 79, GPU has fallen off the bus.", 0x28, 0, 79, -1, "",
     "GPU has fallen off the bus."},
    {"NVRM: Xid (0000:01:00): 13, Graphics Exception: ESR 0x504648=0x1000e", 0x01, 0, 13, -1, "",
     "Graphics Exception: ESR 0x504648=0x1000e"},
    {"NVRM: Xid (PCI:0000:65:00): 119, pid='N/A', Timeout waiting for RPC from GSP", 0x65, 0, 119, -1, "",
     "Timeout waiting for RPC from GSP"},
    {"NVRM: Xid (PCI:0000:01:00): 45, pid=12542, name=VLLM::Worker, channel 0x00000002", 0x01, 0, 45, 12542,
     "VLLM::Worker", "channel 0x00000002"},
    {"NVRM: Xid (PCI:0000:3b:00): 31, pid=77, name=pt_main_thread, Ch 00000010, intr 10000000. MMU Fault", 0x3b,
     0, 31, 77, "pt_main_thread", "Ch 00000010, intr 10000000. MMU Fault"},
    {"NVRM: Xid (PCI:0000:AB:00.1): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)",
     0xab, 1, 154, -1, "", "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)"},
};

static void test_split(void)
{
    for (size_t i = 0; i < sizeof(splits) / sizeof(splits[0]); i++) {
        struct cp_kmsg_line l;

        CHECK(cp_kmsg_split(splits[i].line, &l) == 1);
        CHECK(l.ts_us == splits[i].ts_us);
        CHECK((l.wall != NULL) == splits[i].wall);
        if (strcmp(l.text, splits[i].text) != 0)
            printf("FAIL split %zu: text '%s'\n", i, l.text), g_fail++;
    }
    struct cp_kmsg_line l;
    CHECK(cp_kmsg_split(" SUBSYSTEM=pci", &l) == 0);
    CHECK(cp_kmsg_split("", &l) == 0);
}

static void test_wall(void)
{
    struct cp_kmsg_line l;
    time_t now = 1741100000; /* 2025-03-04 14:53:20 UTC */

    setenv("TZ", "UTC", 1);
    tzset();
    cp_kmsg_split("[Tue Mar  4 14:02:11 2025] x", &l);
    CHECK(cp_kmsg_wall(l.wall, now) == 1741096931);
    cp_kmsg_split("Mar  4 14:02:11 host kernel: x", &l);
    CHECK(cp_kmsg_wall(l.wall, now) == 1741096931);
    cp_kmsg_split("2025-03-04T14:02:11.5+0000 host kernel: x", &l);
    CHECK(cp_kmsg_wall(l.wall, now) == 1741096931);
    /* dmesg --time-format iso: a comma before the fraction */
    cp_kmsg_split("2025-03-04T14:02:11,123456+00:00 x", &l);
    CHECK(cp_kmsg_wall(l.wall, now) == 1741096931);
    /* a syslog line of December read in March is last year's */
    cp_kmsg_split("Dec 31 23:00:00 host kernel: x", &l);
    CHECK(cp_kmsg_wall(l.wall, now) == 1735686000);
}

static void test_xid(void)
{
    for (size_t i = 0; i < sizeof(xids) / sizeof(xids[0]); i++) {
        struct cp_kmsg_xid x;

        CHECK(cp_kmsg_xid(xids[i].text, &x) == 1);
        CHECK(x.dom == 0 && x.bus == xids[i].bus && x.dev == 0 && x.fn == xids[i].fn);
        CHECK(x.code == xids[i].code);
        CHECK(x.pid == xids[i].pid);
        CHECK(strcmp(x.name, xids[i].name) == 0);
        if (strcmp(x.msg, xids[i].msg) != 0)
            printf("FAIL xid %zu: msg '%s'\n", i, x.msg), g_fail++;
    }
    struct cp_kmsg_xid x;
    CHECK(!cp_kmsg_xid("NVRM: GPU at PCI:0000:18:00: GPU-0b11d014", &x));
    CHECK(!cp_kmsg_xid("NVRM: Xid (garbage): 79", &x));
}

static void test_aer(void)
{
    struct cp_kmsg_aer a;

    CHECK(cp_kmsg_aer("pcieport 0000:00:01.0: AER: Corrected error received: 0000:18:00.0", &a) ==
          CP_AER_RECEIVED);
    CHECK(a.bus == 0 && a.dev == 1 && a.sbus == 0x18 && a.sev == CP_AER_COR);
    /* an AER line of `dmesg -x` output, once split */
    struct cp_kmsg_line l;
    CHECK(cp_kmsg_split("kern  :err   : [ 1021.551201] pcieport 0000:00:02.0: AER: Uncorrected (Fatal) error "
                        "received: 0000:27:00.0", &l) == 1);
    CHECK(cp_kmsg_aer(l.text, &a) == CP_AER_RECEIVED && a.sbus == 0x27 && a.sev == CP_AER_FATAL);
    CHECK(cp_kmsg_aer("pcieport 0000:00:01.0: AER: Multiple Uncorrected (Non-Fatal) error received: 0000:17:00.0",
                      &a) == CP_AER_RECEIVED);
    CHECK(a.sbus == 0x17 && a.sev == CP_AER_NONFATAL);
    CHECK(cp_kmsg_aer("pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received: id=1800", &a) ==
          CP_AER_RECEIVED);
    CHECK(a.sbus == 0x18 && a.sdev == 0 && a.sev == CP_AER_FATAL);
    CHECK(cp_kmsg_aer("nvidia 0000:18:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
                      "(Receiver ID)", &a) == CP_AER_BUS_ERROR);
    CHECK(a.bus == 0x18 && a.sev == CP_AER_COR);
    CHECK(cp_kmsg_aer("pcieport 0000:17:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
                      "Layer, (Requester ID)", &a) == CP_AER_BUS_ERROR);
    CHECK(a.bus == 0x17 && a.sev == CP_AER_FATAL);
    CHECK(cp_kmsg_aer("nvidia 0000:18:00.0: AER:    [ 0] RxErr                  (First)", &a) == CP_AER_DETAIL);
    CHECK(strcmp(a.name, "RxErr") == 0);
    CHECK(cp_kmsg_aer("pcieport 0000:00:03.0:    [12] Replay Timer Timeout", &a) == CP_AER_DETAIL);
    CHECK(strcmp(a.name, "Replay Timer Timeout") == 0);
    CHECK(cp_kmsg_aer("pcieport 0000:00:03.0:    [ 7] Bad DLLP", &a) == CP_AER_DETAIL);
    CHECK(strcmp(a.name, "Bad DLLP") == 0);
    CHECK(cp_kmsg_aer("nvidia 0000:18:00.0: AER:   device [10de:2330] error status/mask=00000001/0000e000", &a) ==
          CP_AER_NONE);
    CHECK(cp_kmsg_aer("usb 1-1: new high-speed USB device number 2", &a) == CP_AER_NONE);
    CHECK(cp_kmsg_wanted("NVRM: loading NVIDIA UNIX x86_64 Kernel Module"));
    CHECK(!cp_kmsg_wanted("EXT4-fs (sda1): mounted filesystem"));
}

static void test_table(void)
{
    static const int need[] = {13, 31, 32, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 119, 120, 154};
    static const int app[] = {13, 31, 43};
    static const int hw[] = {48, 63, 64, 74, 79, 92, 94, 95};

    for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
        struct cp_xid_info x = cp_xid_info(need[i]);

        CHECK(x.cls != CP_XID_UNKNOWN && strlen(x.meaning) > 20 && strlen(x.action) > 20);
    }
    for (size_t i = 0; i < sizeof(app) / sizeof(app[0]); i++)
        CHECK(cp_xid_info(app[i]).cls == CP_XID_APP);
    for (size_t i = 0; i < sizeof(hw) / sizeof(hw[0]); i++)
        CHECK(cp_xid_info(hw[i]).cls == CP_XID_HW);
    CHECK(cp_xid_info(119).cls == CP_XID_DRIVER && cp_xid_info(120).cls == CP_XID_DRIVER);
    /* Xid 45 is the driver's cleanup after another error: neither the
     * program's fault nor the GPU's on its own */
    CHECK(strcmp(cp_xid_whose(cp_xid_info(45).cls), "follows an earlier error") == 0);
    CHECK(strcmp(cp_xid_class_name(cp_xid_info(45).cls), "aftermath") == 0);
    CHECK(cp_xid_info(4242).cls == CP_XID_UNKNOWN);
}

int main(void)
{
    test_split();
    test_wall();
    test_xid();
    test_aer();
    test_table();
    CHECK(cp_kmsg_clock_now() != 0);
    if (g_fail)
        return 1;
    printf("kernel log parsers: ok\n");
    return 0;
}
