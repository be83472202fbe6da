#!/usr/bin/python3
"""Generate the ONNX test corpus of tests/unit/test_onnx.c.

tests/onnx/models/NAME.onnx     small valid models, with for each case C
  NAME.C.inI.npy / NAME.C.outI.npy   inputs and expected outputs (numpy)
tests/onnx/bad/NAME.onnx        malformed or hostile models the loader must
                                refuse with a clear error

Run with Debian's python3-onnx:  /usr/bin/python3 scripts/gen_onnx_tests.py
The output is deterministic; the files are small and committed.
"""
import os
import struct
import sys

import numpy as np

# Debian's python3-onnx predates numpy's removal of these aliases.
np.float = float
np.int = int
np.bool = bool
np.object = object

import onnx  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MODELS = os.path.join(ROOT, "tests", "onnx", "models")
BAD = os.path.join(ROOT, "tests", "onnx", "bad")
F = TensorProto.FLOAT
rng = np.random.RandomState(1234)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


def init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def model(graph, opset, check=True, ir_version=None):
    m = helper.make_model(graph, producer_name="gen_onnx_tests",
                          opset_imports=[helper.make_opsetid("", opset)])
    if ir_version is not None:
        m.ir_version = ir_version
    elif opset <= 9:
        m.ir_version = 4
    elif opset <= 17:
        m.ir_version = 8
    if check:
        onnx.checker.check_model(m)
    return m


def save_model(m, name, cases):
    path = os.path.join(MODELS, name + ".onnx")
    with open(path, "wb") as f:
        f.write(m.SerializeToString())
    for c, (ins, outs) in enumerate(cases):
        for i, a in enumerate(ins):
            np.save(os.path.join(MODELS, "%s.%d.in%d.npy" % (name, c, i)), a)
        for i, a in enumerate(outs):
            np.save(os.path.join(MODELS, "%s.%d.out%d.npy" % (name, c, i)), a)


def write_bad(name, data):
    if not isinstance(data, bytes):
        data = data.SerializeToString()
    with open(os.path.join(BAD, name + ".onnx"), "wb") as f:
        f.write(data)


def softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# ---- valid models -----------------------------------------------------------

def gen_mlp():
    """MatMul/Add/Relu/Gemm/Softmax with a symbolic batch dimension."""
    w1, b1, w2, b2 = rand(4, 8), rand(8), rand(3, 8), rand(3)
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h0"], name="mm1"),
        helper.make_node("Add", ["h0", "b1"], ["h1"], name="add1"),
        helper.make_node("Relu", ["h1"], ["h2"], name="relu1"),
        helper.make_node("Gemm", ["h2", "w2", "b2"], ["h3"], name="gemm2",
                         transB=1, alpha=0.5),
        helper.make_node("Softmax", ["h3"], ["y"], name="softmax", axis=-1),
    ]
    g = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", F, ["batch", 4])],
        [helper.make_tensor_value_info("y", F, ["batch", 3])],
        [init("w1", w1), init("b1", b1), init("w2", w2), init("b2", b2)],
        value_info=[helper.make_tensor_value_info("h0", F, ["batch", 8]),
                    helper.make_tensor_value_info("h2", F, ["batch", None])])
    x = rand(2, 4)
    h = np.maximum(x @ w1 + b1, 0)
    y = softmax(0.5 * (h @ w2.T) + b2, -1).astype(np.float32)
    save_model(model(g, 17), "mlp", [([x], [y])])


def conv2d(x, w, b, pad):
    n, c, hh, ww = x.shape
    k, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = hh + 2 * pad - kh + 1, ww + 2 * pad - kw + 1
    y = np.zeros((n, k, oh, ow), np.float64)
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i:i + kh, j:j + kw].astype(np.float64)
            y[:, :, i, j] = np.tensordot(patch, w.astype(np.float64),
                                         axes=([1, 2, 3], [1, 2, 3]))
    return y + b.reshape(1, k, 1, 1)


def gen_conv():
    """Conv/BatchNormalization/Relu/MaxPool/GlobalAveragePool/Flatten,
    with initializers that are also listed as graph inputs."""
    w, b = rand(3, 2, 3, 3), rand(3)
    scale, bias = rand(3) + 1.5, rand(3)
    mean, var = rand(3), rand(3) + 1.5
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv",
                         pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization",
                         ["c", "scale", "bias", "mean", "var"], ["bn"],
                         name="bn", epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["p"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["y"], axis=1),
    ]
    # initializers also listed as inputs, as exporters with
    # keep_initializers_as_inputs do: still constants, not inputs
    g = helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", F, [1, 2, 6, 6]),
                        helper.make_tensor_value_info("w", F, [3, 2, 3, 3]),
                        helper.make_tensor_value_info("b", F, [3])],
        [helper.make_tensor_value_info("y", F, [1, 3])],
        [init("w", w), init("b", b), init("scale", scale), init("bias", bias),
         init("mean", mean), init("var", var)])
    x = rand(1, 2, 6, 6)
    c = conv2d(x, w, b, 1)
    sh = (1, 3, 1, 1)
    bn = (c - mean.reshape(sh)) / np.sqrt(var.reshape(sh) + 1e-5) * \
        scale.reshape(sh) + bias.reshape(sh)
    r = np.maximum(bn, 0)
    p = r.reshape(1, 3, 3, 2, 3, 2).max(axis=(3, 5))
    y = p.mean(axis=(2, 3)).astype(np.float32)
    save_model(model(g, 13), "conv", [([x], [y])])


def bf16_bits(a):
    return (np.asarray(a, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def gen_typed():
    """Initializers of every dtype, once in the typed fields and once in
    raw_data, each passed to an output (bf16 through a Cast to float)."""
    vals = {
        "f32": (TensorProto.FLOAT, np.array([[1.5, -2.25, 3.0]], np.float32)),
        "f64": (TensorProto.DOUBLE, np.array([1e-300, -2.5], np.float64)),
        "f16": (TensorProto.FLOAT16, np.array([0.5, -65504.0, 1.0], np.float16)),
        "bf16": (TensorProto.BFLOAT16, np.array([1.5, -2.0, 0.25], np.float32)),
        "i8": (TensorProto.INT8, np.array([-128, 127, 3], np.int8)),
        "u8": (TensorProto.UINT8, np.array([0, 255, 7], np.uint8)),
        "i16": (TensorProto.INT16, np.array([-32768, 32767], np.int16)),
        "i32": (TensorProto.INT32, np.array([[-2147483648], [5]], np.int32)),
        "i64": (TensorProto.INT64,
                np.array([-(2 ** 63), 2 ** 62 + 1, 0], np.int64)),
        "bool": (TensorProto.BOOL, np.array([True, False, True], np.bool_)),
    }
    inits, nodes, outs, expect = [], [], [], []
    for key, (code, a) in vals.items():
        for form in ("typed", "raw"):
            name = "%s_%s" % (key, form)
            t = TensorProto()
            t.name = name
            t.data_type = code
            t.dims.extend(a.shape)
            if form == "raw":
                t.raw_data = (bf16_bits(a) if key == "bf16" else a).tobytes()
            elif key == "f32":
                t.float_data.extend(a.flatten().tolist())
            elif key == "f64":
                t.double_data.extend(a.flatten().tolist())
            elif key == "i64":
                t.int64_data.extend(a.flatten().tolist())
            elif key == "f16":
                t.int32_data.extend(a.view(np.uint16).flatten().tolist())
            elif key == "bf16":
                t.int32_data.extend(bf16_bits(a).flatten().tolist())
            else:
                t.int32_data.extend(a.astype(np.int32).flatten().tolist())
            inits.append(t)
            out = "out_" + name
            if key == "bf16":
                nodes.append(helper.make_node("Cast", [name], [out], to=F))
                outs.append(helper.make_tensor_value_info(out, F, a.shape))
            else:
                nodes.append(helper.make_node("Identity", [name], [out]))
                outs.append(helper.make_tensor_value_info(out, code, a.shape))
            expect.append(a)
    g = helper.make_graph(nodes, "typed", [], outs, inits)
    save_model(model(g, 13), "typed", [([], expect)])


def gen_legacy9():
    """Opset 9: Slice, Pad, Clip, Dropout take attributes; Softmax coerces
    to 2-D; Unsqueeze/Squeeze/ReduceSum take axes attributes."""
    nodes = [
        helper.make_node("Slice", ["x"], ["s"], name="slice",
                         starts=[0, 1], ends=[2, 3], axes=[1, 2]),
        helper.make_node("Pad", ["s"], ["p"], name="pad",
                         pads=[0, 1, 0, 0, 0, 1], value=1.5),
        helper.make_node("Clip", ["p"], ["c"], name="clip", min=-0.5,
                         max=0.75),
        helper.make_node("Dropout", ["c"], ["d"], name="drop", ratio=0.3),
        helper.make_node("Softmax", ["d"], ["sm"], name="softmax", axis=1),
        helper.make_node("Unsqueeze", ["sm"], ["u"], axes=[0]),
        helper.make_node("Squeeze", ["u"], ["q"], axes=[0]),
        helper.make_node("ReduceSum", ["q"], ["y"], axes=[2], keepdims=0),
        helper.make_node("LogSoftmax", ["x"], ["ls"], name="logsoftmax"),
    ]
    g = helper.make_graph(
        nodes, "legacy9", [helper.make_tensor_value_info("x", F, [2, 3, 4])],
        [helper.make_tensor_value_info("y", F, [2, 3]),
         helper.make_tensor_value_info("sm", F, [2, 3, 3]),
         helper.make_tensor_value_info("ls", F, [2, 3, 4])])
    x = rand(2, 3, 4) * 2
    s = x[:, 0:2, 1:3]
    p = np.pad(s, ((0, 0), (1, 0), (0, 1)), constant_values=1.5)
    c = np.clip(p, -0.5, 0.75)
    sm = softmax(c.reshape(2, -1), 1).reshape(c.shape).astype(np.float32)
    y = sm.sum(axis=2).astype(np.float32)
    ls = np.log(softmax(x.reshape(2, -1), 1)).reshape(x.shape)
    save_model(model(g, 9), "legacy9", [([x], [y, sm, ls.astype(np.float32)])])


def gen_opset11():
    """Opset 11: Clip with min/max inputs, Split with a split attribute,
    Squeeze/Unsqueeze/ReduceMean with axes attributes, Concat, Gather,
    Transpose, Softmax with a negative axis."""
    idx = np.array([2, 0], np.int64)
    nodes = [
        helper.make_node("Clip", ["x", "lo", "hi"], ["c"], name="clip"),
        helper.make_node("Split", ["c"], ["a", "b"], name="split", axis=1,
                         split=[1, 3]),
        helper.make_node("Transpose", ["b"], ["bt"], perm=[1, 0]),
        helper.make_node("Gather", ["bt", "idx"], ["g"], axis=0),
        helper.make_node("Unsqueeze", ["a"], ["au"], axes=[0]),
        helper.make_node("Squeeze", ["au"], ["as"], axes=[0]),
        helper.make_node("Concat", ["as", "as"], ["cat"], axis=1),
        helper.make_node("ReduceMean", ["g"], ["m"], axes=[1], keepdims=1),
        helper.make_node("Softmax", ["cat"], ["y"], axis=-1),
    ]
    g = helper.make_graph(
        nodes, "opset11", [helper.make_tensor_value_info("x", F, [2, 4])],
        [helper.make_tensor_value_info("y", F, [2, 2]),
         helper.make_tensor_value_info("m", F, [2, 1])],
        [init("lo", np.float32(-0.25)), init("hi", np.float32(0.5)),
         init("idx", idx)])
    x = rand(2, 4)
    c = np.clip(x, -0.25, 0.5)
    a, b = c[:, :1], c[:, 1:]
    gg = b.T[idx]
    m = gg.mean(axis=1, keepdims=True).astype(np.float32)
    y = softmax(np.concatenate([a, a], axis=1), -1).astype(np.float32)
    save_model(model(g, 11), "opset11", [([x], [y, m])])


def gen_if():
    """If whose branches read outer values, one with its own initializer."""
    then_g = helper.make_graph(
        [helper.make_node("Mul", ["x", "two"], ["t"], name="then_mul")],
        "then_branch", [], [helper.make_tensor_value_info("t", F, [3])],
        [init("two", np.full(3, 2.0, np.float32))])
    else_g = helper.make_graph(
        [helper.make_node("Add", ["x", "k"], ["e"], name="else_add")],
        "else_branch", [], [helper.make_tensor_value_info("e", F, [3])])
    nodes = [helper.make_node("If", ["cond"], ["r"], name="if",
                              then_branch=then_g, else_branch=else_g),
             helper.make_node("Neg", ["r"], ["y"], name="neg")]
    g = helper.make_graph(
        nodes, "ifgraph",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", F, [3])],
        [helper.make_tensor_value_info("y", F, [3])],
        [init("k", np.array([10, 20, 30], np.float32))])
    x = rand(3)
    cases = [([np.array(True), x], [-(x * 2)]),
             ([np.array(False), x],
              [-(x + np.array([10, 20, 30], np.float32))])]
    save_model(model(g, 13), "if", cases)


def gen_loop():
    """Loop with a trip count, a carried value and a scan output."""
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Add", ["acc", "fi"], ["acc2"]),
         helper.make_node("Mul", ["acc2", "w"], ["scan"]),
         helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc", F, [2])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("acc2", F, [2]),
         helper.make_tensor_value_info("scan", F, [2])])
    nodes = [helper.make_node("Loop", ["trip", "cond", "x"], ["final", "ys"],
                              name="loop", body=body)]
    g = helper.make_graph(
        nodes, "loop", [helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("final", F, [2]),
         helper.make_tensor_value_info("ys", F, [4, 2])],
        [init("trip", np.array(4, np.int64)), init("cond", np.array(True)),
         init("w", np.array([1.0, -1.0], np.float32))])
    x = rand(2)
    acc, ys = x.copy(), []
    for i in range(4):
        acc = acc + np.float32(i)
        ys.append(acc * np.array([1, -1], np.float32))
    save_model(model(g, 13), "loop", [([x], [acc, np.stack(ys)])])


def ext_tensor(name, arr, location, offset):
    t = numpy_helper.from_array(arr, name)
    t.ClearField("raw_data")
    t.data_location = TensorProto.EXTERNAL
    for k, v in (("location", location), ("offset", str(offset)),
                 ("length", str(arr.nbytes))):
        e = t.external_data.add()
        e.key, e.value = k, v
    return t


def gen_external():
    """Two initializers in one external file, at offsets 0 and 64."""
    w, b = rand(3, 2), rand(2)
    blob = bytearray(128)
    blob[0:w.nbytes] = w.tobytes()
    blob[64:64 + b.nbytes] = b.tobytes()
    with open(os.path.join(MODELS, "external.bin"), "wb") as f:
        f.write(bytes(blob))
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]),
             helper.make_node("Add", ["h", "b"], ["y"])]
    g = helper.make_graph(
        nodes, "external", [helper.make_tensor_value_info("x", F, [2, 3])],
        [helper.make_tensor_value_info("y", F, [2, 2])],
        [ext_tensor("w", w, "external.bin", 0),
         ext_tensor("b", b, "external.bin", 64)])
    x = rand(2, 3)
    save_model(model(g, 13, check=False), "external", [([x], [(x @ w + b)])])
    onnx.checker.check_model(os.path.join(MODELS, "external.onnx"))


def gen_opset17():
    """Opset 17 shape and data-movement ops: Shape, Gather, Reshape, Constant,
    ConstantOfShape, Cast, Where, Expand, Unsqueeze/ReduceSum/Split with
    input operands, LayerNormalization, ReduceMean with an attribute."""
    gamma, beta = rand(4) + 1, rand(4)
    nodes = [
        helper.make_node("Constant", [], ["shp"], name="const_shape",
                         value=init("v", np.array([4, 2], np.int64))),
        helper.make_node("Reshape", ["x"], ["r"], name="reshape"),
        helper.make_node("Shape", ["r"], ["s"], name="shape"),
        helper.make_node("ConstantOfShape", ["s"], ["ones"],
                         value=init("one", np.array([1.0], np.float32))),
        helper.make_node("Add", ["r", "ones"], ["r1"]),
        helper.make_node("Greater", ["r1", "zero"], ["gt"]),
        helper.make_node("Where", ["gt", "r1", "zero"], ["w"]),
        helper.make_node("Unsqueeze", ["w", "ax0"], ["wu"]),
        helper.make_node("Expand", ["wu", "e_shape"], ["we"]),
        helper.make_node("ReduceSum", ["we", "ax0"], ["rs"], keepdims=0),
        helper.make_node("Split", ["rs", "split"], ["p0", "p1"], axis=1),
        helper.make_node("Cast", ["p0"], ["p0i"], to=TensorProto.INT32),
        helper.make_node("ReduceMean", ["p1"], ["pm"], axes=[1],
                         keepdims=0),
        helper.make_node("LayerNormalization", ["x2", "gamma", "beta"],
                         ["ln"], axis=-1, epsilon=1e-5),
    ]
    nodes[1].input.append("shp")
    g = helper.make_graph(
        nodes, "opset17",
        [helper.make_tensor_value_info("x", F, [2, 4]),
         helper.make_tensor_value_info("x2", F, [3, 4])],
        [helper.make_tensor_value_info("p0i", TensorProto.INT32, [4, 1]),
         helper.make_tensor_value_info("pm", F, [4]),
         helper.make_tensor_value_info("ln", F, [3, 4])],
        [init("zero", np.float32(0)), init("ax0", np.array([0], np.int64)),
         init("e_shape", np.array([3, 1, 1], np.int64)),
         init("split", np.array([1, 1], np.int64)),
         init("gamma", gamma), init("beta", beta)])
    x, x2 = rand(2, 4) * 3, rand(3, 4)
    r1 = x.reshape(4, 2) + 1
    w = np.where(r1 > 0, r1, 0)
    rs = 3 * w
    p0i = rs[:, :1].astype(np.int32)
    pm = rs[:, 1:].mean(axis=1).astype(np.float32)
    mu = x2.mean(axis=-1, keepdims=True)
    var = ((x2 - mu) ** 2).mean(axis=-1, keepdims=True)
    ln = ((x2 - mu) / np.sqrt(var + 1e-5) * gamma + beta).astype(np.float32)
    save_model(model(g, 17), "opset17", [([x, x2], [p0i, pm, ln])])


# ---- hostile and malformed models ------------------------------------------

def simple_graph(inits=(), nodes=None, inputs=None, outputs=None, name="g"):
    if nodes is None:
        nodes = [helper.make_node("Identity", ["x"], ["y"])]
    if inputs is None:
        inputs = [helper.make_tensor_value_info("x", F, [2])]
    if outputs is None:
        outputs = [helper.make_tensor_value_info("y", F, [2])]
    return helper.make_graph(nodes, name, inputs, outputs, list(inits))


def with_init(t, opset=13):
    """A model whose only job is to hold initializer t."""
    g = simple_graph(
        [t], [helper.make_node("Identity", [t.name], ["y"])], [],
        [helper.make_tensor_value_info("y", t.data_type or F, None)])
    return model(g, opset, check=False)


def raw_tensor(name, dims, data=b"", dtype=F):
    t = TensorProto()
    t.name = name
    t.data_type = dtype
    t.dims.extend(dims)
    t.raw_data = data
    return t


def nested_if(depth):
    """If nodes nested `depth` deep in then_branch."""
    def leaf(d):
        return simple_graph(
            inputs=[], name="leaf%d" % d,
            nodes=[helper.make_node("Identity", ["x"], ["e%d" % d])],
            outputs=[helper.make_tensor_value_info("e%d" % d, F, [2])])
    inner = leaf(depth)
    for d in range(depth):
        node = helper.make_node("If", ["c"], ["y%d" % d], name="if%d" % d,
                                then_branch=inner, else_branch=leaf(d))
        inner = helper.make_graph(
            [node], "level%d" % d, [],
            [helper.make_tensor_value_info("y%d" % d, F, [2])])
    g = helper.make_graph(
        list(inner.node), "nested",
        [helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", F, [2])],
        [helper.make_tensor_value_info("y%d" % (depth - 1), F, [2])])
    return model(g, 13, check=False)


def gen_bad():
    good = model(simple_graph(), 13).SerializeToString()
    write_bad("truncated", good[:len(good) // 2])
    # field 7 (graph) sent as a varint instead of a length-delimited message
    write_bad("wire_type", b"\x08\x08" + b"\x38\x05")
    write_bad("neg_dim", with_init(raw_tensor("w", [-1, 2])))
    write_bad("huge_dim", with_init(raw_tensor("w", [1 << 62])))
    write_bad("overflow_dims",
              with_init(raw_tensor("w", [1 << 32, 1 << 32, 1 << 32])))
    write_bad("too_many_dims", with_init(raw_tensor("w", [1] * 9, b"\0" * 4)))
    write_bad("raw_mismatch", with_init(raw_tensor("w", [2, 3], b"\0" * 20)))
    write_bad("claim_10gb",
              with_init(raw_tensor("w", [10 * (1 << 30) // 4], b"\0" * 4)))
    t = raw_tensor("w", [10 * (1 << 30) // 4])
    t.ClearField("raw_data")
    write_bad("claim_10gb_no_data", with_init(t))
    t = raw_tensor("w", [2, 3])
    t.ClearField("raw_data")
    t.float_data.extend([1, 2, 3, 4, 5])
    write_bad("typed_count", with_init(t))
    t = TensorProto()
    t.name, t.data_type = "w", TensorProto.STRING
    t.dims.append(1)
    t.string_data.append(b"hi")
    write_bad("string_tensor", with_init(t))

    def ext(location, offset, length, dims):
        t = raw_tensor("w", dims)
        t.ClearField("raw_data")
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", location), ("offset", str(offset)),
                     ("length", str(length))):
            e = t.external_data.add()
            e.key, e.value = k, v
        return with_init(t)
    with open(os.path.join(BAD, "small.bin"), "wb") as f:
        f.write(bytes(range(16)))
    write_bad("ext_abs", ext("/etc/passwd", 0, 8, [2]))
    write_bad("ext_dotdot", ext("../models/external.bin", 0, 8, [2]))
    write_bad("ext_dotdot_mid", ext("sub/../../models/external.bin", 0, 8,
                                    [2]))
    write_bad("ext_symlink", ext("link.bin", 0, 8, [2]))
    write_bad("ext_past_end", ext("small.bin", 8, 24, [6]))
    write_bad("ext_offset_huge", ext("small.bin", (1 << 63) - 1, 8, [2]))
    write_bad("ext_length_mismatch", ext("small.bin", 0, 12, [2]))
    write_bad("ext_missing", ext("missing.bin", 0, 8, [2]))
    write_bad("claim_10gb_ext",
              ext("small.bin", 0, 10 << 30, [10 * (1 << 30) // 4]))
    write_bad("nested_if_100", nested_if(100))
    write_bad("nested_if_33", nested_if(33))
    write_bad("unknown_op", model(simple_graph(
        nodes=[helper.make_node("FooBar", ["x"], ["y"], name="foo")]), 13,
        check=False))
    m = model(simple_graph(nodes=[helper.make_node(
        "FusedMatMul", ["x", "x"], ["y"], name="fused",
        domain="com.microsoft")]), 13, check=False)
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write_bad("domain", m)
    write_bad("undefined_input", model(simple_graph(
        nodes=[helper.make_node("Relu", ["nope"], ["y"], name="relu")]), 13,
        check=False))
    write_bad("duplicate", model(simple_graph(
        nodes=[helper.make_node("Relu", ["x"], ["y"], name="r1"),
               helper.make_node("Relu", ["x"], ["y"], name="r2")]), 13,
        check=False))
    write_bad("attr_kind", model(simple_graph(
        nodes=[helper.make_node("Softmax", ["x"], ["y"], name="sm",
                                axis="one")]), 13, check=False))
    write_bad("unknown_attr", model(simple_graph(
        nodes=[helper.make_node("Relu", ["x"], ["y"], name="relu",
                                foo=3)]), 13, check=False))
    m = model(simple_graph(), 13, check=False)
    del m.opset_import[:]
    m.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    write_bad("no_opset", m)
    # Dropout-6 trains unless is_test = 1: a form Smelt does not read
    write_bad("old_opset", model(simple_graph(nodes=[helper.make_node(
        "Dropout", ["x"], ["y"], name="drop")]), 5, check=False,
        ir_version=3))
    seq = helper.make_tensor_sequence_value_info("x", F, [2])
    write_bad("sequence_input", model(simple_graph(inputs=[seq]), 13,
                                      check=False))
    # else_branch reads a value then_branch defines
    then_g = simple_graph(inputs=[], nodes=[
        helper.make_node("Relu", ["x"], ["t"])],
        outputs=[helper.make_tensor_value_info("t", F, [2])])
    else_g = simple_graph(inputs=[], nodes=[
        helper.make_node("Neg", ["t"], ["e"])],
        outputs=[helper.make_tensor_value_info("e", F, [2])])
    g = simple_graph(
        nodes=[helper.make_node("If", ["c"], ["y"], name="if",
                                then_branch=then_g, else_branch=else_g)],
        inputs=[helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                helper.make_tensor_value_info("x", F, [2])])
    write_bad("sibling_scope", model(g, 13, check=False))
    g = simple_graph(
        nodes=[helper.make_node("If", ["c"], ["y"], name="if",
                                then_branch=then_g)],
        inputs=[helper.make_tensor_value_info("c", TensorProto.BOOL, []),
                helper.make_tensor_value_info("x", F, [2])])
    write_bad("if_missing_branch", model(g, 13, check=False))
    write_bad("not_onnx", b"graph g(%x: f32[2]) {\n  return %x\n}\n")
    # inputs that used to load with a changed meaning
    n = helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=0)
    n.attribute.extend([helper.make_attribute("axis", -1)])
    write_bad("dup_attr", model(simple_graph(nodes=[n]), 13, check=False))
    n = helper.make_node("LeakyRelu", ["x"], ["y"], name="lrelu")
    a = n.attribute.add()
    a.name = "alpha"
    a.type = onnx.AttributeProto.FLOAT
    write_bad("float_attr_no_value", model(simple_graph(nodes=[n]), 13,
                                           check=False))
    for name, dtype, value in (("int32_u8_range", TensorProto.UINT8, 300),
                               ("int32_i8_range", TensorProto.INT8, -129),
                               ("int32_f16_range", TensorProto.FLOAT16,
                                0x10000)):
        t = TensorProto()
        t.name = "w"
        t.data_type = dtype
        t.dims.extend([2])
        t.int32_data.extend([1, value])
        write_bad(name, with_init(t))
    # loads and verifies; fails only when run (index 5 of a 3-row table)
    g = simple_graph(
        [init("table", rand(3, 2)), init("idx", np.array([5], np.int64))],
        nodes=[helper.make_node("Gather", ["table", "idx"], ["y"],
                                name="gather", axis=0)],
        inputs=[], outputs=[helper.make_tensor_value_info("y", F, [1, 2])])
    write_bad("gather_oob", model(g, 13, check=False))


def main():
    os.makedirs(MODELS, exist_ok=True)
    os.makedirs(BAD, exist_ok=True)
    for gen in (gen_mlp, gen_conv, gen_typed, gen_legacy9, gen_opset11,
                gen_if, gen_loop, gen_external, gen_opset17, gen_bad):
        gen()
    print("wrote", MODELS, "and", BAD, file=sys.stderr)


if __name__ == "__main__":
    main()
