#!/bin/sh
# doctor: the kernel log cannot be read.  No /dev/kmsg (a container) and a
# journal the user may not read: a note "not checked" at layer 1 naming
# both reasons, and the machine still passes; /dev/kmsg denied by
# kernel.dmesg_restrict (run as an unprivileged user); none in a container
# (a pod's cgroup); and the journal read instead when it is readable.
. "$ROOT/tests/sh/lib.sh"
. "$ROOT/tests/doctor/lib_doctor.sh"
need_fake
mkdir -p "$TMP/bin"
# a journalctl that answers as for a user outside groups adm and
# systemd-journal, or prints $FAKE_JOURNAL
cat >"$TMP/bin/journalctl" <<'SH'
#!/bin/sh
[ -n "${FAKE_JOURNAL:-}" ] && exec cat "$FAKE_JOURNAL"
echo "No journal files were opened due to insufficient permissions." >&2
exit 1
SH
chmod +x "$TMP/bin/journalctl"
export PATH="$TMP/bin:$PATH" LD_LIBRARY_PATH="$FAKE_DIR" FAKECUDA_DEVICES=2

# 1. no /dev/kmsg, the journal not readable
use_tree gpu2
run_doctor nolog --bw-mib 4
expect_verdict "PASS: all 4 layers passed" 0
expect_grep '^  ✓ device 1 = physical GPU 1 \(PCI 0000:28:00\.0\): GPU-' "$out"
expect_grep "^  · kernel log not readable: Xid events and PCIe AER lines not checked: $DR_FIX/gpu2/dev/kmsg: not present( \\(in a container: the host.s log is not passed in\\))?; journalctl -k: No journal files were opened due to insufficient permissions\\.\$" "$out"
expect_grep 'fix: run doctor as root .*cuprobe doctor --kernel-log kern\.log' "$out"
run_doctor nolog_json --bw-mib 4 --json
expect_check kernel.log 1 note '^kernel log not readable'
python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["kernel_log"]; sys.exit(0 if not k["readable"] and not k["source"] else str(k))' "$out" ||
    die "kernel_log object"

# 2. /dev/kmsg there but denied: kernel.dmesg_restrict=1 and not root
cp -r "$DR_FIX/gpu2" "$TMP/tree"
mkdir -p "$TMP/tree/proc/sys/kernel"
echo 1 >"$TMP/tree/proc/sys/kernel/dmesg_restrict"
: >"$TMP/tree/dev/kmsg"
chmod -R a+rX "$TMP"
chmod 000 "$TMP/tree/dev/kmsg"
as_user=""
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null && as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
if [ "$(id -u)" -ne 0 ] || [ -n "$as_user" ]; then
    out="$TMP/out.denied"
    (
        export CUPROBE_SYSFS_ROOT="$TMP/tree/sys" CUPROBE_PROCFS_ROOT="$TMP/tree/proc" CUPROBE_DEV_ROOT="$TMP/tree/dev"
        exec timeout 300 $as_user "$ANA" doctor --timeout 120 --bw-mib 4
    ) >"$out" 2>&1
    rc=$?
    expect_grep "^  · kernel log not readable: .*: $TMP/tree/dev/kmsg: permission denied \\(kernel\\.dmesg_restrict=1: only root or CAP_SYSLOG may read it(; in a container)?\\); journalctl -k: No journal files" "$out"
    # (as another user the fixture's device nodes may be out of reach: a warning)
    expect_grep '^verdict: PASS' "$out"
    [ "$rc" -eq 0 ] || { cat "$out"; die "denied: exit status $rc, want 0"; }
else
    echo "root without setpriv: the permission case is not run"
fi

# 3. no /dev/kmsg in a container (its init's cgroup is a pod's): said so
cp -r "$DR_FIX/gpu2" "$TMP/pod"
mkdir -p "$TMP/pod/proc/1"
echo "0::/kubepods/besteffort/pod4d1c/8e1f0b" >"$TMP/pod/proc/1/cgroup"
run_doctor pod CUPROBE_SYSFS_ROOT="$TMP/pod/sys" CUPROBE_PROCFS_ROOT="$TMP/pod/proc" CUPROBE_DEV_ROOT="$TMP/pod/dev" \
    --bw-mib 4
expect_verdict "PASS: all 4 layers passed" 0
expect_grep "^  · kernel log not readable: .*: $TMP/pod/dev/kmsg: not present \\(in a container: the host.s log is not passed in\\); journalctl -k: " "$out"

# 4. no /dev/kmsg, but the journal is readable: it is used, and says why
printf '[    2.417785] node kernel: pci 0000:28:00.0: [10de:2335] type 00 class 0x030200\n[  914.412350] node kernel: NVRM: Xid (PCI:0000:28:00): 79, pid=77, name=python, GPU has fallen off the bus.\n' \
    >"$TMP/journal"
run_doctor journal FAKE_JOURNAL="$TMP/journal" --bw-mib 4
expect_verdict "FAIL at layer 1 (hardware): Xid 79 on physical GPU 1 (PCI 0000:28:00.0): the GPU has fallen off the bus (this GPU, not your code)" 1
expect_grep "^  · kernel log: 1 Xid line, 0 PCIe AER lines: journalctl -k, 2 lines; $DR_FIX/gpu2/dev/kmsg: not present" "$out"
echo ok
