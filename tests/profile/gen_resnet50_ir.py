#!/usr/bin/env python3
"""Writes a graph of ResNet-50's topology in Smelt's text IR: the stem,
bottleneck stages of [3, 4, 6, 3] blocks (1x1, 3x3, 1x1 convolutions,
each with BatchNormalization, a projection on each stage's first block,
the residual Add), global pooling and the classifier: 53 convolutions,
about 180 nodes as exported, as many as the real model. Channels are the
real ones divided by 16 and the image is 64x64, so the weights stay
small; the report test needs the graph's size, not its numbers.

usage: gen_resnet50_ir.py OUT.ir
"""
import sys

DIV = 16
lines = []
consts = []
n = 0


def fresh(p):
    global n
    n += 1
    return "%s%d" % (p, n)


def const(shape, scale=0.05, offset=0.0):
    name = fresh("w")
    count = 1
    for d in shape:
        count *= d
    vals = ", ".join("%.3g" % (offset + ((i * 37) % 23 - 11) * scale / 11)
                     for i in range(count))
    consts.append("  %%%s: f32[%s] = const [%s]"
                  % (name, ",".join(map(str, shape)), vals))
    return "%" + name


def conv_bn(x, cin, cout, hw, k, stride):
    pad = k // 2
    out_hw = (hw + 2 * pad - k) // stride + 1
    w = const([cout, cin, k, k], 0.3 / (cin * k * k) ** 0.5)
    c = "%" + fresh("conv")
    lines.append("  %s: f32[1,%d,%d,%d] = Conv(%s, %s) {kernel_shape = [%d, %d], "
                 "strides = [%d, %d], pads = [%d, %d, %d, %d]} @%s"
                 % (c, cout, out_hw, out_hw, x, w, k, k, stride, stride,
                    pad, pad, pad, pad, c[1:]))
    s, b, m = (const([cout], 0.1) for _ in range(3))
    v = const([cout], 0.1, 1.0)  # a variance: positive
    bn = "%" + fresh("bn")
    lines.append("  %s: f32[1,%d,%d,%d] = BatchNormalization(%s, %s, %s, %s, "
                 "%s) {epsilon = 1e-05} @%s" % (bn, cout, out_hw, out_hw, c, s, b, m, v,
                                  bn[1:]))
    return bn, out_hw


def main():
    out = sys.argv[1]
    hw = 64
    x = "%x"
    y, hw = conv_bn(x, 3, 64 // DIV, hw, 7, 2)
    r = "%" + fresh("relu")
    lines.append("  %s: f32[1,%d,%d,%d] = Relu(%s)" % (r, 64 // DIV, hw, hw, y))
    p = "%" + fresh("pool")
    hw = (hw + 2 - 3) // 2 + 1
    lines.append("  %s: f32[1,%d,%d,%d] = MaxPool(%s) {kernel_shape = [3, 3], "
                 "strides = [2, 2], pads = [1, 1, 1, 1]}"
                 % (p, 64 // DIV, hw, hw, r))
    x, cin = p, 64 // DIV
    for stage, (blocks, width) in enumerate(zip([3, 4, 6, 3],
                                                [64, 128, 256, 512])):
        w = width // DIV
        cout = w * 4
        for blk in range(blocks):
            stride = 2 if blk == 0 and stage > 0 else 1
            a, h1 = conv_bn(x, cin, w, hw, 1, 1)
            ra = "%" + fresh("relu")
            lines.append("  %s: f32[1,%d,%d,%d] = Relu(%s)" % (ra, w, h1, h1, a))
            b, h2 = conv_bn(ra, w, w, h1, 3, stride)
            rb = "%" + fresh("relu")
            lines.append("  %s: f32[1,%d,%d,%d] = Relu(%s)" % (rb, w, h2, h2, b))
            c, h3 = conv_bn(rb, w, cout, h2, 1, 1)
            if blk == 0:
                sc, _ = conv_bn(x, cin, cout, hw, 1, stride)
            else:
                sc = x
            s = "%" + fresh("add")
            lines.append("  %s: f32[1,%d,%d,%d] = Add(%s, %s)"
                         % (s, cout, h3, h3, c, sc))
            o = "%" + fresh("relu")
            lines.append("  %s: f32[1,%d,%d,%d] = Relu(%s)" % (o, cout, h3, h3, s))
            x, cin, hw = o, cout, h3
    g = "%" + fresh("gap")
    lines.append("  %s: f32[1,%d,1,1] = GlobalAveragePool(%s)" % (g, cin, x))
    f = "%" + fresh("flat")
    lines.append("  %s: f32[1,%d] = Flatten(%s) {axis = 1}" % (f, cin, g))
    wf, bf = const([1000 // DIV, cin], 0.05), const([1000 // DIV], 0.1)
    lines.append("  %%logits: f32[1,%d] = Gemm(%s, %s, %s) {transB = 1} @fc"
                 % (1000 // DIV, f, wf, bf))
    with open(out, "w") as fh:
        fh.write("# ResNet-50's topology at 1/16 of its channels "
                 "(tests/profile/gen_resnet50_ir.py)\n")
        fh.write("graph resnet50_small(%x: f32[1,3,64,64]) {\n")
        fh.write("\n".join(consts) + "\n")
        fh.write("\n".join(lines) + "\n")
        fh.write("  return %logits\n}\n")


main()
