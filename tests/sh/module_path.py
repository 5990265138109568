#!/usr/bin/env python3
"""module_path.py - rewrite the MODULE records of a raw record stream (the
input of `test_decode pack`): point their paths at another file.

  module_path.py IN.raw OUT.raw PATH [--first] [--no-build-id]

--first rewrites only the first MODULE (the program, whose call sites the
report symbolizes); --no-build-id also empties its build id, so that the
symbolizer reads PATH whatever its build id is.  Exits 1 when IN has no
MODULE record.
"""
import sys


def uv(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << s
        s += 7
        if c < 0x80:
            return v, i


def pu(v):
    o = bytearray()
    while True:
        c = v & 0x7f
        v >>= 7
        if v:
            o.append(c | 0x80)
        else:
            o.append(c)
            return bytes(o)


def main(argv):
    src, dst, path = argv[1], argv[2], argv[3].encode()
    first = "--first" in argv[4:]
    no_id = "--no-build-id" in argv[4:]
    raw = open(src, "rb").read()
    out, i, n = bytearray(), 0, 0
    while i < len(raw):
        t = raw[i]
        ln, j = uv(raw, i + 1)
        p = raw[j:j + ln]
        i = j + ln
        # MODULE: u ts, u tid, u base, u size, u file_offset, str path, str build_id
        if t == 3 and not (first and n):
            k = 0
            for _ in range(5):
                _, k = uv(p, k)
            sl, k2 = uv(p, k)
            rest = p[k2 + sl:]
            if no_id:
                bl, k3 = uv(rest, 0)
                rest = pu(0) + rest[k3 + bl:]
            p = p[:k] + pu(len(path)) + path + rest
            n += 1
        out += bytes([t]) + pu(len(p)) + p
    if not n:
        print("no MODULE record in " + src, file=sys.stderr)
        return 1
    open(dst, "wb").write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
