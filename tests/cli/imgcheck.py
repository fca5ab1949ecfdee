#!/usr/bin/env python3
"""Checks exported images without third-party modules (used by the explorer's CLI tests).

  imgcheck.py png FILE W H        PNG signature, IHDR size W x H, decodes, not blank
  imgcheck.py svg FILE            parses as XML with an <svg> root; prints the number of <image>
  imgcheck.py same A.png B.png    exit 0 when the decoded pixels are identical, 1 otherwise
  imgcheck.py colors FILE         prints the number of distinct colours
"""
import struct
import sys
import zlib
import xml.etree.ElementTree as ET


def read_png(path):
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG (bad signature)" % path)
    pos, idat, ihdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            ihdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        pos += 12 + n
    w, h, depth, ctype = ihdr[0], ihdr[1], ihdr[2], ihdr[3]
    if depth != 8 or ctype not in (2, 6):
        raise ValueError("%s: unexpected PNG format depth %d colour type %d" % (path, depth, ctype))
    bpp = 4 if ctype == 6 else 3
    raw = zlib.decompress(b"".join(idat))
    stride = w * bpp
    rows, prev, p = [], bytearray(stride), 0
    for _ in range(h):
        f = raw[p]
        line = bytearray(raw[p + 1:p + 1 + stride])
        p += 1 + stride
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[i] = (line[i] + pr) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def colours(rows, bpp):
    seen = set()
    for r in rows[::2]:
        for i in range(0, len(r), bpp * 2):
            seen.add(r[i:i + bpp])
    return len(seen)


def main():
    cmd = sys.argv[1]
    if cmd == "png":
        w, h, bpp, rows = read_png(sys.argv[2])
        want_w, want_h = int(sys.argv[3]), int(sys.argv[4])
        if (w, h) != (want_w, want_h):
            sys.exit("%s: %dx%d, expected %dx%d" % (sys.argv[2], w, h, want_w, want_h))
        n = colours(rows, bpp)
        if n < 8:
            sys.exit("%s: looks blank (%d colours)" % (sys.argv[2], n))
    elif cmd == "svg":
        root = ET.parse(sys.argv[2]).getroot()
        if not root.tag.endswith("svg"):
            sys.exit("%s: root element is %s" % (sys.argv[2], root.tag))
        print(sum(1 for e in root.iter() if e.tag.endswith("image")))
    elif cmd == "same":
        a, b = read_png(sys.argv[2]), read_png(sys.argv[3])
        sys.exit(0 if a == b else 1)
    elif cmd == "colors":
        w, h, bpp, rows = read_png(sys.argv[2])
        print(colours(rows, bpp))
    else:
        sys.exit("unknown command " + cmd)


if __name__ == "__main__":
    try:
        main()
    except (ValueError, OSError, ET.ParseError, zlib.error, struct.error) as e:
        sys.exit(str(e))
