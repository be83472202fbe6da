#!/usr/bin/env python3
"""Writes the small data sets and models of tests/cli/test_train.sh
into DIR (no numpy needed): 256 samples of 4 features, a regression
target, a binary target and 3 classes, and two MLPs in text IR with
seeded initial weights and a symbolic batch.

usage: train_data.py DIR
"""
import math
import os
import struct
import sys


def npy(path, dtype, shape, values):
    """A little-endian .npy file of dtype '<f4', '<f8' or '<i8'."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }" % (
        dtype, "".join("%d, " % d for d in shape) if len(shape) == 1
        else ", ".join(str(d) for d in shape))
    header += " " * (63 - (10 + len(header)) % 64) + "\n"
    code = {"<f4": "f", "<f8": "d", "<i8": "q"}[dtype]
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(values), code), *values))


class Lcg:
    """A seeded generator, the same on every machine."""

    def __init__(self, seed):
        self.s = seed

    def uniform(self):
        self.s = (self.s * 6364136223846793005 + 1442695040888963407) % 2**64
        return ((self.s >> 11) / 2**53) * 2 - 1


def mlp(path, name, sizes, rng):
    """A tanh MLP over %x: f32[batch, sizes[0]] as text IR."""
    lines = ["graph %s(%%x: f32[batch,%d]) {" % (name, sizes[0])]
    for i in range(len(sizes) - 1):
        a, b = sizes[i], sizes[i + 1]
        w = [rng.uniform() / math.sqrt(a) for _ in range(a * b)]
        lines.append("  %%w%d: f32[%d,%d] = const [%s]" % (
            i, a, b, ", ".join("%.6f" % v for v in w)))
        lines.append("  %%b%d: f32[%d] = const [%s]" % (
            i, b, ", ".join("0.0" for _ in range(b))))
    h = "%x"
    for i in range(len(sizes) - 1):
        b = sizes[i + 1]
        lines.append("  %%m%d: f32[batch,%d] = MatMul(%s, %%w%d)" % (i, b, h, i))
        lines.append("  %%a%d: f32[batch,%d] = Add(%%m%d, %%b%d)" % (i, b, i, i))
        h = "%%a%d" % i
        if i + 2 < len(sizes):
            lines.append("  %%t%d: f32[batch,%d] = Tanh(%s)" % (i, b, h))
            h = "%%t%d" % i
    lines.append("  %%y: f32[batch,%d] = Identity(%s)" % (sizes[-1], h))
    lines.append("  return %y")
    lines.append("}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def main():
    d = sys.argv[1]
    rng = Lcg(7)
    n = 256
    x = [[rng.uniform() for _ in range(4)] for _ in range(n)]
    reg = [math.sin(2 * r[0]) + r[1] * r[2] - 0.5 * r[3] for r in x]
    cls = [0 if r[0] + r[1] < -0.3 else (1 if r[0] + r[1] < 0.3 else 2)
           for r in x]
    npy(os.path.join(d, "x.npy"), "<f4", (n, 4), [v for r in x for v in r])
    npy(os.path.join(d, "x64.npy"), "<f8", (n, 4), [v for r in x for v in r])
    npy(os.path.join(d, "reg.npy"), "<f4", (n, 1), reg)
    npy(os.path.join(d, "bin.npy"), "<f4", (n, 1),
        [1.0 if r[0] * r[1] > 0 else 0.0 for r in x])
    npy(os.path.join(d, "cls.npy"), "<i8", (n,), cls)
    npy(os.path.join(d, "cls_f.npy"), "<f4", (n,), [float(c) for c in cls])
    npy(os.path.join(d, "reg_bad.npy"), "<f4", (n, 3), [0.0] * (3 * n))
    npy(os.path.join(d, "short.npy"), "<f4", (100, 1), [0.0] * 100)
    mlp(os.path.join(d, "reg.ir"), "reg", [4, 16, 1], rng)
    mlp(os.path.join(d, "cls.ir"), "cls", [4, 16, 3], rng)


main()
