#!/usr/bin/env python3
"""make_wheel.py - write cuprobe's wheel from files laid out as an installed prefix.

    make_wheel.py VERSION OUTDIR PREFIX_PATH=SOURCE...

Each PREFIX_PATH is where `make install` puts the file under its PREFIX
(bin/cuprobe, lib/cuprobe/libcuprobe.so, share/cuprobe/python); a SOURCE that
is a folder is taken whole, less Python caches.  bin/ goes to the wheel's
scripts, the rest to its data, which pip installs under the environment's
prefix: so the installed tree is the prefix layout the front end finds its
shim, analyzer and companion in (bin/../lib/cuprobe, bin/../share/cuprobe),
in a venv, a --user install or a system Python alike.

The platform tag is manylinux_2_N_ARCH, N the newest glibc symbol version
that a packaged ELF file asks for (readelf), so that pip on an older glibc
refuses the wheel rather than installing programs that cannot start; plain
linux_ARCH when no file asks for one.  Only the standard library is used:
there is no setuptools or wheel package where the wheel is built.
"""
import base64
import hashlib
import os
import platform
import re
import subprocess
import sys
import zipfile

NAME = "cuprobe"
SUMMARY = "Record what a program asks of the CUDA driver, then say what went wrong"


def files_of(prefix_path, source):
    """(path in the prefix, file on disk) for a file or a folder's files."""
    if not os.path.isdir(source):
        return [(prefix_path, source)]
    out = []
    for root, dirs, names in os.walk(source):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for n in sorted(names):
            if n.endswith(".pyc"):
                continue
            full = os.path.join(root, n)
            out.append((os.path.join(prefix_path, os.path.relpath(full, source)), full))
    return out


def glibc_needed(paths):
    """The newest GLIBC_2.N that any of paths needs, as N; None when none does."""
    newest = None
    for p in paths:
        with open(p, "rb") as f:
            if f.read(4) != b"\x7fELF":
                continue
        out = subprocess.run(["readelf", "-V", "--wide", p], check=True,
                             capture_output=True, text=True).stdout
        for minor in re.findall(r"Name: GLIBC_2\.(\d+)", out):
            newest = max(newest or 0, int(minor))
    return newest


def record_line(arc, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
    return "%s,sha256=%s,%d" % (arc, digest.decode(), len(data))


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    version, outdir = argv[1], argv[2]
    files = []
    for arg in argv[3:]:
        prefix_path, _, source = arg.partition("=")
        files += files_of(prefix_path, source)

    arch = platform.machine()
    minor = glibc_needed(src for _, src in files)
    plat = "manylinux_2_%d_%s" % (minor, arch) if minor is not None else "linux_" + arch
    tag = "py3-none-" + plat
    data_dir = "%s-%s.data" % (NAME, version)
    info_dir = "%s-%s.dist-info" % (NAME, version)

    entries = []   # (name in the wheel, bytes, executable)
    for prefix_path, source in files:
        with open(source, "rb") as f:
            data = f.read()
        top, _, rest = prefix_path.partition("/")
        arc = "%s/scripts/%s" % (data_dir, rest) if top == "bin" else "%s/data/%s" % (data_dir, prefix_path)
        entries.append((arc, data, os.access(source, os.X_OK)))
    metadata = ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\n"
                "Requires-Python: >=3.6\n" % (NAME, version, SUMMARY))
    wheel = ("Wheel-Version: 1.0\nGenerator: cuprobe make_wheel.py\n"
             "Root-Is-Purelib: false\nTag: %s\n" % tag)
    entries.append((info_dir + "/METADATA", metadata.encode(), False))
    entries.append((info_dir + "/WHEEL", wheel.encode(), False))
    record = [record_line(arc, data) for arc, data, _ in entries]
    record.append(info_dir + "/RECORD,,")
    entries.append((info_dir + "/RECORD", ("\n".join(record) + "\n").encode(), False))

    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "%s-%s-%s.whl" % (NAME, version, tag))
    tmp = path + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as z:
        for arc, data, executable in entries:
            # A fixed date: the same files make the same wheel.
            info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            # pip keeps the executable bits it finds here.
            info.external_attr = ((0o755 if executable else 0o644) | 0o100000) << 16
            z.writestr(info, data)
    os.replace(tmp, path)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
