#!/usr/bin/python3
"""gen_op_tests.py - writes the per-op reference test suite, tests/ops/.

For every op of src/ir/ops.def this writes one or more cases, each a
directory tests/ops/<Op>_<case>/ holding

  model.ir          a small graph in the text form of docs/IR.md: the graph
                    parameters are the inputs, one op node (or an If/Loop with
                    its sub-blocks), and the return of the outputs;
  input_<i>.npy     one per graph parameter, in order;
  expected_<i>.npy  one per graph output, computed here with numpy or torch
                    (never by Smelt) following ONNX semantics (opset 17, and
                    opset 18 where ops.def takes its newer form: Split
                    num_outputs, Pad axes, reduction axes as input; Gelu
                    from opset 20; Smelt's fused ops as the comment above
                    their ops.def rows describes them).

tests/unit/test_ops.c runs every case through the reference interpreter and
compares. Inputs that ONNX models usually hold as initializers (shapes, axes,
pads, ...) are mostly written as `const` values in the graph, with a few
cases passing them as runtime inputs instead.

Run with Debian's interpreter: /usr/bin/python3 scripts/gen_op_tests.py
The output is deterministic (fixed per-op seeds, single-threaded torch, no
timestamps); the script wipes and rewrites tests/ops/ and nothing else.
"""
import math
import os
import re
import shutil
import sys
import zlib

try:
    import numpy as np
    import torch
    import torch.nn.functional as F
except ImportError as e:
    sys.exit("gen_op_tests.py: numpy and torch are required (%s); run it "
             "with /usr/bin/python3, or install python3-numpy and "
             "python3-torch" % e)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OPS_DEF = os.path.join(ROOT, "src", "ir", "ops.def")
OUT_DIR = os.path.join(ROOT, "tests", "ops")

torch.set_num_threads(1)
np.seterr(all="ignore")

f16, f32, f64 = np.float16, np.float32, np.float64
i8, i16, i32, i64, u8 = np.int8, np.int16, np.int32, np.int64, np.uint8
BOOL = np.bool_
INT64_MAX = 2**63 - 1
INT64_MIN = -2**63

DTYPE_NAMES = {
    np.dtype(f32): "f32", np.dtype(f64): "f64", np.dtype(f16): "f16",
    np.dtype(i8): "i8", np.dtype(u8): "u8", np.dtype(i16): "i16",
    np.dtype(i32): "i32", np.dtype(i64): "i64", np.dtype(BOOL): "bool",
}
# ONNX TensorProto codes for Cast.to
ONNX_CODE = {f32: 1, u8: 2, i8: 3, i16: 5, i32: 6, i64: 7, BOOL: 9,
             f16: 10, f64: 11}

# --------------------------------------------------------------------------
# IR text writing


class C:
    """An input written as a `const` value in the graph, not a parameter."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


class T:
    """A tensor-valued attribute."""

    def __init__(self, arr):
        self.arr = np.asarray(arr)


def type_str(arr, dims=None):
    """`f32[2,3]`; dims overrides the shape (symbolic names, '?')."""
    if dims is None:
        dims = arr.shape
    return "%s[%s]" % (DTYPE_NAMES[arr.dtype], ",".join(str(d) for d in dims))


def fmt_num(v, dt):
    if dt == np.dtype(BOOL):
        return "true" if v else "false"
    if dt.kind in "iu":
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    s = ("%.17g" if dt == np.dtype(f64) else "%.9g") % v
    if not any(ch in s for ch in ".en"):
        s += ".0"
    return s


def literal(arr):
    if arr.ndim == 0:
        return fmt_num(arr.item(), arr.dtype)
    return "[" + ", ".join(fmt_num(v, arr.dtype) for v in arr.ravel()) + "]"


def fmt_attr(v):
    if isinstance(v, T):
        return "tensor %s %s" % (type_str(v.arr), literal(v.arr))
    if isinstance(v, str):
        return '"%s"' % v
    if isinstance(v, float):
        return repr(v)  # always holds '.', 'e', 'inf' or 'nan'
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt_attr(x) for x in v) + "]"
    raise TypeError("attribute value %r" % (v,))


CASES = {}  # case name -> (model text, [inputs], [expected outputs])


def add_case(name, text, inputs, outputs):
    if name in CASES:
        raise SystemExit("duplicate case " + name)
    if not re.match(r"^[A-Za-z]+_[A-Za-z0-9_]+$", name):
        raise SystemExit("bad case name " + name)
    CASES[name] = (text, [np.asarray(a) for a in inputs],
                   [np.asarray(a) for a in outputs])


def case(op, cname, inputs, outputs, attrs=None, in_dims=None, out_dims=None):
    """One node of `op`. inputs: ndarray (graph parameter), C(ndarray)
    (graph constant) or None (absent, `_`). outputs: the expected arrays.
    attrs: ordered dict of attributes. in_dims / out_dims: optional shape
    overrides per parameter / output (symbolic dims), None entries keep."""
    name = "%s_%s" % (op, cname)
    params, consts, args, feeds = [], [], [], []
    for k, x in enumerate(inputs):
        if x is None:
            args.append("_")
        elif isinstance(x, C):
            cn = "%%c%d" % len(consts)
            consts.append("  %s: %s = const %s" % (cn, type_str(x.arr),
                                                 literal(x.arr)))
            args.append(cn)
        else:
            x = np.asarray(x)
            pn = "%%x%d" % len(params)
            dims = in_dims[k] if in_dims and k < len(in_dims) else None
            params.append("%s: %s" % (pn, type_str(x, dims)))
            args.append(pn)
            feeds.append(x)
    outs = []
    for j, y in enumerate(outputs):
        y = np.asarray(y)
        dims = out_dims[j] if out_dims and j < len(out_dims) else None
        outs.append("%%y%d: %s" % (j, type_str(y, dims)))
    attr_s = ""
    if attrs:
        attr_s = " {" + ", ".join("%s = %s" % (k, fmt_attr(v))
                                  for k, v in attrs.items()) + "}"
    lines = ["# %s: generated by scripts/gen_op_tests.py, do not edit" % name,
             "graph %s(%s) {" % (name, ", ".join(params))]
    lines += consts
    lines.append("  %s = %s(%s)%s" % (", ".join(outs), op, ", ".join(args),
                                      attr_s))
    lines.append("  return " + ", ".join("%%y%d" % j
                                         for j in range(len(outputs))))
    lines.append("}")
    add_case(name, "\n".join(lines) + "\n", feeds, outputs)


def raw_case(op, cname, body, inputs, outputs):
    """A hand-written graph (control flow): body is the text between the
    graph's braces, params are %x<i> typed from `inputs` (or from (arr,
    dims) pairs)."""
    name = "%s_%s" % (op, cname)
    params, feeds = [], []
    for k, x in enumerate(inputs):
        dims = None
        if isinstance(x, tuple):
            x, dims = x
        x = np.asarray(x)
        params.append("%%x%d: %s" % (k, type_str(x, dims)))
        feeds.append(x)
    text = ("# %s: generated by scripts/gen_op_tests.py, do not edit\n"
            "graph %s(%s) {\n%s}\n" % (name, name, ", ".join(params),
                                       body.strip("\n") + "\n"))
    add_case(name, text, feeds, outputs)


# --------------------------------------------------------------------------
# data

R = None


def seed(tag):
    """Per-op generator so that adding a case elsewhere changes nothing."""
    global R
    R = np.random.default_rng(zlib.crc32(tag.encode()))


def rf(*shape, lo=-2.0, hi=2.0, dt=f32):
    return R.uniform(lo, hi, shape).astype(dt)


def ri(*shape, lo=-5, hi=6, dt=i32):
    return R.integers(lo, hi, shape).astype(dt)


def rb(*shape):
    return R.integers(0, 2, shape).astype(BOOL)


def d(a):
    return np.asarray(a).astype(f64)


def like(y, x):
    return np.asarray(y).astype(np.asarray(x).dtype)


# --------------------------------------------------------------------------
# elementwise unary
# Each float op: f32 [3,5] in its domain; f64 and/or f16 variants; special
# values (nan/inf) where the op defines them; integer forms where ONNX allows
# them (Neg, Abs, Relu); a symbolic batch dim on Relu and Exp.

UNARY = {
    # name: (f64 function, lo, hi, extra dtypes)
    "Neg": (np.negative, -3, 3, [f64, f16]),
    "Abs": (np.abs, -3, 3, [f64]),
    "Sqrt": (np.sqrt, 0.01, 4, [f64, f16]),
    "Exp": (np.exp, -3, 3, [f64, f16]),
    "Log": (np.log, 0.01, 4, [f64]),
    "Tanh": (np.tanh, -3, 3, [f64]),
    "Sigmoid": (lambda x: 1.0 / (1.0 + np.exp(-x)), -6, 6, [f64, f16]),
    "Relu": (lambda x: np.maximum(x, 0), -3, 3, [f64, f16]),
    "Erf": (np.vectorize(math.erf, otypes=[f64]), -3, 3, [f64]),
    "Reciprocal": (np.reciprocal, 0.25, 3, [f64]),
    "Floor": (np.floor, -4, 4, [f64]),
    "Ceil": (np.ceil, -4, 4, [f64]),
    "Sin": (np.sin, -4, 4, [f64]),
    "Cos": (np.cos, -4, 4, [f64]),
    "Softplus": (lambda x: np.log1p(np.exp(x)), -5, 5, [f64]),
}


def gen_unary():
    for op, (fn, lo, hi, extra) in UNARY.items():
        seed(op)
        x = rf(3, 5, lo=lo, hi=hi)
        case(op, "f32", [x], [like(fn(d(x)), x)])
        for dt in extra:
            x = rf(2, 7, lo=lo, hi=hi, dt=dt)
            case(op, DTYPE_NAMES[np.dtype(dt)], [x], [like(fn(d(x)), x)])
        x = rf(11, lo=lo, hi=hi)
        case(op, "1d_odd", [x], [like(fn(d(x)), x)])
    seed("unary-special")
    # integers and special values
    x = ri(3, 4)
    case("Neg", "i32", [x], [-x])
    x = ri(2, 5, dt=i64)
    case("Neg", "i64", [x], [-x])
    x = ri(3, 4)
    case("Abs", "i32", [x], [np.abs(x)])
    x = ri(5, dt=i64)
    case("Abs", "i64", [x], [np.abs(x)])
    x = ri(2, 3, dt=i32)
    case("Relu", "i32", [x], [np.maximum(x, 0)])
    x = ri(7, dt=i64)
    case("Relu", "i64", [x], [np.maximum(x, 0)])
    x = rf(4, 3)
    case("Relu", "sym", [x], [np.maximum(x, 0)],
         in_dims=[("batch", 3)], out_dims=[("batch", 3)])
    x = rf(2, 3)
    case("Exp", "sym", [x], [like(np.exp(d(x)), x)],
         in_dims=[("n", "m")], out_dims=[("n", "m")])
    x = np.array([-1.0, 0.0, 4.0, np.inf, np.nan], f32)
    case("Sqrt", "special", [x], [like(np.sqrt(d(x)), x)])
    x = np.array([-1.0, 0.0, 1.0, np.inf, np.nan], f32)
    case("Log", "special", [x], [like(np.log(d(x)), x)])
    x = np.array([-np.inf, -100.0, 0.0, 100.0, np.inf], f32)
    case("Exp", "special", [x], [like(np.exp(d(x)), x)])
    case("Tanh", "special", [x], [like(np.tanh(d(x)), x)])
    case("Sigmoid", "special", [x],
         [like(1.0 / (1.0 + np.exp(-d(x))), x)])
    x = np.array([-2.5, -1.5, -0.5, -0.0, 0.5, 1.5, 2.0, -2.0], f32)
    case("Floor", "halves", [x], [np.floor(x)])
    case("Ceil", "halves", [x], [np.ceil(x)])
    x = np.array([0.0, -0.0, 2.0, -4.0], f32)
    case("Reciprocal", "zero", [x], [like(1.0 / d(x), x)])
    x = np.array([-30.0, -1.0, 0.0, 1.0, 30.0], f32)
    case("Softplus", "wide", [x], [like(np.log1p(np.exp(d(x))), x)])


def gen_identity():
    # Identity: f32, i64, bool, f16, a 0-d scalar, a symbolic dim
    seed("Identity")
    for dt in (f32, f16):
        x = rf(2, 3, dt=dt)
        case("Identity", DTYPE_NAMES[np.dtype(dt)], [x], [x])
    x = ri(4, dt=i64)
    case("Identity", "i64", [x], [x])
    x = rb(3, 2)
    case("Identity", "bool", [x], [x])
    x = np.array(2.5, f32)
    case("Identity", "scalar", [x], [x])
    x = rf(3, 2)
    case("Identity", "sym", [x], [x], in_dims=[("b", 2)], out_dims=[("b", 2)])


def gen_leakyrelu():
    # LeakyRelu: default alpha 0.01; alpha 0.2; f64; alpha 0 on f16
    seed("LeakyRelu")
    lr = lambda x, a: np.where(d(x) < 0, a * d(x), d(x))
    x = rf(3, 4)
    case("LeakyRelu", "default", [x], [like(lr(x, 0.01), x)])
    x = rf(2, 5)
    case("LeakyRelu", "alpha", [x], [like(lr(x, 0.2), x)], {"alpha": 0.2})
    x = rf(7, dt=f64)
    case("LeakyRelu", "f64", [x], [like(lr(x, 1.5), x)], {"alpha": 1.5})
    x = rf(2, 3, dt=f16)
    case("LeakyRelu", "f16", [x], [like(lr(x, 0.5), x)], {"alpha": 0.5})


def gen_not():
    # Not: bool 2-D, bool scalar
    seed("Not")
    x = rb(3, 4)
    case("Not", "bool", [x], [~x])
    case("Not", "scalar", [np.array(True)], [np.array(False)])


def gen_clip():
    # Clip (opset 13): min and max as optional scalar inputs: none, min
    # only, max only (min `_`), both (as parameters and as constants), ints
    seed("Clip")
    x = rf(3, 4, lo=-3, hi=3)
    case("Clip", "none", [x], [x])
    lo = np.array(-0.5, f32)
    hi = np.array(1.25, f32)
    case("Clip", "min_only", [x, lo], [np.maximum(x, lo)])
    case("Clip", "max_only", [x, None, hi], [np.minimum(x, hi)])
    case("Clip", "both", [x, lo, hi], [np.clip(x, lo, hi)])
    x = rf(2, 5, lo=-3, hi=3)
    case("Clip", "both_const", [x, C(lo), C(hi)], [np.clip(x, lo, hi)])
    x = ri(3, 5, lo=-10, hi=10)
    case("Clip", "i32", [x, C(np.array(-3, i32)), C(np.array(4, i32))],
         [np.clip(x, -3, 4).astype(i32)])
    x = ri(6, lo=-10, hi=10, dt=i64)
    case("Clip", "i64_max", [x, None, C(np.array(2, i64))],
         [np.minimum(x, 2)])
    x = rf(5, dt=f64)
    case("Clip", "f64", [x, np.array(-1.0), np.array(0.5)],
         [np.clip(x, -1.0, 0.5)])


def gen_cast():
    # Cast: f32->i32/i64 (truncation toward zero), f32->f16 (incl. overflow
    # to inf, saturate=0), f16->f32, f32<->f64, i64->f32, i32<->i64,
    # f32->bool / bool->f32 / bool->i64, i32->bool, f32->u8 / u8->i32,
    # f32->i8, f32->i16; bf16 is skipped (numpy cannot represent it).
    seed("Cast")
    x = np.array([[-2.7, -1.5, -0.4, 0.0], [0.4, 1.5, 2.7, 100.9]], f32)
    case("Cast", "f32_i32", [x], [x.astype(i32)], {"to": ONNX_CODE[i32]})
    case("Cast", "f32_i64", [x], [x.astype(i64)], {"to": ONNX_CODE[i64]})
    case("Cast", "f32_bool", [x], [x.astype(BOOL)], {"to": ONNX_CODE[BOOL]})
    x = np.array([0.1, -3.14159, 65504.0, 1e5, -1e-8, 1.0 / 3], f32)
    case("Cast", "f32_f16", [x], [x.astype(f16)], {"to": ONNX_CODE[f16]})
    case("Cast", "f32_f16_nosat", [x], [x.astype(f16)],
         {"to": ONNX_CODE[f16], "saturate": 0})
    x = rf(3, 3, dt=f16)
    case("Cast", "f16_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    x = rf(2, 3)
    case("Cast", "f32_f64", [x], [x.astype(f64)], {"to": ONNX_CODE[f64]})
    x = rf(5, dt=f64) / 3
    case("Cast", "f64_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    x = ri(2, 4, lo=-1000, hi=1000, dt=i64)
    case("Cast", "i64_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    case("Cast", "i64_i32", [x], [x.astype(i32)], {"to": ONNX_CODE[i32]})
    x = ri(5, lo=-3, hi=3)
    case("Cast", "i32_i64", [x], [x.astype(i64)], {"to": ONNX_CODE[i64]})
    case("Cast", "i32_bool", [x], [x.astype(BOOL)], {"to": ONNX_CODE[BOOL]})
    x = rb(2, 3)
    case("Cast", "bool_f32", [x], [x.astype(f32)], {"to": ONNX_CODE[f32]})
    case("Cast", "bool_i64", [x], [x.astype(i64)], {"to": ONNX_CODE[i64]})
    x = np.array([0.0, 1.9, 127.5, 200.0, 255.0], f32)
    case("Cast", "f32_u8", [x], [x.astype(u8)], {"to": ONNX_CODE[u8]})
    x = np.array([0, 7, 128, 255], u8)
    case("Cast", "u8_i32", [x], [x.astype(i32)], {"to": ONNX_CODE[i32]})
    x = np.array([-128.0, -3.9, 0.5, 127.0], f32)
    case("Cast", "f32_i8", [x], [x.astype(i8)], {"to": ONNX_CODE[i8]})
    x = np.array([-32768.0, -300.7, 0.0, 32767.0], f32)
    case("Cast", "f32_i16", [x], [x.astype(i16)], {"to": ONNX_CODE[i16]})
    x = rf(3, 2)
    case("Cast", "f32_f32", [x], [x], {"to": ONNX_CODE[f32]})


def gen_dropout():
    # Dropout at inference (training_mode absent or false): the identity,
    # and the optional mask output all true; ratio given; seed set.
    seed("Dropout")
    x = rf(3, 4)
    case("Dropout", "basic", [x], [x])
    case("Dropout", "mask", [x], [x, np.ones(x.shape, BOOL)])
    x = rf(2, 5)
    case("Dropout", "ratio", [x, C(np.array(0.5, f32)),
                              C(np.array(False))],
         [x, np.ones(x.shape, BOOL)], {"seed": 3})
    x = rf(4, dt=f64)
    case("Dropout", "f64_absent_ratio", [x, None, np.array(False)], [x])


# --------------------------------------------------------------------------
# broadcasting binary and n-ary
# Add/Sub/Mul: same shape; [2,3,4] with [4]; [2,1,4] with [3,1]; with a
# 0-d scalar; f64, f16, i32, i64, u8 (no overflow); a symbolic batch dim.


def gen_arith():
    fns = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply}
    for op, fn in fns.items():
        seed(op)
        a, b = rf(3, 4), rf(3, 4)
        case(op, "same", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = rf(2, 3, 4), rf(4)
        case(op, "bcast_row", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = rf(2, 1, 4), rf(3, 1)
        case(op, "bcast_both", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = np.array(1.5, f32), rf(2, 3)
        case(op, "scalar_left", [a, b], [like(fn(d(a), d(b)), b)])
        a, b = rf(5), np.array(-0.25, f32)
        case(op, "scalar_right", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = rf(2, 3, dt=f64), rf(1, 3, dt=f64)
        case(op, "f64", [a, b], [fn(a, b)])
        a, b = rf(3, 3, dt=f16), rf(3, 1, dt=f16)
        case(op, "f16", [a, b], [like(fn(d(a), d(b)), a)])
        a, b = ri(3, 4), ri(4)
        case(op, "i32", [a, b], [fn(a, b).astype(i32)])
        a, b = ri(2, 3, dt=i64), ri(2, 1, dt=i64)
        case(op, "i64", [a, b], [fn(a, b)])
        a, b = rf(4, 3), rf(3)
        case(op, "sym", [a, b], [like(fn(d(a), d(b)), a)],
             in_dims=[("batch", 3)], out_dims=[("batch", 3)])
    a = R.integers(10, 100, (2, 3)).astype(u8)
    b = R.integers(0, 10, (3,)).astype(u8)
    case("Add", "u8", [a, b], [(a.astype(i32) + b).astype(u8)])
    case("Sub", "u8", [a, b], [(a.astype(i32) - b).astype(u8)])
    case("Add", "big_i64", [np.array([2**40, -2**50], i64),
                            np.array([3, 2**52 + 1], i64)],
         [np.array([2**40 + 3, -2**50 + 2**52 + 1], i64)])


def trunc_div(a, b):
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype)


def gen_div():
    # Div: f32 same and broadcast, f64, division by zero (inf/nan), integer
    # division truncating toward zero (as C and ONNX Runtime) on i32 and
    # i64 with negative operands, a symbolic dim
    seed("Div")
    a, b = rf(3, 4), rf(3, 4, lo=0.5, hi=2)
    case("Div", "same", [a, b], [like(d(a) / d(b), a)])
    a, b = rf(2, 3, 4), rf(3, 1, lo=-2, hi=-0.5)
    case("Div", "bcast", [a, b], [like(d(a) / d(b), a)])
    a, b = rf(5, dt=f64), rf(5, lo=1, hi=3, dt=f64)
    case("Div", "f64", [a, b], [a / b])
    a = np.array([1.0, -1.0, 0.0, 2.0], f32)
    b = np.array([0.0, 0.0, 0.0, np.inf], f32)
    case("Div", "by_zero", [a, b], [like(d(a) / d(b), a)])
    a = np.array([7, -7, 7, -7, 0, 1, -1, 9], i32)
    b = np.array([2, 2, -2, -2, 3, 3, 3, -4], i32)
    case("Div", "i32_trunc", [a, b], [trunc_div(a, b)])
    a = ri(3, 4, lo=-100, hi=100, dt=i64)
    b = np.array([3, -5, 7, -2], i64)
    case("Div", "i64_bcast", [a, b], [trunc_div(a, b)])
    a, b = rf(3, 2), np.array(4.0, f32)
    case("Div", "sym", [a, b], [like(d(a) / 4.0, a)],
         in_dims=[("n", 2)], out_dims=[("n", 2)])


def gen_pow():
    # Pow: f32^f32 (positive base), f32 with exponent scalar 2.0, f32
    # (negative base) with i32 and i64 integer exponents (ONNX allows the
    # exponent a different type; the output has the base's type), i64^i64,
    # f64, 0^0 = 1
    seed("Pow")
    a, b = rf(3, 4, lo=0.1, hi=3), rf(3, 4, lo=-2, hi=2)
    case("Pow", "f32", [a, b], [like(np.power(d(a), d(b)), a)])
    a = rf(2, 5)
    case("Pow", "square", [a, C(np.array(2.0, f32))],
         [like(d(a) ** 2, a)])
    a, b = rf(2, 3, lo=-3, hi=3), np.array([2, 3, -1], i32)
    case("Pow", "int_exp_i32", [a, b], [like(np.power(d(a), d(b)), a)])
    a, b = rf(4, lo=-2, hi=2), np.array(3, i64)
    case("Pow", "int_exp_i64", [a, b], [like(np.power(d(a), 3.0), a)])
    a, b = ri(2, 3, lo=-4, hi=5, dt=i64), ri(3, lo=0, hi=4, dt=i64)
    case("Pow", "i64", [a, b], [np.power(a, b)])
    a, b = rf(3, lo=0.5, hi=2, dt=f64), rf(2, 1, dt=f64)
    case("Pow", "f64_bcast", [a, b], [np.power(a, b)])
    a = np.array([0.0, 0.0, 2.0, -2.0], f32)
    b = np.array([0.0, 2.0, -1.0, 0.5], f32)
    case("Pow", "special", [a, b], [like(np.power(d(a), d(b)), a)])


def gen_minmax_sum():
    # Min/Max/Sum (variadic): one input, two same shape, three inputs with
    # broadcasting, i32, i64, f64
    for op, fn in (("Min", np.minimum), ("Max", np.maximum),
                   ("Sum", np.add)):
        seed(op)
        a = rf(3, 4)
        case(op, "one", [a], [a])
        a, b = rf(3, 4), rf(3, 4)
        case(op, "two", [a, b], [like(fn(d(a), d(b)), a)])
        a, b, c = rf(2, 3, 1), rf(4), rf(3, 1)
        case(op, "three_bcast", [a, b, c],
             [like(fn(fn(d(a), d(b)), d(c)), a)])
        a, b = ri(2, 3), ri(1, 3)
        case(op, "i32", [a, b], [fn(a, b).astype(i32)])
        a, b, c = ri(4, dt=i64), ri(4, dt=i64), ri(1, dt=i64)
        case(op, "i64", [a, b, c], [fn(fn(a, b), c)])
        a, b = rf(2, 2, dt=f64), rf(2, 2, dt=f64)
        case(op, "f64", [a, b], [fn(a, b)])
        a, b = rf(2, 3, dt=f16), rf(3, dt=f16)
        case(op, "f16", [a, b], [like(fn(d(a), d(b)), a)])


def gen_compare():
    # Equal/Less/Greater: f32 with ties, broadcast, i64, i32 scalar, bool
    # (Equal), output bool; a symbolic dim
    for op, fn in (("Equal", np.equal), ("Less", np.less),
                   ("Greater", np.greater)):
        seed(op)
        a = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 2.5]], f32)
        b = np.array([[1.0, 3.0, 2.0], [-1.0, -0.0, 2.5]], f32)
        case(op, "f32", [a, b], [fn(a, b)])
        a, b = ri(2, 3, 4, lo=-2, hi=3).astype(f32), ri(4, lo=-2, hi=3)
        case(op, "bcast", [a, b.astype(f32)], [fn(a, b)])
        a, b = ri(3, 4, lo=-2, hi=3, dt=i64), ri(3, 1, lo=-2, hi=3, dt=i64)
        case(op, "i64", [a, b], [fn(a, b)])
        a, b = ri(5, lo=-2, hi=3), np.array(0, i32)
        case(op, "i32_scalar", [a, b], [fn(a, b)])
        a, b = rf(4, 2), rf(2)
        case(op, "sym", [a, b], [fn(a, b)],
             in_dims=[("n", 2)], out_dims=[("n", 2)])
        a = np.array([np.nan, 1.0, np.inf, -np.inf], f32)
        b = np.array([np.nan, np.nan, np.inf, 0.0], f32)
        case(op, "special", [a, b], [fn(a, b)])
    seed("Equal-bool")
    a, b = rb(2, 3), rb(3)
    case("Equal", "bool", [a, b], [a == b])


def gen_logic():
    # And/Or: bool same shape, broadcast, scalar
    for op, fn in (("And", np.logical_and), ("Or", np.logical_or)):
        seed(op)
        a, b = rb(3, 4), rb(3, 4)
        case(op, "same", [a, b], [fn(a, b)])
        a, b = rb(2, 1, 3), rb(4, 1)
        case(op, "bcast", [a, b], [fn(a, b)])
        a, b = rb(5), np.array(op == "And")
        case(op, "scalar", [a, b], [fn(a, b)])


def gen_where():
    # Where: same shape f32; all three broadcast; i64; bool values; scalar
    # branch values
    seed("Where")
    c, x, y = rb(3, 4), rf(3, 4), rf(3, 4)
    case("Where", "same", [c, x, y], [np.where(c, x, y)])
    c, x, y = rb(3, 1), rf(1, 4), rf(2, 1, 1)
    case("Where", "bcast", [c, x, y], [np.where(c, x, y)])
    c, x, y = rb(5), ri(5, dt=i64), ri(1, dt=i64)
    case("Where", "i64", [c, x, y], [np.where(c, x, y)])
    c, x, y = rb(2, 3), rb(2, 3), rb(3)
    case("Where", "bool", [c, x, y], [np.where(c, x, y)])
    c = rb(2, 3)
    x, y = np.array(1.0, f32), np.array(-1.0, f32)
    case("Where", "scalars", [c, x, y], [np.where(c, x, y).astype(f32)])


# --------------------------------------------------------------------------
# contractions


def gen_matmul():
    # MatMul: 2-D; 1-D x 2-D; 2-D x 1-D; 1-D x 1-D (0-d result); batched
    # 3-D x 2-D; broadcast batch dims [2,1,3,4] x [3,4,5]; f64; f16; i32; i64;
    # odd sizes; a symbolic batch dim
    seed("MatMul")
    mm = lambda a, b: like(np.matmul(d(a), d(b)), a)
    a, b = rf(3, 4), rf(4, 5)
    case("MatMul", "2d", [a, b], [mm(a, b)])
    a, b = rf(4), rf(4, 3)
    case("MatMul", "1d_2d", [a, b], [mm(a, b)])
    a, b = rf(2, 4), rf(4)
    case("MatMul", "2d_1d", [a, b], [mm(a, b)])
    a, b = rf(5), rf(5)
    case("MatMul", "1d_1d", [a, b], [mm(a, b)])
    a, b = rf(2, 3, 4), rf(4, 2)
    case("MatMul", "batched", [a, b], [mm(a, b)])
    a, b = rf(2, 1, 3, 4), rf(3, 4, 5)
    case("MatMul", "bcast_batch", [a, b], [mm(a, b)])
    a, b = rf(4), rf(2, 4, 3)
    case("MatMul", "1d_3d", [a, b], [mm(a, b)])
    a, b = rf(3, 7, dt=f64), rf(7, 1, dt=f64)
    case("MatMul", "f64", [a, b], [np.matmul(a, b)])
    a, b = rf(2, 3, dt=f16), rf(3, 4, dt=f16)
    case("MatMul", "f16", [a, b], [mm(a, b)])
    a, b = ri(2, 3), ri(3, 2)
    case("MatMul", "i32", [a, b], [np.matmul(a, b).astype(i32)])
    a, b = ri(2, 2, 3, dt=i64), ri(2, 3, 1, dt=i64)
    case("MatMul", "i64", [a, b], [np.matmul(a, b)])
    a, b = rf(13, 17), rf(17, 11)
    case("MatMul", "odd", [a, b], [mm(a, b)])
    a, b = rf(3, 4), rf(4, 2)
    case("MatMul", "sym", [a, b], [mm(a, b)],
         in_dims=[("batch", 4)], out_dims=[("batch", 2)])


def gen_gemm():
    # Gemm: A[3,4] B[4,5] no C; transA; transB; both; alpha/beta with C
    # [5] (row broadcast), [3,1] (column), 0-d scalar and full [3,5]; f64
    seed("Gemm")

    def gemm(a, b, c=None, alpha=1.0, beta=1.0, ta=0, tb=0):
        A = d(a).T if ta else d(a)
        B = d(b).T if tb else d(b)
        y = alpha * (A @ B)
        if c is not None:
            y = y + beta * d(c)
        return like(y, a)

    a, b = rf(3, 4), rf(4, 5)
    case("Gemm", "noC", [a, b], [gemm(a, b)])
    a, b = rf(4, 3), rf(4, 5)
    case("Gemm", "transA", [a, b], [gemm(a, b, ta=1)], {"transA": 1})
    a, b = rf(3, 4), rf(5, 4)
    case("Gemm", "transB", [a, b], [gemm(a, b, tb=1)], {"transB": 1})
    a, b = rf(4, 3), rf(5, 4)
    case("Gemm", "transAB", [a, b], [gemm(a, b, ta=1, tb=1)],
         {"transA": 1, "transB": 1})
    a, b, c = rf(3, 4), rf(4, 5), rf(5)
    case("Gemm", "C_row", [a, b, c], [gemm(a, b, c, 0.5, 2.0)],
         {"alpha": 0.5, "beta": 2.0})
    a, b, c = rf(3, 4), rf(4, 5), rf(3, 1)
    case("Gemm", "C_col", [a, b, c], [gemm(a, b, c, beta=-1.0)],
         {"beta": -1.0})
    a, b, c = rf(3, 4), rf(4, 5), np.array(0.75, f32)
    case("Gemm", "C_scalar", [a, b, c], [gemm(a, b, c, alpha=2.0)],
         {"alpha": 2.0})
    a, b, c = rf(3, 4), rf(5, 4), rf(3, 5)
    case("Gemm", "C_full", [a, b, C(c)], [gemm(a, b, c, tb=1)],
         {"transB": 1})
    a, b, c = rf(2, 3, dt=f64), rf(3, 4, dt=f64), rf(1, 4, dt=f64)
    case("Gemm", "f64", [a, b, c], [gemm(a, b, c, 1.25, 0.5)],
         {"alpha": 1.25, "beta": 0.5})
    a, b = rf(4, 3), rf(4, 3)
    case("Gemm", "sym", [a, b], [gemm(a, b, tb=1)], {"transB": 1},
         in_dims=[("batch", 3)], out_dims=[("batch", 4)])


def conv_ref(x, w, b, strides, pads, dil, group):
    """ONNX Conv through torch in float64; pads [b1..bn, e1..en] may be
    asymmetric, so the input is padded explicitly first."""
    nd = x.ndim - 2
    tp = []
    for i in reversed(range(nd)):
        tp += [pads[i], pads[i + nd]]
    xt = F.pad(torch.from_numpy(d(x)), tp)
    wt = torch.from_numpy(d(w))
    bt = torch.from_numpy(d(b)) if b is not None else None
    fn = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}[nd]
    y = fn(xt, wt, bt, stride=list(strides), padding=0, dilation=list(dil),
           groups=group)
    return like(y.numpy(), x)


def same_pads(sizes, k, s, dil, upper):
    """auto_pad SAME_UPPER / SAME_LOWER: output ceil(in / stride), the odd
    pad at the end (upper) or the beginning (lower)."""
    nd = len(sizes)
    pb, pe = [0] * nd, [0] * nd
    for i in range(nd):
        out = -(-sizes[i] // s[i])
        total = max(0, (out - 1) * s[i] + (k[i] - 1) * dil[i] + 1 - sizes[i])
        small = total // 2
        pb[i], pe[i] = (small, total - small) if upper else (total - small,
                                                              small)
    return pb + pe


def gen_conv():
    # Conv: 1-D; 2-D plain; 2-D symmetric pads + stride 2; asymmetric pads;
    # dilations 2; group 2; depthwise (group = C) with bias; bias; auto_pad
    # SAME_UPPER (stride 1 and stride 2), SAME_LOWER (stride 2), VALID;
    # explicit kernel_shape; 3-D; f64; odd sizes; a symbolic batch dim
    seed("Conv")

    def cv(cname, xs, ws, bias=False, strides=None, pads=None, dil=None,
           group=1, auto_pad=None, kernel_shape=False, dt=f32, in_dims=None,
           out_dims=None):
        x = rf(*xs, dt=dt)
        w = rf(*ws, lo=-1, hi=1, dt=dt)
        b = rf(ws[0], dt=dt) if bias else None
        nd = len(xs) - 2
        st = strides or [1] * nd
        dl = dil or [1] * nd
        attrs = {}
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pp = same_pads(list(xs[2:]), list(ws[2:]), st, dl,
                           auto_pad == "SAME_UPPER")
        else:
            pp = pads or [0] * (2 * nd)
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        if dil:
            attrs["dilations"] = dil
        if group != 1:
            attrs["group"] = group
        if kernel_shape:
            attrs["kernel_shape"] = list(ws[2:])
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        y = conv_ref(x, w, b, st, pp, dl, group)
        ins = [x, w] + ([b] if bias else [])
        case("Conv", cname, ins, [y], attrs, in_dims, out_dims)

    cv("1d", (1, 2, 9), (3, 2, 3))
    cv("1d_pads_stride", (2, 3, 10), (2, 3, 4), bias=True, strides=[3],
       pads=[2, 1])
    cv("2d", (1, 3, 5, 5), (2, 3, 3, 3))
    cv("2d_pad_stride", (2, 2, 7, 6), (3, 2, 3, 3), strides=[2, 2],
       pads=[1, 1, 1, 1])
    cv("2d_asym_pads", (1, 2, 5, 6), (2, 2, 3, 2), pads=[0, 1, 2, 0])
    cv("2d_dilations", (1, 2, 7, 7), (2, 2, 3, 3), dil=[2, 2], pads=[1, 2,
                                                                     1, 2])
    cv("2d_stride_hw", (1, 1, 8, 7), (2, 1, 2, 3), strides=[3, 2])
    cv("2d_group2", (1, 4, 5, 5), (6, 2, 3, 3), group=2, bias=True)
    cv("2d_depthwise", (2, 3, 6, 6), (3, 1, 3, 3), group=3, bias=True,
       pads=[1, 1, 1, 1])
    cv("2d_bias", (1, 3, 4, 4), (4, 3, 1, 1), bias=True)
    cv("2d_same_upper", (1, 2, 5, 6), (2, 2, 3, 4), auto_pad="SAME_UPPER")
    cv("2d_same_upper_s2", (1, 2, 6, 7), (3, 2, 3, 3), auto_pad="SAME_UPPER",
       strides=[2, 2])
    cv("2d_same_lower_s2", (1, 2, 6, 7), (3, 2, 4, 3),
       auto_pad="SAME_LOWER", strides=[2, 2])
    cv("2d_valid", (1, 2, 5, 5), (1, 2, 2, 3), auto_pad="VALID")
    cv("2d_kernel_shape", (1, 2, 4, 5), (2, 2, 2, 3), kernel_shape=True)
    cv("3d", (1, 2, 4, 5, 3), (2, 2, 2, 3, 2), bias=True,
       pads=[1, 0, 1, 0, 1, 1])
    cv("f64", (1, 2, 5, 4), (2, 2, 3, 3), dt=f64, strides=[1, 2],
       pads=[1, 1, 1, 1])
    cv("odd", (1, 5, 11, 9), (7, 5, 5, 3), bias=True, strides=[2, 1],
       pads=[2, 1, 2, 1])
    cv("sym", (2, 2, 5, 5), (3, 2, 3, 3), pads=[1, 1, 1, 1],
       in_dims=[("N", 2, 5, 5)], out_dims=[("N", 3, 5, 5)])


def convt_ref(x, w, b, strides, pads, dil, group, outpad):
    """ONNX ConvTranspose through torch in float64: the full transposed
    convolution (with output_padding rows at the end), then pads cropped
    from each side."""
    nd = x.ndim - 2
    fn = {1: F.conv_transpose1d, 2: F.conv_transpose2d,
          3: F.conv_transpose3d}[nd]
    bt = torch.from_numpy(d(b)) if b is not None else None
    y = fn(torch.from_numpy(d(x)), torch.from_numpy(d(w)), bt,
           stride=list(strides), padding=0, output_padding=list(outpad),
           groups=group, dilation=list(dil)).numpy()
    sl = [slice(None), slice(None)]
    for i in range(nd):
        sl.append(slice(pads[i], y.shape[2 + i] - pads[i + nd]))
    return like(y[tuple(sl)], x)


def gen_convtranspose():
    # ConvTranspose: 1-D; 2-D plain; strides 2; strides 2 with
    # output_padding 1; group 2 with bias; pads (symmetric and asymmetric);
    # dilations; output_shape (the pads it implies split evenly);
    # explicit kernel_shape; f64
    seed("ConvTranspose")

    def ct(cname, xs, ws, bias=False, strides=None, pads=None, dil=None,
           group=1, outpad=None, output_shape=None, kernel_shape=False,
           dt=f32):
        x = rf(*xs, dt=dt)
        w = rf(*ws, lo=-1, hi=1, dt=dt)
        b = rf(ws[1] * group, dt=dt) if bias else None
        nd = len(xs) - 2
        st = strides or [1] * nd
        dl = dil or [1] * nd
        op = outpad or [0] * nd
        pp = pads or [0] * (2 * nd)
        attrs = {}
        if dil:
            attrs["dilations"] = dil
        if group != 1:
            attrs["group"] = group
        if kernel_shape:
            attrs["kernel_shape"] = list(ws[2:])
        if outpad:
            attrs["output_padding"] = outpad
        if output_shape:
            attrs["output_shape"] = output_shape
            pp = [0] * (2 * nd)
            for i in range(nd):
                total = (st[i] * (xs[2 + i] - 1) + op[i] +
                         (ws[2 + i] - 1) * dl[i] + 1 - output_shape[i])
                assert total >= 0 and total % 2 == 0, "ambiguous split"
                pp[i] = pp[i + nd] = total // 2
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        y = convt_ref(x, w, b, st, pp, dl, group, op)
        ins = [x, w] + ([b] if bias else [])
        case("ConvTranspose", cname, ins, [y], attrs)

    ct("1d", (1, 2, 5), (2, 3, 3))
    ct("2d", (1, 2, 3, 4), (2, 3, 3, 3))
    ct("2d_stride2", (1, 2, 3, 3), (2, 2, 3, 3), strides=[2, 2])
    ct("2d_stride2_outpad", (1, 1, 3, 4), (1, 2, 3, 2), strides=[2, 3],
       outpad=[1, 2])
    ct("2d_group2_bias", (2, 4, 3, 3), (4, 3, 2, 2), group=2, bias=True,
       strides=[2, 1])
    ct("2d_pads", (1, 2, 4, 4), (2, 2, 3, 3), strides=[2, 2],
       pads=[1, 1, 1, 1])
    ct("2d_asym_pads", (1, 1, 3, 3), (1, 2, 3, 3), strides=[2, 2],
       pads=[0, 1, 2, 0])
    ct("2d_dilations", (1, 2, 3, 3), (2, 1, 2, 3), dil=[2, 2], bias=True)
    ct("2d_output_shape", (1, 2, 3, 3), (2, 2, 3, 3), strides=[2, 2],
       output_shape=[5, 5])
    ct("2d_kernel_shape", (1, 1, 2, 3), (1, 2, 2, 2), kernel_shape=True)
    ct("f64", (1, 2, 3, 2), (2, 1, 3, 3), dt=f64, strides=[1, 2],
       pads=[1, 0, 1, 0])


# --------------------------------------------------------------------------
# pooling and normalization


def pool_ref(x, kind, k, s, pads, dil, ceil_mode, cip=0, storage_order=0):
    """ONNX MaxPool / AveragePool in plain numpy (float64 math). Returns
    (Y, Indices). Indices flatten over the whole input tensor (N and C
    included), row-major, or column-major over the spatial dims when
    storage_order is 1. count_include_pad counts window positions inside
    the padded extent; otherwise only positions inside the input."""
    N, Cc = x.shape[:2]
    sp = x.shape[2:]
    nd = len(sp)
    outs = []
    for i in range(nd):
        eff = (k[i] - 1) * dil[i] + 1
        num = sp[i] + pads[i] + pads[i + nd] - eff
        o = (-(-num // s[i]) if ceil_mode else num // s[i]) + 1
        # keep away from the ceil_mode corner where implementations differ
        assert (o - 1) * s[i] < sp[i] + pads[i], "window starts in pad"
        outs.append(o)
    y = np.zeros((N, Cc) + tuple(outs), f64)
    idx = np.zeros(y.shape, i64)
    xd = d(x)
    for n in range(N):
        for c in range(Cc):
            for o in np.ndindex(*outs):
                best, bi, acc, cnt_in, cnt_pad = -np.inf, -1, 0.0, 0, 0
                for kk in np.ndindex(*k):
                    p = [o[i] * s[i] - pads[i] + kk[i] * dil[i]
                         for i in range(nd)]
                    if all(-pads[i] <= p[i] < sp[i] + pads[i + nd]
                           for i in range(nd)):
                        cnt_pad += 1
                    if not all(0 <= p[i] < sp[i] for i in range(nd)):
                        continue
                    v = xd[(n, c) + tuple(p)]
                    cnt_in += 1
                    acc += v
                    if v > best:
                        best = v
                        if storage_order == 0:
                            flat = 0
                            for i in range(nd):
                                flat = flat * sp[i] + p[i]
                        else:
                            flat = 0
                            for i in reversed(range(nd)):
                                flat = flat * sp[i] + p[i]
                        bi = (n * Cc + c) * int(np.prod(sp)) + flat
                if kind == "max":
                    y[(n, c) + o] = best
                    idx[(n, c) + o] = bi
                else:
                    y[(n, c) + o] = acc / (cnt_pad if cip else cnt_in)
    return like(y, x), idx


def gen_pool():
    # MaxPool: 2-D k2 s2; pads + stride 1 (padding never wins); 1-D;
    # ceil_mode 1; dilations 2; Indices output (row-major, and
    # storage_order 1); auto_pad SAME_UPPER; asymmetric pads; u8 and f64;
    # 3-D; kernel 1x1 stride 2
    # AveragePool: k2 s2; count_include_pad 0 and 1 with pads; asymmetric
    # pads with count_include_pad 1; ceil_mode 1; 1-D; auto_pad SAME_LOWER
    # and SAME_UPPER; dilations; f64
    seed("Pool")

    def pl(op, cname, xs, k, strides=None, pads=None, dil=None, ceil=0,
           cip=0, auto_pad=None, so=0, want_idx=False, dt=f32, x=None):
        if x is None:
            x = rf(*xs, dt=dt) if dt != u8 else \
                R.permutation(np.prod(xs)).reshape(xs).astype(u8)
        nd = len(k)
        st = strides or [1] * nd
        dl = dil or [1] * nd
        attrs = {}
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pp = same_pads(list(x.shape[2:]), k, st, dl,
                           auto_pad == "SAME_UPPER")
            attrs["auto_pad"] = auto_pad
        else:
            pp = pads or [0] * (2 * nd)
        if ceil:
            attrs["ceil_mode"] = 1
        if cip:
            attrs["count_include_pad"] = 1
        if dil:
            attrs["dilations"] = dil
        attrs["kernel_shape"] = k
        if pads:
            attrs["pads"] = pads
        if so:
            attrs["storage_order"] = so
        if strides:
            attrs["strides"] = strides
        y, idx = pool_ref(x, "max" if op == "MaxPool" else "avg", k, st, pp,
                          dl, ceil, cip, so)
        case(op, cname, [x], [y, idx] if want_idx else [y], attrs)
        return x, y, pp

    # cross-check the numpy pooling against torch where torch applies
    def check_torch(got, want):
        assert np.allclose(d(got), want, rtol=1e-6, atol=1e-6), "pool_ref"

    x, y, _ = pl("MaxPool", "2d", (1, 2, 4, 6), [2, 2], strides=[2, 2])
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 2, 2).numpy())
    x, y, _ = pl("MaxPool", "2d_pads", (2, 1, 5, 5), [3, 3],
                 pads=[1, 1, 1, 1])
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 3, 1, 1).numpy())
    pl("MaxPool", "1d", (1, 3, 9), [3], strides=[2])
    x, y, _ = pl("MaxPool", "2d_ceil", (1, 1, 5, 7), [2, 2], strides=[2, 2],
                 ceil=1)
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 2, 2,
                                ceil_mode=True).numpy())
    x, y, _ = pl("MaxPool", "2d_dilations", (1, 2, 6, 6), [2, 2],
                 dil=[2, 2], pads=[1, 1, 1, 1])
    check_torch(y, F.max_pool2d(torch.from_numpy(d(x)), 2, 1, 1,
                                dilation=2).numpy())
    pl("MaxPool", "2d_indices", (2, 2, 4, 5), [2, 2], strides=[2, 2],
       pads=[0, 0, 1, 1], want_idx=True)
    pl("MaxPool", "2d_indices_colmajor", (1, 2, 4, 5), [3, 2],
       strides=[1, 2], so=1, want_idx=True)
    pl("MaxPool", "1d_indices", (2, 2, 7), [2], strides=[2], ceil=1,
       want_idx=True)
    pl("MaxPool", "2d_same_upper", (1, 1, 5, 6), [3, 2], strides=[2, 2],
       auto_pad="SAME_UPPER")
    pl("MaxPool", "2d_asym_pads", (1, 2, 4, 4), [2, 3], pads=[1, 0, 0, 2])
    pl("MaxPool", "u8", (1, 2, 4, 4), [2, 2], strides=[2, 2], dt=u8)
    pl("MaxPool", "f64", (1, 1, 5, 5), [3, 3], strides=[2, 2], dt=f64,
       pads=[1, 1, 1, 1])
    pl("MaxPool", "3d", (1, 1, 4, 4, 3), [2, 2, 2], strides=[2, 2, 1])
    pl("MaxPool", "k1_s2", (1, 2, 5, 5), [1, 1], strides=[2, 2])

    x, y, _ = pl("AveragePool", "2d", (1, 2, 4, 6), [2, 2], strides=[2, 2])
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 2, 2).numpy())
    x, y, _ = pl("AveragePool", "pads_exclude", (1, 2, 5, 5), [3, 3],
                 pads=[1, 1, 1, 1], strides=[2, 2])
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 3, 2, 1,
                                count_include_pad=False).numpy())
    x, y, _ = pl("AveragePool", "pads_include", (1, 2, 5, 5), [3, 3],
                 pads=[1, 1, 1, 1], strides=[2, 2], cip=1)
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 3, 2, 1,
                                count_include_pad=True).numpy())
    pl("AveragePool", "asym_pads_include", (1, 1, 4, 5), [2, 3],
       pads=[1, 0, 0, 2], cip=1)
    pl("AveragePool", "asym_pads_exclude", (1, 1, 4, 5), [2, 3],
       pads=[1, 0, 0, 2])
    x, y, _ = pl("AveragePool", "ceil", (1, 1, 5, 7), [2, 2],
                 strides=[2, 2], ceil=1)
    check_torch(y, F.avg_pool2d(torch.from_numpy(d(x)), 2, 2,
                                ceil_mode=True).numpy())
    x, y, _ = pl("AveragePool", "1d", (2, 3, 8), [3], strides=[1])
    check_torch(y, F.avg_pool1d(torch.from_numpy(d(x)), 3, 1).numpy())
    pl("AveragePool", "same_lower", (1, 2, 5, 5), [2, 2],
       auto_pad="SAME_LOWER")
    pl("AveragePool", "same_upper", (1, 1, 5, 6), [3, 3], strides=[2, 2],
       auto_pad="SAME_UPPER")
    pl("AveragePool", "dilations", (1, 1, 6, 6), [2, 2], dil=[2, 2])
    pl("AveragePool", "f64", (1, 2, 4, 4), [2, 2], strides=[1, 2], dt=f64)


def gen_globalpool():
    # GlobalAveragePool / GlobalMaxPool: 4-D, 3-D (1-D spatial), 5-D, f64
    seed("GlobalPool")
    for op, fn in (("GlobalAveragePool", np.mean), ("GlobalMaxPool", np.max)):
        for cname, shape, dt in (("4d", (2, 3, 4, 5), f32),
                                 ("3d", (1, 2, 7), f32),
                                 ("5d", (1, 2, 2, 3, 2), f32),
                                 ("f64", (2, 2, 3, 3), f64)):
            x = rf(*shape, dt=dt)
            ax = tuple(range(2, x.ndim))
            case(op, cname, [x], [like(fn(d(x), axis=ax, keepdims=True), x)])


def gen_batchnorm():
    # BatchNormalization (inference): 4-D NCHW; 2-D [N,C]; 3-D with
    # epsilon 1e-3 and momentum 0.5 (unused at inference); f64; params as
    # constants
    seed("BatchNormalization")

    def bn(cname, shape, eps=None, mom=None, dt=f32, const=False):
        x = rf(*shape, dt=dt)
        c = shape[1]
        sc, b, m = rf(c, dt=dt), rf(c, dt=dt), rf(c, dt=dt)
        v = rf(c, lo=0.1, hi=2, dt=dt)
        bs = (1, c) + (1,) * (len(shape) - 2)
        e = 1e-5 if eps is None else eps
        y = ((d(x) - d(m).reshape(bs)) / np.sqrt(d(v).reshape(bs) + e) *
             d(sc).reshape(bs) + d(b).reshape(bs))
        attrs = {}
        if eps is not None:
            attrs["epsilon"] = eps
        if mom is not None:
            attrs["momentum"] = mom
        ins = [x] + ([C(a) for a in (sc, b, m, v)] if const else
                     [sc, b, m, v])
        case("BatchNormalization", cname, ins, [like(y, x)], attrs)

    bn("4d", (2, 3, 4, 5))
    bn("2d", (4, 3))
    bn("3d_eps", (2, 4, 5), eps=1e-3, mom=0.5)
    bn("f64", (1, 2, 3, 3), dt=f64)
    bn("const", (2, 3, 2, 2), const=True)


def gen_layernorm():
    # LayerNormalization: axis -1 with bias; axis -2 (normalize over the
    # last two dims) with the Mean and InvStdDev outputs; axis 1 on 3-D
    # without bias (B absent) and epsilon 1e-3; axis 0 (everything);
    # f64 (Mean and InvStdDev stay f32: stash_type 1); a symbolic batch dim
    seed("LayerNormalization")

    def ln(cname, shape, axis, bias=True, eps=None, outs=1, dt=f32,
           in_dims=None, out_dims=None):
        x = rf(*shape, dt=dt)
        a = axis % len(shape)
        nshape = shape[a:]
        sc = rf(*nshape, dt=dt)
        b = rf(*nshape, dt=dt) if bias else None
        e = 1e-5 if eps is None else eps
        ax = tuple(range(a, len(shape)))
        xd = d(x)
        mean = xd.mean(axis=ax, keepdims=True)
        var = ((xd - mean) ** 2).mean(axis=ax, keepdims=True)
        inv = 1.0 / np.sqrt(var + e)
        y = (xd - mean) * inv * d(sc)
        if bias:
            y = y + d(b)
        attrs = {}
        if axis != -1:
            attrs["axis"] = axis
        if eps is not None:
            attrs["epsilon"] = eps
        ins = [x, sc] + ([b] if bias else [])
        # Mean and InvStdDev have type U: f32 for the default stash_type 1
        res = [like(y, x), mean.astype(f32), inv.astype(f32)][:outs]
        case("LayerNormalization", cname, ins, res, attrs, in_dims, out_dims)

    ln("axis_last", (2, 3, 8), -1)
    ln("axis_m2_stats", (2, 3, 4), -2, outs=3)
    ln("axis1_nobias", (2, 3, 5), 1, bias=False, eps=1e-3, outs=2)
    ln("axis0", (3, 4), 0, outs=3)
    ln("f64", (4, 6), -1, dt=f64, outs=3)
    ln("sym", (3, 5), -1, in_dims=[("batch", 5)], out_dims=[("batch", 5)])


def gen_softmax():
    # Softmax / LogSoftmax: default axis (-1); axis 0; axis 1 of 3-D; axis
    # -2; f64; large values (needs the max subtracted); a symbolic dim
    for op in ("Softmax", "LogSoftmax"):
        seed(op)

        def sm(x, axis):
            xd = d(x)
            z = xd - xd.max(axis=axis, keepdims=True)
            ez = np.exp(z)
            s = ez.sum(axis=axis, keepdims=True)
            r = ez / s if op == "Softmax" else z - np.log(s)
            return like(r, x)

        x = rf(3, 5, lo=-3, hi=3)
        case(op, "default", [x], [sm(x, -1)])
        x = rf(4, 3, lo=-3, hi=3)
        case(op, "axis0", [x], [sm(x, 0)], {"axis": 0})
        x = rf(2, 3, 4, lo=-3, hi=3)
        case(op, "axis1_3d", [x], [sm(x, 1)], {"axis": 1})
        case(op, "axis_m2", [x], [sm(x, -2)], {"axis": -2})
        x = rf(2, 6, lo=-3, hi=3, dt=f64)
        case(op, "f64", [x], [sm(x, -1)])
        x = np.array([[1000.0, 999.0, 998.0], [-1000.0, -999.0, 0.0]], f32)
        case(op, "large", [x], [sm(x, -1)])
        x = rf(3, 4)
        case(op, "sym", [x], [sm(x, -1)], in_dims=[("n", 4)],
             out_dims=[("n", 4)])


# --------------------------------------------------------------------------
# reductions


def gen_reduce():
    # ReduceSum/Mean/Max/Min: axes attribute [1]; axes attribute [0,2]
    # keepdims 0; axes input (negative axis, as a constant and as a graph
    # parameter); no axes (reduce all, keepdims 1 and 0); noop_with_empty_axes
    # 1 with no axes (identity) and with an empty axes input; axes input
    # empty with noop 0 (reduce all); integer dtypes (not Mean); f64
    fns = {"ReduceSum": np.sum, "ReduceMean": np.mean,
           "ReduceMax": np.max, "ReduceMin": np.min}
    for op, fn in fns.items():
        seed(op)
        red = lambda x, ax, kd: like(fn(d(x), axis=ax, keepdims=bool(kd)), x)
        x = rf(3, 4, 5)
        case(op, "attr_axis1", [x], [red(x, (1,), 1)], {"axes": [1]})
        case(op, "attr_axes02_nokeep", [x], [red(x, (0, 2), 0)],
             {"axes": [0, 2], "keepdims": 0})
        x = rf(2, 3, 4)
        case(op, "input_axis_neg", [x, C(np.array([-1], i64))],
             [red(x, (2,), 1)])
        case(op, "input_axes_param", [x, np.array([0, -1], i64)],
             [red(x, (0, 2), 0)], {"keepdims": 0})
        x = rf(3, 5)
        case(op, "all_keep", [x], [red(x, None, 1)])
        case(op, "all_nokeep", [x], [red(x, None, 0)], {"keepdims": 0})
        case(op, "noop_empty", [x], [x], {"noop_with_empty_axes": 1})
        case(op, "noop_empty_input", [x, C(np.zeros(0, i64))], [x],
             {"noop_with_empty_axes": 1})
        case(op, "empty_input_all", [x, C(np.zeros(0, i64))],
             [red(x, None, 1)])
        x = rf(2, 3, 2, dt=f64)
        case(op, "f64", [x], [red(x, (1,), 0)], {"axes": [-2],
                                                 "keepdims": 0})
        x = rf(7, 3)
        case(op, "odd", [x], [red(x, (0,), 1)], {"axes": [0]})
        if op != "ReduceMean":
            x = ri(3, 4)
            case(op, "i32", [x], [fn(x, axis=1, keepdims=True).astype(i32)],
                 {"axes": [1]})
            x = ri(2, 3, 2, lo=-1000, hi=1000, dt=i64)
            case(op, "i64", [x, C(np.array([0, 2], i64))],
                 [fn(x, axis=(0, 2), keepdims=False)], {"keepdims": 0})


def gen_argmax():
    # ArgMax: default axis 0 keepdims 1; axis -1 keepdims 0; ties with
    # select_last_index 0 and 1; i32 input; 3-D axis 1; f64
    seed("ArgMax")

    def am(x, axis, kd, last=0):
        if last:
            r = x.shape[axis] - 1 - np.argmax(np.flip(x, axis), axis=axis)
        else:
            r = np.argmax(x, axis=axis)
        if kd:
            r = np.expand_dims(r, axis)
        return r.astype(i64)

    x = rf(4, 3)
    case("ArgMax", "default", [x], [am(x, 0, 1)])
    x = rf(3, 5)
    case("ArgMax", "axis_m1_nokeep", [x], [am(x, -1, 0)],
         {"axis": -1, "keepdims": 0})
    x = np.array([[1, 3, 3, 0], [2, 2, 1, 2], [0, 0, 0, 0]], f32)
    case("ArgMax", "ties_first", [x], [am(x, 1, 1)], {"axis": 1})
    case("ArgMax", "ties_last", [x], [am(x, 1, 1, 1)],
         {"axis": 1, "select_last_index": 1})
    x = ri(2, 4, 3, lo=-3, hi=3)
    case("ArgMax", "i32_axis1", [x], [am(x, 1, 0)], {"axis": 1,
                                                     "keepdims": 0})
    case("ArgMax", "i32_last", [x], [am(x, 2, 1, 1)],
         {"axis": 2, "select_last_index": 1})
    x = rf(5, dt=f64)
    case("ArgMax", "f64_1d", [x], [am(x, 0, 0)], {"keepdims": 0})


# --------------------------------------------------------------------------
# layout and shape


def onnx_reshape(x, shape, allowzero=0):
    shape = list(shape)
    if not allowzero:
        shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape)]
    return x.reshape(shape)


def gen_reshape():
    # Reshape: plain; -1 inferred; 0 copies a dim; to 0-d scalar; to 1-D;
    # shape as a runtime parameter; allowzero 1 (no zeros in the shape);
    # i64 and bool data; a symbolic batch dim with 0 and -1
    seed("Reshape")
    x = rf(2, 3, 4)
    for cname, shp in (("plain", [4, 6]), ("infer", [2, -1, 2]),
                       ("zero_copies", [0, 12]), ("flat", [-1])):
        s = np.array(shp, i64)
        case("Reshape", cname, [x, C(s)], [onnx_reshape(x, s)])
    s = np.array([2, 0, 2, -1], i64)
    case("Reshape", "param_shape", [x, s], [onnx_reshape(x, s)])
    s = np.array([6, 4], i64)
    case("Reshape", "allowzero", [x, C(s)], [x.reshape(6, 4)],
         {"allowzero": 1})
    x1 = np.array([7.5], f32)
    case("Reshape", "to_scalar", [x1, C(np.zeros(0, i64))],
         [x1.reshape(())])
    xi = ri(2, 6, dt=i64)
    case("Reshape", "i64", [xi, C(np.array([3, 4], i64))],
         [xi.reshape(3, 4)])
    xb = rb(4, 2)
    case("Reshape", "bool", [xb, C(np.array([2, 2, 2], i64))],
         [xb.reshape(2, 2, 2)])
    x = rf(3, 2, 4)
    case("Reshape", "sym", [x, C(np.array([0, -1], i64))],
         [x.reshape(3, 8)], in_dims=[("batch", 2, 4)],
         out_dims=[("batch", 8)])


def gen_flatten():
    # Flatten: default axis 1; axis 0 ([1, N]); axis 2 of 4-D; axis -1;
    # axis equal to the rank ([N, 1]); i64
    seed("Flatten")
    x = rf(2, 3, 4, 2)
    fl = lambda x, a: x.reshape(int(np.prod(x.shape[:a])), -1)
    case("Flatten", "default", [x], [fl(x, 1)])
    case("Flatten", "axis0", [x], [x.reshape(1, -1)], {"axis": 0})
    case("Flatten", "axis2", [x], [fl(x, 2)], {"axis": 2})
    case("Flatten", "axis_m1", [x], [fl(x, 3)], {"axis": -1})
    case("Flatten", "axis_rank", [x], [x.reshape(-1, 1)], {"axis": 4})
    xi = ri(3, 2, 2, dt=i64)
    case("Flatten", "i64", [xi], [fl(xi, 1)])


def gen_squeeze():
    # Squeeze: axes input [1]; axes input negative [-1, 0]; axes attribute
    # (older opsets); no axes (all size-1 dims); to a 0-d scalar; i32
    # Unsqueeze: axes input [0]; [0, 3] (output-rank positions); negative
    # [-1]; attribute form; from 0-d; unsorted axes [2, 0]; bool
    seed("Squeeze")
    x = rf(1, 3, 1, 4, 1)
    case("Squeeze", "input_axis", [x, C(np.array([2], i64))],
         [x.reshape(1, 3, 4, 1)])
    case("Squeeze", "input_neg", [x, C(np.array([-1, 0], i64))],
         [x.reshape(3, 1, 4)])
    case("Squeeze", "attr", [x], [x.reshape(1, 3, 4)], {"axes": [4, 2]})
    case("Squeeze", "all", [x], [x.reshape(3, 4)])
    x1 = np.array([[3.5]], f32)
    case("Squeeze", "to_scalar", [x1], [x1.reshape(())])
    xi = ri(2, 1, 3)
    case("Squeeze", "i32", [xi, C(np.array([1], i64))], [xi.reshape(2, 3)])

    seed("Unsqueeze")
    x = rf(3, 4)
    case("Unsqueeze", "front", [x, C(np.array([0], i64))],
         [x.reshape(1, 3, 4)])
    case("Unsqueeze", "two", [x, C(np.array([0, 3], i64))],
         [x.reshape(1, 3, 4, 1)])
    case("Unsqueeze", "neg", [x, C(np.array([-1], i64))],
         [x.reshape(3, 4, 1)])
    case("Unsqueeze", "unsorted", [x, C(np.array([2, 0], i64))],
         [x.reshape(1, 3, 1, 4)])
    case("Unsqueeze", "attr", [x], [x.reshape(3, 1, 4)], {"axes": [1]})
    x0 = np.array(1.25, f32)
    case("Unsqueeze", "from_scalar", [x0, C(np.array([0], i64))],
         [x0.reshape(1)])
    xb = rb(2, 3)
    case("Unsqueeze", "bool_param", [xb, np.array([1, -1], i64)],
         [xb.reshape(2, 1, 3, 1)])


def gen_transpose():
    # Transpose: default perm (reverse); perm [1,0]; [0,2,1]; 4-D
    # [0,3,1,2] (NCHW->NHWC style); i64; bool; 1-D
    seed("Transpose")
    x = rf(2, 3, 4)
    case("Transpose", "default", [x], [x.transpose()])
    case("Transpose", "perm021", [x], [x.transpose(0, 2, 1)],
         {"perm": [0, 2, 1]})
    x2 = rf(3, 5)
    case("Transpose", "2d", [x2], [x2.T], {"perm": [1, 0]})
    x4 = rf(2, 3, 2, 4)
    case("Transpose", "4d", [x4], [x4.transpose(0, 3, 1, 2)],
         {"perm": [0, 3, 1, 2]})
    xi = ri(2, 3, 2, dt=i64)
    case("Transpose", "i64", [xi], [xi.transpose(2, 0, 1)],
         {"perm": [2, 0, 1]})
    xb = rb(3, 2)
    case("Transpose", "bool", [xb], [xb.T])
    x1 = rf(5)
    case("Transpose", "1d", [x1], [x1])


def gen_concat():
    # Concat: axis 0; axis 1; axis -1 with three inputs; a single input;
    # i64; bool; a symbolic dim not on the axis
    seed("Concat")
    a, b = rf(2, 3), rf(4, 3)
    case("Concat", "axis0", [a, b], [np.concatenate([a, b], 0)], {"axis": 0})
    a, b = rf(2, 1, 3), rf(2, 4, 3)
    case("Concat", "axis1", [a, b], [np.concatenate([a, b], 1)], {"axis": 1})
    a, b, c = rf(2, 2), rf(2, 1), rf(2, 3)
    case("Concat", "three_neg", [a, b, c], [np.concatenate([a, b, c], -1)],
         {"axis": -1})
    case("Concat", "one", [a], [a], {"axis": 0})
    a, b = ri(3, dt=i64), ri(2, dt=i64)
    case("Concat", "i64", [a, b], [np.concatenate([a, b])], {"axis": 0})
    a, b = rb(1, 2), rb(1, 3)
    case("Concat", "bool", [a, b], [np.concatenate([a, b], 1)], {"axis": 1})
    a, b = rf(3, 2), rf(3, 3)
    case("Concat", "sym", [a, b],
         [np.concatenate([a, b], 1)], {"axis": 1},
         in_dims=[("n", 2), ("n", 3)], out_dims=[("n", 5)])


def gen_split():
    # Split: equal parts (output count decides); split attribute [2,4] on
    # axis 1; split input (constant); negative axis; num_outputs 3 on 7
    # (opset 18: parts of ceil(7/3) = 3, the last smaller); i64; one output
    seed("Split")
    x = rf(6, 4)
    case("Split", "equal", [x], np.split(x, 3, 0))
    x = rf(2, 6)
    case("Split", "attr", [x], np.split(x, [2], 1), {"axis": 1,
                                                     "split": [2, 4]})
    x = rf(5, 3)
    case("Split", "input", [x, C(np.array([1, 3, 1], i64))],
         np.split(x, [1, 4], 0))
    x = rf(2, 3, 4)
    case("Split", "neg_axis", [x, C(np.array([3, 1], i64))],
         np.split(x, [3], 2), {"axis": -1})
    x = rf(7, 2)
    case("Split", "num_outputs", [x], np.split(x, [3, 6], 0),
         {"num_outputs": 3})
    xi = ri(4, 2, dt=i64)
    case("Split", "i64", [xi], np.split(xi, 2, 0))
    x = rf(3, 2)
    case("Split", "one", [x], [x], {"axis": 1})


def onnx_slice(x, starts, ends, axes=None, steps=None):
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    sl = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        sl[a % x.ndim] = slice(int(s), int(e), int(st))
    return x[tuple(sl)]


def gen_slice():
    # Slice: starts/ends only; with axes; negative starts/ends; ends past
    # the end (INT64_MAX); negative step (reverse to the front with
    # INT64_MIN); step 2 and -2; negative axes; axes absent (`_`) with steps
    # present; i32 indices; starts/ends as runtime parameters; i64 data
    seed("Slice")
    x = rf(4, 5)

    def sc(cname, x, starts, ends, axes=None, steps=None, it=i64,
           param=False):
        arr = lambda v: np.array(v, it)
        wrap = (lambda v: arr(v)) if param else (lambda v: C(arr(v)))
        ins = [x, wrap(starts), wrap(ends)]
        if axes is not None:
            ins.append(wrap(axes))
        elif steps is not None:
            ins.append(None)
        if steps is not None:
            ins.append(wrap(steps))
        case("Slice", cname, ins, [onnx_slice(x, starts, ends, axes, steps)])

    sc("basic", x, [1, 0], [3, 4])
    sc("axes", x, [1], [4], axes=[1])
    sc("negative", x, [-3, -4], [-1, 5], axes=[0, 1])
    sc("end_max", x, [2], [INT64_MAX], axes=[1])
    sc("reverse", x, [-1], [INT64_MIN], axes=[0], steps=[-1])
    sc("reverse_part", x, [3], [0], axes=[1], steps=[-1])
    sc("step2", x, [0, 1], [5, 5], axes=[1, 0], steps=[2, 1])
    sc("step_m2", x, [4], [-6], axes=[1], steps=[-2])
    sc("neg_axes", x, [1, 1], [3, 4], axes=[-1, -2])
    sc("no_axes_steps", x, [0, 4], [4, 0], steps=[3, -1])
    sc("i32_idx", x, [1], [3], axes=[1], it=i32)
    sc("param", x, [0, 2], [2, 5], axes=[0, 1], param=True)
    x3 = ri(3, 4, 5, dt=i64)
    sc("3d_i64", x3, [1, -1, 0], [3, 0, 5], axes=[0, 1, 2], steps=[1, -2, 2])
    sc("clamp_start", x, [-100, 10], [100, 2], axes=[0, 1], steps=[1, -1])


def gen_gather():
    # Gather: axis 0 with 1-D indices; 2-D indices; negative indices; axis
    # 1; axis -1; 0-d index (drops the axis); i32 indices; i64 data; bool
    seed("Gather")
    x = rf(5, 4)

    def g(cname, x, idx, axis=0, param=False):
        ax = axis % x.ndim
        nidx = np.where(idx < 0, idx + x.shape[ax], idx)
        attrs = {"axis": axis} if axis != 0 else None
        case("Gather", cname, [x, idx if param else C(idx)],
             [np.take(x, nidx, axis=ax)], attrs)

    g("axis0", x, np.array([4, 0, 2], i64), param=True)
    g("2d_idx", x, np.array([[0, 1], [3, 3], [2, 4]], i64), param=True)
    g("neg_idx", x, np.array([-1, -5, 1], i64))
    g("axis1", x, np.array([[3], [0]], i64), axis=1)
    x3 = rf(2, 3, 4)
    g("axis_m1", x3, np.array([2, -1], i64), axis=-1, param=True)
    g("scalar_idx", x3, np.array(1, i64), axis=1)
    g("i32_idx", x, np.array([1, -2], i32), param=True)
    g("i64_data", ri(4, 3, dt=i64), np.array([3, 1], i64))
    g("bool_data", rb(3, 2), np.array([2, 0, 2], i64))


def gen_expand():
    # Expand: [3,1] to [2,3,4]; shape of lower rank than the input; shape
    # with 1s that keep the input's dims; a 0-d input; shape as runtime
    # parameter; i64; bool
    seed("Expand")

    def ex(cname, x, shp, param=False):
        s = np.array(shp, i64)
        y = np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shp)))
        case("Expand", cname, [x, s if param else C(s)], [y.copy()])

    ex("rank_up", rf(3, 1), [2, 3, 4])
    ex("lower_rank", rf(2, 1, 4), [3, 1])
    ex("ones", rf(3, 4), [1, 1])
    ex("scalar", np.array(2.5, f32), [2, 3])
    ex("param", rf(1, 3), [4, 3], param=True)
    ex("i64", ri(2, 1, dt=i64), [2, 5])
    ex("bool", rb(1, 2), [3, 1, 2])


def gen_tile():
    # Tile: repeats [2,3]; 3-D with ones; 1-D; repeats as parameter; i64
    seed("Tile")
    for cname, x, reps, param in (("2d", rf(2, 3), [2, 3], False),
                                  ("3d", rf(2, 1, 3), [1, 3, 2], False),
                                  ("1d", rf(4), [3], True),
                                  ("ones", rf(2, 2), [1, 1], False),
                                  ("i64", ri(2, 2, dt=i64), [2, 1], True),
                                  ("bool", rb(1, 3), [2, 2], False)):
        r = np.array(reps, i64)
        case("Tile", cname, [x, r if param else C(r)], [np.tile(x, reps)])


def onnx_pad(x, pads, mode="constant", value=0, axes=None):
    nd = x.ndim
    if axes is None:
        axes = list(range(nd))
    k = len(axes)
    pw = [[0, 0] for _ in range(nd)]
    for j, a in enumerate(axes):
        pw[a % nd] = [pads[j], pads[j + k]]
    pos = [[max(p, 0) for p in q] for q in pw]
    if mode == "constant":
        y = np.pad(x, pos, mode="constant", constant_values=value)
    else:
        y = np.pad(x, pos, mode=mode)
    sl = tuple(slice(-min(q[0], 0), y.shape[i] + min(q[1], 0))
               for i, q in enumerate(pw))
    return y[sl]


def gen_pad():
    # Pad: constant 0 (default); constant_value 1.5; reflect; edge; a
    # negative pad (crops); axes input (opset 18) with negative axis; i32
    # with a constant value; 3-D edge; pads as a runtime parameter
    seed("Pad")
    x = rf(3, 4)

    def pd(cname, x, pads, mode=None, value=None, axes=None, param=False):
        p = np.array(pads, i64)
        ins = [x, p if param else C(p)]
        if value is not None:
            ins.append(C(np.array(value, x.dtype)))
        elif axes is not None:
            ins.append(None)
        if axes is not None:
            ins.append(C(np.array(axes, i64)))
        y = onnx_pad(x, pads, mode or "constant",
                     0 if value is None else value, axes)
        case("Pad", cname, ins, [y], {"mode": mode} if mode else None)

    pd("constant_zero", x, [1, 0, 0, 2])
    pd("constant_value", x, [0, 1, 2, 1], value=1.5)
    pd("reflect", x, [2, 1, 1, 3], mode="reflect")
    pd("edge", x, [1, 2, 2, 1], mode="edge")
    pd("negative", x, [-1, 1, 0, -2])
    pd("axes", x, [2, 1], value=-1.0, axes=[-1])
    pd("axes_no_value", rf(2, 3, 2), [1, 1, 0, 2], axes=[0, 2])
    pd("i32", ri(2, 3), [1, 1, 1, 1], value=7)
    pd("edge_3d", rf(2, 2, 3), [0, 1, 1, 1, 0, 2], mode="edge")
    pd("reflect_1d", rf(5), [3, 2], mode="reflect", param=True)
    pd("constant_explicit", rf(2, 2), [1, 1, 1, 1], mode="constant")


def gen_shape():
    # Shape: default; start 1; end -1; start -2; start/end past the ends
    # (clamped); a 0-d input (empty output); a symbolic batch dim
    seed("Shape")
    x = rf(2, 3, 4)
    sh = lambda x, s=None, e=None: np.array(x.shape[s:e], i64)
    case("Shape", "default", [x], [sh(x)])
    case("Shape", "start1", [x], [sh(x, 1)], {"start": 1})
    case("Shape", "end_m1", [x], [sh(x, None, -1)], {"end": -1})
    case("Shape", "start_m2", [x], [sh(x, -2)], {"start": -2})
    case("Shape", "start_end", [x], [sh(x, 1, 2)], {"end": 2, "start": 1})
    case("Shape", "clamped", [x], [sh(x, -10, 10)], {"end": 10,
                                                     "start": -10})
    case("Shape", "scalar", [np.array(1.0, f32)], [np.zeros(0, i64)])
    x = rf(5, 3)
    case("Shape", "sym", [x], [sh(x)], in_dims=[("batch", 3)])
    xb = rb(2, 2)
    case("Shape", "bool", [xb], [sh(xb)])


def gen_constantofshape():
    # ConstantOfShape: default value (f32 0); f32 2.5; i64 7; bool true;
    # i32 -3; empty shape (0-d output); shape as a runtime parameter
    seed("ConstantOfShape")
    for cname, shp, val, param in (
            ("default", [2, 3], None, False),
            ("f32", [3, 2], np.array([2.5], f32), False),
            ("i64", [4], np.array([7], i64), True),
            ("bool", [2, 2], np.array([True]), False),
            ("i32", [1, 3, 2], np.array([-3], i32), True),
            ("scalar", [], np.array([1.5], f32), False)):
        s = np.array(shp, i64)
        y = np.full(shp, 0.0 if val is None else val[0],
                    f32 if val is None else val.dtype)
        case("ConstantOfShape", cname, [s if param else C(s)], [y],
             {"value": T(val)} if val is not None else None)


def gen_range():
    # Range: f32 with step 0.5; negative delta i64; i32; f32 length from
    # ceil of a fraction; parameters and constants; f64
    seed("Range")
    for cname, st, li, de, dt, param in (
            ("f32", 0.5, 3.0, 0.5, f32, True),
            ("i64_neg", 10, 1, -3, i64, True),
            ("i32", -2, 5, 2, i32, False),
            ("f32_frac", 1.0, 2.0, 0.3, f32, False),
            ("f64", -1.0, 1.0, 0.25, f64, True),
            ("i64_one", 3, 4, 5, i64, False)):
        s, l, dd = (np.array(v, dt) for v in (st, li, de))
        n = max(int(math.ceil((float(l) - float(s)) / float(dd))), 0)
        if np.dtype(dt).kind == "f":
            y = (d(s) + np.arange(n) * d(dd)).astype(dt)
        else:
            y = (int(s) + np.arange(n, dtype=i64) * int(dd)).astype(dt)
        ins = [s, l, dd] if param else [C(s), C(l), C(dd)]
        case("Range", cname, ins, [y])


def gen_constant():
    # Constant: value tensor f32 [2,3]; value tensor i32; value_float;
    # value_floats; value_int; value_ints; value tensor bool 0-d
    seed("Constant")
    v = rf(2, 3)
    case("Constant", "tensor", [], [v], {"value": T(v)})
    v = ri(4)
    case("Constant", "tensor_i32", [], [v], {"value": T(v)})
    case("Constant", "value_float", [], [np.array(2.5, f32)],
         {"value_float": 2.5})
    case("Constant", "value_floats", [], [np.array([1.0, -0.5, 3.25], f32)],
         {"value_floats": [1.0, -0.5, 3.25]})
    case("Constant", "value_int", [], [np.array(7, i64)], {"value_int": 7})
    case("Constant", "value_ints", [], [np.array([3, -1, 4], i64)],
         {"value_ints": [3, -1, 4]})
    case("Constant", "tensor_bool", [], [np.array(True)],
         {"value": T(np.array(True))})


# --------------------------------------------------------------------------
# control flow


def gen_if():
    # If: cond true and false, the branches reading outer values (graph
    # parameters); two outputs with a branch returning an outer value
    # directly and a constant inside a branch; cond from a comparison
    seed("If")
    a, b = rf(2, 3), rf(2, 3)
    body = """
  %y0: f32[2,3] = If(%x0) then_branch() {
    %t0: f32[2,3] = Add(%x1, %x2)
    return %t0
  } else_branch() {
    %e0: f32[2,3] = Mul(%x1, %x2)
    return %e0
  }
  return %y0
"""
    raw_case("If", "then", body, [np.array(True), a, b],
             [like(d(a) + d(b), a)])
    raw_case("If", "else", body, [np.array(False), a, b],
             [like(d(a) * d(b), a)])
    body2 = """
  %y0: f32[3], %y1: f32[3] = If(%x0) then_branch() {
    %k: f32[] = const 2.0
    %t0: f32[3] = Mul(%x1, %k)
    return %t0, %x1
  } else_branch() {
    %e0: f32[3] = Neg(%x1)
    return %x1, %e0
  }
  return %y0, %y1
"""
    v = rf(3)
    raw_case("If", "two_out_then", body2, [np.array(True), v],
             [like(2.0 * d(v), v), v])
    raw_case("If", "two_out_else", body2, [np.array(False), v], [v, -v])
    body3 = """
  %c: bool[] = Greater(%x0, %x1)
  %y0: i64[2] = If(%c) then_branch() {
    %t0: i64[2] = Sub(%x2, %x2)
    return %t0
  } else_branch() {
    %e0: i64[2] = Add(%x2, %x2)
    return %e0
  }
  return %y0
"""
    vi = np.array([3, -4], i64)
    raw_case("If", "computed_cond", body3,
             [np.array(1.0, f32), np.array(2.0, f32), vi], [vi + vi])


def gen_loop():
    # Loop: counted (M constant 3, cond absent) with a loop-carried [2]
    # vector, a body reading an outer value and a scan output built from
    # the iteration number; a while loop (M absent, cond true) that exits
    # by its condition, with a scan output of unknown length; M and cond
    # both given, M ends it first, two carried values (one i64 counting
    # iteration numbers); M as a graph parameter with a carried value
    # passing through unchanged
    seed("Loop")
    x, inc = rf(2), rf(2)
    body = """
  %m: i64[] = const 3
  %y0: f32[2], %y1: f32[3,2] = Loop(%m, _, %x0) body(%i: i64[], %cin: bool[], %acc: f32[2]) {
    %acc2: f32[2] = Add(%acc, %x1)
    %fi: f32[] = Cast(%i) {to = 1}
    %sc: f32[2] = Mul(%acc2, %fi)
    return %cin, %acc2, %sc
  }
  return %y0, %y1
"""
    acc, scans = d(x), []
    for it in range(3):
        acc = acc + d(inc)
        scans.append(acc * it)
    raw_case("Loop", "counted", body, [x, inc],
             [like(acc, x), like(np.stack(scans), x)])

    body = """
  %y0: f32[], %y1: f32[?] = Loop(_, %x0, %x1) body(%i: i64[], %cin: bool[], %v: f32[]) {
    %k: f32[] = const 2.0
    %v2: f32[] = Mul(%v, %k)
    %c2: bool[] = Less(%v2, %x2)
    %s: f32[] = Identity(%v2)
    return %c2, %v2, %s
  }
  return %y0, %y1
"""
    v, scans = 1.0, []
    while True:
        v *= 2.0
        scans.append(v)
        if not v < 20.0:
            break
    raw_case("Loop", "while_cond", body,
             [np.array(True), np.array(1.0, f32), np.array(20.0, f32)],
             [np.array(v, f32), np.array(scans, f32)])

    body = """
  %y0: f32[], %y1: i64[], %y2: f32[?] = Loop(%x0, %x1, %x2, %x3) body(%i: i64[], %cin: bool[], %v: f32[], %n: i64[]) {
    %k: f32[] = const 3.0
    %big: f32[] = const 1000.0
    %v2: f32[] = Mul(%v, %k)
    %n2: i64[] = Add(%n, %i)
    %c2: bool[] = Less(%v2, %big)
    %s: f32[] = Add(%v2, %v)
    return %c2, %v2, %n2, %s
  }
  return %y0, %y1, %y2
"""
    v, n, scans = 1.0, 10, []
    for it in range(4):
        v2 = v * 3.0
        scans.append(v2 + v)
        v, n = v2, n + it
    raw_case("Loop", "trip_and_cond", body,
             [np.array(4, i64), np.array(True), np.array(1.0, f32),
              np.array(10, i64)],
             [np.array(v, f32), np.array(n, i64), np.array(scans, f32)])

    body = """
  %y0: i64[3], %y1: f32[2,2] = Loop(%x0, _, %x1, %x2) body(%i: i64[], %cin: bool[], %a: i64[3], %b: f32[2,2]) {
    %a2: i64[3] = Identity(%a)
    %b2: f32[2,2] = Add(%b, %b)
    return %cin, %a2, %b2
  }
  return %y0, %y1
"""
    a, b = ri(3, dt=i64), rf(2, 2)
    raw_case("Loop", "param_trip", body, [np.array(2, i64), a, b],
             [a, like(d(b) * 4.0, b)])


def gelu(x, approximate="none"):
    x = d(x)
    if approximate == "tanh":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) *
                                        (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1.0 + np.vectorize(math.erf, otypes=[f64])(
        x / math.sqrt(2.0)))


def activation(y, name, alpha=None, beta=None):
    """The activations of FusedConv / FusedGemm (ops.def's comment), in
    float64: clip's bounds and leakyrelu's slope are alpha / beta."""
    y = d(y)
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))
    return {
        "none": lambda: y,
        "relu": lambda: np.maximum(y, 0.0),
        "relu6": lambda: np.clip(y, 0.0, 6.0),
        "clip": lambda: np.clip(y, alpha, beta),
        "sigmoid": lambda: sig(y),
        "silu": lambda: y * sig(y),
        "gelu": lambda: gelu(y),
        "gelu_tanh": lambda: gelu(y, "tanh"),
        "leakyrelu": lambda: np.where(y < 0, alpha * y, y),
        "tanh": lambda: np.tanh(y),
    }[name]()


def gen_fused():
    # Gelu (ONNX opset 20): approximate "none" (erf) and "tanh"; f64; odd
    # FusedConv = Conv (+ bias) then an activation: every activation once;
    # leakyrelu slope and clip bounds through activation_alpha / _beta;
    # with pads, strides, groups and auto_pad; without bias
    # FusedGemm = Gemm then an activation: with C, transB, alpha/beta
    # FusedElementwise: the node's inputs are the body's parameters, its
    # outputs the body's returns: a chain on one input; two inputs with
    # broadcasting; a constant in the body; two outputs
    seed("Gelu")
    x = rf(3, 5, lo=-4, hi=4)
    case("Gelu", "default", [x], [like(gelu(x), x)])
    x = rf(2, 7, lo=-4, hi=4)
    case("Gelu", "tanh", [x], [like(gelu(x, "tanh"), x)],
         {"approximate": "tanh"})
    x = rf(4, 3, lo=-4, hi=4, dt=f64)
    case("Gelu", "f64", [x], [gelu(x)])
    x = rf(11, lo=-4, hi=4)
    case("Gelu", "odd", [x], [like(gelu(x, "tanh"), x)],
         {"approximate": "tanh"})

    seed("FusedConv")

    def fc(cname, act, xs, ws, bias=True, alpha=None, beta=None, pads=None,
           strides=None, group=1, auto_pad=None):
        x = rf(*xs)
        w = rf(*ws, lo=-1, hi=1)
        b = rf(ws[0]) if bias else None
        nd = len(xs) - 2
        st = strides or [1] * nd
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            pp = same_pads(list(xs[2:]), list(ws[2:]), st, [1] * nd,
                           auto_pad == "SAME_UPPER")
        else:
            pp = pads or [0] * (2 * nd)
        attrs = {}
        if auto_pad:
            attrs["auto_pad"] = auto_pad
        if group != 1:
            attrs["group"] = group
        if pads:
            attrs["pads"] = pads
        if strides:
            attrs["strides"] = strides
        if act != "none":
            attrs["activation"] = act
        if alpha is not None:
            attrs["activation_alpha"] = alpha
        if beta is not None:
            attrs["activation_beta"] = beta
        y = conv_ref(x, w, b, st, pp, [1] * nd, group)
        y = like(activation(y, act, alpha, beta), x)
        case("FusedConv", cname, [x, w] + ([b] if bias else []), [y], attrs)

    fc("none", "none", (1, 2, 5, 5), (3, 2, 3, 3))
    fc("relu", "relu", (1, 3, 6, 5), (4, 3, 3, 3), pads=[1, 1, 1, 1])
    fc("relu_nobias", "relu", (2, 2, 5, 5), (2, 2, 3, 3), bias=False)
    fc("relu6", "relu6", (1, 2, 5, 5), (2, 2, 3, 3), strides=[2, 2])
    fc("clip", "clip", (1, 2, 5, 5), (3, 2, 2, 2), alpha=-0.5, beta=0.75)
    fc("sigmoid", "sigmoid", (1, 2, 4, 6), (2, 2, 3, 3), pads=[0, 1, 2, 1])
    fc("silu", "silu", (1, 4, 5, 5), (4, 2, 3, 3), group=2)
    fc("gelu", "gelu", (1, 3, 5, 5), (3, 1, 3, 3), group=3,
       pads=[1, 1, 1, 1])
    fc("gelu_tanh", "gelu_tanh", (1, 2, 6, 6), (2, 2, 3, 3),
       auto_pad="SAME_UPPER", strides=[2, 2])
    fc("leakyrelu", "leakyrelu", (1, 2, 5, 4), (3, 2, 3, 2), alpha=0.1)
    fc("tanh", "tanh", (1, 2, 9), (2, 2, 3), strides=[2])

    seed("FusedGemm")

    def fg(cname, act, ash, bsh, csh=None, alpha=None, beta=None, ta=0,
           tb=0, ga=None, gb=None):
        a, b = rf(*ash), rf(*bsh)
        c = rf(*csh) if csh is not None else None
        A = d(a).T if ta else d(a)
        B = d(b).T if tb else d(b)
        y = (1.0 if ga is None else ga) * (A @ B)
        if c is not None:
            y = y + (1.0 if gb is None else gb) * d(c)
        attrs = {}
        if ga is not None:
            attrs["alpha"] = ga
        if gb is not None:
            attrs["beta"] = gb
        if ta:
            attrs["transA"] = 1
        if tb:
            attrs["transB"] = 1
        if act != "none":
            attrs["activation"] = act
        if alpha is not None:
            attrs["activation_alpha"] = alpha
        if beta is not None:
            attrs["activation_beta"] = beta
        y = like(activation(y, act, alpha, beta), a)
        case("FusedGemm", cname, [a, b] + ([c] if c is not None else []),
             [y], attrs)

    fg("none", "none", (3, 4), (4, 5), (5,))
    fg("relu", "relu", (3, 4), (4, 5), (5,))
    fg("relu_noC", "relu", (2, 6), (6, 3))
    fg("relu6_transB", "relu6", (3, 4), (5, 4), (3, 5), tb=1)
    fg("clip", "clip", (4, 3), (4, 2), (1, 2), alpha=-0.25, beta=0.5, ta=1)
    fg("sigmoid_alpha_beta", "sigmoid", (3, 4), (4, 5), (3, 1), ga=0.5,
       gb=2.0)
    fg("silu", "silu", (2, 3), (3, 4), (4,))
    fg("gelu", "gelu", (3, 5), (5, 2), (2,))
    fg("gelu_tanh", "gelu_tanh", (3, 5), (2, 5), (2,), tb=1)
    fg("leakyrelu", "leakyrelu", (3, 4), (4, 5), (5,), alpha=0.2)
    fg("tanh", "tanh", (2, 4), (4, 3), np.array(0.5, f32).shape)

    seed("FusedElementwise")
    x = rf(3, 4)
    body = """
  %y0: f32[3,4] = FusedElementwise(%x0) body(%p0: f32[3,4]) {
    %t0: f32[3,4] = Exp(%p0)
    %t1: f32[3,4] = Neg(%t0)
    return %t1
  }
  return %y0
"""
    raw_case("FusedElementwise", "chain", body, [x],
             [like(-np.exp(d(x)), x)])
    a, b = rf(2, 3, 4), rf(4)
    body = """
  %y0: f32[2,3,4] = FusedElementwise(%x0, %x1) body(%p0: f32[2,3,4], %p1: f32[4]) {
    %t0: f32[2,3,4] = Add(%p0, %p1)
    %t1: f32[2,3,4] = Relu(%t0)
    return %t1
  }
  return %y0
"""
    raw_case("FusedElementwise", "bcast_add_relu", body, [a, b],
             [like(np.maximum(d(a) + d(b), 0.0), a)])
    a, b = rf(3, 5), rf(3, 5)
    body = """
  %y0: f32[3,5], %y1: f32[3,5] = FusedElementwise(%x0, %x1) body(%p0: f32[3,5], %p1: f32[3,5]) {
    %k: f32[] = const 0.5
    %t0: f32[3,5] = Mul(%p0, %p1)
    %t1: f32[3,5] = Mul(%t0, %k)
    %t2: f32[3,5] = Sigmoid(%t1)
    %t3: f32[3,5] = Sub(%t2, %p0)
    return %t2, %t3
  }
  return %y0, %y1
"""
    sg = 1.0 / (1.0 + np.exp(-(d(a) * d(b) * 0.5)))
    raw_case("FusedElementwise", "two_out_const", body, [a, b],
             [like(sg, a), like(sg - d(a), a)])


def gen_empty():
    # Zero-size tensors, which ONNX allows and kernels must not trip on:
    # Add broadcasting [0,3] with [3]; Slice whose start passes its end;
    # Range of length 0; Concat with an empty input; Reshape allowzero 1
    # keeping a real 0; ReduceSum over an empty axis (zeros); Loop with a
    # trip count of 0 (carried value unchanged, scan output [0,2])
    seed("empty")
    a, b = np.zeros((0, 3), f32), rf(3)
    case("Add", "empty", [a, b], [a + b])
    x = rf(4, 5)
    case("Slice", "empty", [x, C(np.array([3], i64)), C(np.array([1], i64)),
                            C(np.array([0], i64))], [x[3:1]])
    case("Range", "empty", [C(np.array(5, i64)), C(np.array(2, i64)),
                            C(np.array(1, i64))], [np.zeros(0, i64)])
    a, b = rf(2, 3), np.zeros((0, 3), f32)
    case("Concat", "empty_input", [a, b], [a], {"axis": 0})
    x = np.zeros((0, 3), f32)
    case("Reshape", "allowzero_zero", [x, C(np.array([3, 0], i64))],
         [x.reshape(3, 0)], {"allowzero": 1})
    x = np.zeros((2, 0), f32)
    case("ReduceSum", "empty_axis", [x, C(np.array([1], i64))],
         [np.zeros((2, 1), f32)])
    body = """
  %y0: f32[2], %y1: f32[0,2] = Loop(%x0, _, %x1) body(%i: i64[], %cin: bool[], %v: f32[2]) {
    %v2: f32[2] = Neg(%v)
    return %cin, %v2, %v2
  }
  return %y0, %y1
"""
    v = rf(2)
    raw_case("Loop", "zero_trip", body, [np.array(0, i64), v],
             [v, np.zeros((0, 2), f32)])


# --------------------------------------------------------------------------


def ops_from_def():
    names = []
    with open(OPS_DEF) as f:
        for line in f:
            m = re.match(r"\s*OP\(\s*(\w+)\s*,", line)
            if m:
                names.append(m.group(1))
    if not names:
        sys.exit("gen_op_tests.py: no OP( rows in " + OPS_DEF)
    return names


GENERATORS = [
    gen_identity, gen_unary, gen_leakyrelu, gen_not, gen_clip, gen_cast,
    gen_dropout, gen_arith, gen_div, gen_pow, gen_minmax_sum, gen_compare,
    gen_logic, gen_where, gen_matmul, gen_gemm, gen_conv, gen_convtranspose,
    gen_pool, gen_globalpool, gen_batchnorm, gen_layernorm, gen_softmax,
    gen_reduce, gen_argmax, gen_reshape, gen_flatten, gen_squeeze,
    gen_transpose, gen_concat, gen_split, gen_slice, gen_gather, gen_expand,
    gen_tile, gen_pad, gen_shape, gen_constantofshape, gen_range,
    gen_constant, gen_if, gen_loop, gen_empty, gen_fused,
]


def main():
    ops = ops_from_def()
    for gen in GENERATORS:
        gen()
    covered = set()
    for name in CASES:
        op = max((o for o in ops if name.startswith(o + "_")), key=len,
                 default=None)
        if op is None:
            sys.exit("gen_op_tests.py: case %s names no op of ops.def" % name)
        covered.add(op)
    missing = [o for o in ops if o not in covered]
    if missing:  # test_ops' coverage check fails on these
        print("gen_op_tests.py: warning: no cases for " + ", ".join(missing),
              file=sys.stderr)

    if os.path.isdir(OUT_DIR):
        shutil.rmtree(OUT_DIR)
    os.makedirs(OUT_DIR)
    total = 0
    for name in sorted(CASES):
        text, ins, outs = CASES[name]
        cdir = os.path.join(OUT_DIR, name)
        os.makedirs(cdir)
        with open(os.path.join(cdir, "model.ir"), "w") as f:
            f.write(text)
        for kind, arrs in (("input", ins), ("expected", outs)):
            for i, a in enumerate(arrs):
                a = np.array(a, order="C")  # keeps 0-d arrays 0-d
                if a.dtype not in DTYPE_NAMES:
                    sys.exit("%s: %s_%d has dtype %s" % (name, kind, i,
                                                         a.dtype))
                np.save(os.path.join(cdir, "%s_%d.npy" % (kind, i)), a)
        total += 1
    size = sum(os.path.getsize(os.path.join(dp, fn))
               for dp, _, fns in os.walk(OUT_DIR) for fn in fns)
    print("gen_op_tests.py: %d cases for %d ops in %s (%d bytes)" %
          (total, len(ops), os.path.relpath(OUT_DIR, ROOT), size))


if __name__ == "__main__":
    main()
