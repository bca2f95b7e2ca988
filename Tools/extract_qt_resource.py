#!/usr/bin/env python3
"""Extracts one file from a compiled Qt resource bundle (.rcc, format versions 1-3):
the header, then the tree of nodes (directories list children, files point into the data
area, zlib-compressed when flagged), with names in UTF-16BE in the names area.

    Tools/extract_qt_resource.py BUNDLE.rcc PATH/INSIDE/IT OUT
"""
import struct
import sys
import zlib

DIRECTORY, COMPRESSED, COMPRESSED_ZSTD = 2, 1, 4


def extract(bundle, wanted):
    data = open(bundle, "rb").read()
    if data[:4] != b"qres":
        raise SystemExit(f"{bundle}: not a Qt resource bundle")
    version, tree, payload, names = struct.unpack(">IIII", data[4:20])
    node_size = 22 if version >= 2 else 14

    def name(offset):
        length = struct.unpack(">H", data[names + offset:names + offset + 2])[0]
        return data[names + offset + 6:names + offset + 6 + 2 * length].decode("utf-16-be")

    node, parts = 0, [part for part in wanted.strip("/").split("/") if part]
    for part in parts:
        base = tree + node * node_size
        flags = struct.unpack(">H", data[base + 4:base + 6])[0]
        if not flags & DIRECTORY:
            raise SystemExit(f"{bundle}: {wanted}: not a directory on the way")
        count, first = struct.unpack(">II", data[base + 6:base + 14])
        children = {name(struct.unpack(">I", data[tree + child * node_size:tree + child * node_size + 4])[0]): child
                    for child in range(first, first + count)}
        if part not in children:
            raise SystemExit(f"{bundle}: no {wanted}")
        node = children[part]
    base = tree + node * node_size
    flags = struct.unpack(">H", data[base + 4:base + 6])[0]
    offset = struct.unpack(">I", data[base + 10:base + 14])[0]
    length = struct.unpack(">I", data[payload + offset:payload + offset + 4])[0]
    blob = data[payload + offset + 4:payload + offset + 4 + length]
    if flags & COMPRESSED_ZSTD:
        raise SystemExit(f"{bundle}: {wanted} is zstd-compressed, which this tool does not read")
    if flags & COMPRESSED:
        blob = zlib.decompress(blob[4:])  # a 4-byte uncompressed length comes first
    return blob


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    open(sys.argv[3], "wb").write(extract(sys.argv[1], sys.argv[2]))
