#!/usr/bin/python3
"""`smelt quantize --dynamic` end to end (docs/QUANTIZATION.md).

    test_quantize.py SMELT ROOT WORKDIR

On an MLP (Gemm with transB and bias, MatMul, Relu) and a small CNN
(Conv with bias, Relu, Flatten, Gemm) written here with onnx.helper:
the quantized file passes onnx.checker's full check and holds the ops
ONNX Runtime's quantizer writes; Smelt's output on it stays within
cosine 0.999 of the f32 model; ONNX Runtime (bench/peers, when
installed) runs the same file to the same outputs as Smelt; --report
prints one line per layer; --tolerance 0 and --exclude keep layers f32.
A QDQ model (QuantizeLinear -> DequantizeLinear on the activations, u8;
s8 weights per channel, DequantizeLinear'd), as quantizers write it,
runs as a plan on the int8 kernels (the qdq pass) and matches the
reference interpreter's dequantize-then-f32 result and ONNX Runtime.
Exits 77 (a ctest skip) without python3-onnx and numpy.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnx.checker
    from onnx import TensorProto, helper, numpy_helper
except ImportError:
    print("SKIP: needs python3-onnx and python3-numpy")
    sys.exit(77)

SMELT, ROOT, WORK = sys.argv[1:4]
F = TensorProto.FLOAT
rng = np.random.default_rng(7)


def init(name, a):
    return numpy_helper.from_array(a.astype(np.float32), name)


def save(nodes, inits, x_shape, y_shape, name):
    g = helper.make_graph(nodes, name,
                          [helper.make_tensor_value_info("x", F, x_shape)],
                          [helper.make_tensor_value_info("y", F, y_shape)],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    path = os.path.join(WORK, name + ".onnx")
    onnx.save(m, path)
    return path


def mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], name="fc1",
                         transB=1),
        helper.make_node("Relu", ["h1"], ["r1"], name="relu1"),
        helper.make_node("MatMul", ["r1", "w2"], ["h2"], name="fc2"),
        helper.make_node("Relu", ["h2"], ["r2"], name="relu2"),
        helper.make_node("Gemm", ["r2", "w3", "b3"], ["y"], name="fc3"),
    ]
    inits = [init("w1", rng.normal(0, 0.2, (48, 37))),
             init("b1", rng.normal(0, 0.1, 48)),
             init("w2", rng.normal(0, 0.2, (48, 33))),
             init("w3", rng.normal(0, 0.2, (33, 10))),
             init("b3", rng.normal(0, 0.1, 10))]
    return save(nodes, inits, [5, 37], [5, 10], "mlp"), ["fc1", "fc2", "fc3"]


def cnn():
    nodes = [
        helper.make_node("Conv", ["x", "cw", "cb"], ["c"], name="conv",
                         pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Flatten", ["r"], ["f"], name="flat"),
        helper.make_node("Gemm", ["f", "fw"], ["y"], name="fc"),
    ]
    inits = [init("cw", rng.normal(0, 0.3, (6, 3, 3, 3))),
             init("cb", rng.normal(0, 0.1, 6)),
             init("fw", rng.normal(0, 0.1, (6 * 5 * 5, 4)))]
    return (save(nodes, inits, [2, 3, 9, 9], [2, 4], "cnn"), ["conv", "fc"])


def smelt(*args):
    r = subprocess.run([SMELT] + list(args), capture_output=True, text=True)
    if r.returncode:
        sys.exit("smelt %s failed:\n%s%s" % (" ".join(args), r.stdout,
                                             r.stderr))
    return r.stdout + r.stderr


def run(model, x_path, tag):
    out = os.path.join(WORK, tag)
    smelt("run", model, "--input", "x=" + x_path, "--output-dir", out)
    return np.load(os.path.join(out, "y.npy"))


def ort_run(model, x):
    """ONNX Runtime's y on x, or None when it is not installed."""
    mods = os.path.join(ROOT, "bench", "peers", "node_modules")
    if not os.path.isdir(os.path.join(mods, "onnxruntime-node")):
        return None
    js = """
const ort = require(process.argv[2] + '/onnxruntime-node');
(async () => {
  const s = await ort.InferenceSession.create(process.argv[3]);
  const shape = JSON.parse(process.argv[4]);
  const x = new Float32Array(JSON.parse(process.argv[5]));
  const r = await s.run({x: new ort.Tensor('float32', x, shape)});
  console.log(JSON.stringify(Array.from(r.y.data)));
})().catch(e => { console.error(e.message); process.exit(1); });
"""
    r = subprocess.run(["node", "-e", js, "-", mods, model,
                        json.dumps(list(x.shape)),
                        json.dumps([float(v) for v in x.ravel()])],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit("onnxruntime failed on %s: %s" % (model, r.stderr))
    return np.array(json.loads(r.stdout.strip().splitlines()[-1]),
                    np.float32)


def cosine(a, b):
    a, b = a.ravel().astype(np.float64), b.ravel().astype(np.float64)
    return float(a @ b / np.sqrt((a @ a) * (b @ b)))


def ops(path):
    return [n.op_type for n in onnx.load(path).graph.node]


def check(model, layers, x):
    name = os.path.splitext(os.path.basename(model))[0]
    x_path = os.path.join(WORK, name + "_x.npy")
    np.save(x_path, x)
    q = os.path.join(WORK, name + ".int8.onnx")
    rep = smelt("quantize", model, "-o", q, "--dynamic", "--per-channel",
                "--conv", "--report", "--input", "x=" + x_path)
    for layer in layers:
        assert any(l.split()[0] == layer and l.split()[-1] == "int8"
                   for l in rep.splitlines() if l.split()), rep
    onnx.checker.check_model(onnx.load(q), full_check=True)
    kinds = ops(q)
    assert "DynamicQuantizeLinear" in kinds and "Cast" in kinds, kinds
    assert kinds.count("MatMulInteger") + kinds.count("ConvInteger") == \
        len(layers), kinds
    assert "MatMul" not in kinds and "Gemm" not in kinds, kinds
    assert not any(i.data_type == TensorProto.FLOAT and len(i.dims) == 2
                   and i.name in ("w1", "w2", "w3", "fw")
                   for i in onnx.load(q).graph.initializer), "f32 kept"
    ref = run(model, x_path, name + "_f32")
    got = run(q, x_path, name + "_int8")
    c = cosine(got, ref)
    print("%s: %d layers int8, cosine %.6f vs f32" % (name, len(layers), c))
    assert c >= 0.999, c
    o = ort_run(q, x)
    if o is None:
        print("ONNX Runtime not installed (bench/peers/setup.sh): left out")
    else:
        d = float(np.abs(o - got.ravel()).max())
        print("%s: ONNX Runtime on the int8 file, max |diff| %.3g" % (name, d))
        assert d <= 1e-4 * max(1.0, float(np.abs(got).max())), d
    # --tolerance 0: every layer adds some error, so all stay f32
    q0 = os.path.join(WORK, name + ".tol0.onnx")
    smelt("quantize", model, "-o", q0, "--dynamic", "--conv",
          "--tolerance", "0", "--input", "x=" + x_path)
    assert "MatMulInteger" not in ops(q0) and "ConvInteger" not in ops(q0)
    # --exclude keeps the first layer f32
    qe = os.path.join(WORK, name + ".ex.onnx")
    smelt("quantize", model, "-o", qe, "--dynamic", "--conv", "--exclude",
          layers[0])
    n = ops(qe).count("MatMulInteger") + ops(qe).count("ConvInteger")
    assert n == len(layers) - 1, ops(qe)


def qdq():
    """x -> Q/DQ (u8) -> MatMul by DQ(s8 per column) -> Relu -> Q/DQ ->
    Gemm by DQ(s8 per tensor) + bias."""
    w1 = rng.integers(-127, 128, (37, 24)).astype(np.int8)
    w2 = rng.integers(-127, 128, (24, 10)).astype(np.int8)
    f = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)
    u = lambda n, v: numpy_helper.from_array(np.array(v, np.uint8), n)
    inits = [f("sx", 0.02), u("zx", 128), numpy_helper.from_array(w1, "w1"),
             f("s1", rng.uniform(0.001, 0.01, 24)),
             numpy_helper.from_array(np.zeros(24, np.int8), "z1"),
             f("sh", 0.05), u("zh", 0), numpy_helper.from_array(w2, "w2"),
             f("s2", 0.004), f("b2", rng.normal(0, 0.1, 10))]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "sx", "zx"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "sx", "zx"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w1", "s1", "z1"], ["w1d"],
                         axis=1),
        helper.make_node("MatMul", ["xd", "w1d"], ["h"], name="fc1"),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "sh", "zh"], ["rq"]),
        helper.make_node("DequantizeLinear", ["rq", "sh", "zh"], ["rd"]),
        helper.make_node("DequantizeLinear", ["w2", "s2"], ["w2d"]),
        helper.make_node("Gemm", ["rd", "w2d", "b2"], ["y"], name="fc2"),
    ]
    return save(nodes, inits, [5, 37], [5, 10], "qdq")


def check_qdq(model, x):
    x_path = os.path.join(WORK, "qdq_x.npy")
    np.save(x_path, x)
    plan = smelt("run", model, "--input", "x=" + x_path, "--print-plan")
    steps = [l.split() for l in plan.splitlines()
             if l.split() and l.split()[0].isdigit()]
    kinds = [(t[1], t[2]) for t in steps]
    # each product, its rescale (and fc1's Relu, fc2's bias) one step
    assert sum(k == "FusedQMatMul" and c.startswith("qfmm_i8_")
               for k, c in kinds) == 2, plan
    assert not any(k in ("DequantizeLinear", "MatMul", "Gemm")
                   for k, c in kinds), plan
    got = run(model, x_path, "qdq_plan")
    out = os.path.join(WORK, "qdq_ref")
    smelt("run", model, "--reference", "--input", "x=" + x_path,
          "--output-dir", out)
    ref = np.load(os.path.join(out, "y.npy"))
    d = float(np.abs(got - ref).max())
    print("qdq: plan on int8 kernels vs dequantize-then-f32, max |diff| %.3g"
          % d)
    assert d <= 1e-4 * max(1.0, float(np.abs(ref).max())), d
    o = ort_run(model, x)
    if o is not None:
        d = float(np.abs(o - got.ravel()).max())
        print("qdq: ONNX Runtime, max |diff| %.3g" % d)
        assert d <= 1e-4 * max(1.0, float(np.abs(got).max())), d


os.makedirs(WORK, exist_ok=True)
check_qdq(qdq(), rng.normal(0, 1, (5, 37)).astype(np.float32))
m, layers = mlp()
check(m, layers, rng.normal(0, 1, (5, 37)).astype(np.float32))
m, layers = cnn()
check(m, layers, rng.normal(0, 1, (2, 3, 9, 9)).astype(np.float32))
print("quantize: ok")
